/* SPDX-License-Identifier: MIT */
/* bench reference: one core's speed at checksumming ring chunks, for choosing the per-chunk
 * checksum: nvtape's CRC32C (nvt_crc32c: the CPU's instruction, three streams) against XXH3-64
 * and XXH64 from libxxhash, over a ring the size of nvtape's default (32 x 8 MiB), side by side
 * in alternating rounds; prints the median GB/s of each.
 * Build: gcc -O2 -Iinclude bench/checksum_speed.c -Lbuild -lnvtape -lxxhash */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <xxhash.h>

#include "nvtape/format.h"

#define CHUNK  (8u << 20)
#define CHUNKS 32u
#define ROUNDS 7

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static uint64_t sink;

static double run(int algo, const uint8_t *ring, unsigned passes)
{
	double t0 = now();
	for (unsigned p = 0; p < passes; p++)
		for (unsigned c = 0; c < CHUNKS; c++) {
			const uint8_t *b = ring + (size_t)c * CHUNK;
			sink += algo == 0   ? nvt_crc32c(0, b, CHUNK)
				: algo == 1 ? XXH3_64bits(b, CHUNK)
					    : XXH64(b, CHUNK, 0);
		}
	return (double)passes * CHUNKS * CHUNK / 1e9 / (now() - t0);
}

int main(int argc, char **argv)
{
	unsigned passes = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	const char *name[3] = {"crc32c (nvtape)", "xxh3-64", "xxh64"};
	double gbps[3][ROUNDS];
	uint8_t *ring = mmap(NULL, (size_t)CHUNKS * CHUNK, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ring == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < (size_t)CHUNKS * CHUNK; i += 8) {
		uint64_t v = i * 0x9E3779B97F4A7C15ull;
		memcpy(ring + i, &v, 8);
	}
	for (int r = 0; r < ROUNDS; r++)
		for (int a = 0; a < 3; a++)
			gbps[a][(r + a) % ROUNDS] = run(a, ring, passes);
	for (int a = 0; a < 3; a++) {
		qsort(gbps[a], ROUNDS, sizeof(double), cmp);
		printf("%-16s median %6.2f GB/s per core (min %.2f, max %.2f, %d rounds)\n",
		       name[a], gbps[a][ROUNDS / 2], gbps[a][0], gbps[a][ROUNDS - 1], ROUNDS);
	}
	return sink == 42;
}
