/* SPDX-License-Identifier: MIT */
/* bench reference: single-core memset bandwidth over a buffer the size of nvtape's default
 * ring (32 x 8 MiB), the in-memory ceiling the null engine is compared with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv)
{
	size_t len = 256u << 20;
	double secs = argc > 1 ? atof(argv[1]) : 3.0, t0, t;
	unsigned char *buf =
		mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec ts;
	unsigned long long bytes = 0;
	int pass = 0;

	if (buf == MAP_FAILED)
		return 1;
	madvise(buf, len, MADV_HUGEPAGE);
	memset(buf, 1, len);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	do {
		memset(buf, pass++ & 0xff, len);
		__asm__ volatile("" : : "r"(buf) : "memory");
		bytes += len;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = ts.tv_sec + ts.tv_nsec / 1e9;
	} while (t - t0 < secs);
	printf("memset_mbps=%.1f\n", bytes / (t - t0) / 1e6);
	return 0;
}
