/* SPDX-License-Identifier: MIT */
/* CRC32C (Castagnoli): guards headers and indexes, and checksums every chunk of data as it is
 * recorded. The CPU's own instruction where there is one (x86 SSE4.2 crc32, the ARMv8 CRC
 * extension), run as three independent streams so that its latency does not bound it, the
 * streams joined by multiplying in GF(2); slicing-by-8 tables otherwise, or when they are
 * faster here (timed once: an emulated CPU runs the instruction far slower than the tables,
 * 146 against 864 MB/s under QEMU's TCG, where real ones run it 8x faster). Combining two CRCs
 * (of A and of B into that of A followed by B) is the same multiplication, which lets a
 * recorder merge neighbouring chunks' checksums without reading the data again. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#endif

#include "nvtape/format.h"
#include "util/crc32c.h"

#define POLY      0x82F63B78u /* reflected Castagnoli polynomial */
#define BLK_BIG   (64u << 10) /* bytes per stream in a three-stream round ... */
#define BLK_SMALL (4u << 10)  /* ... and for what is left after the big rounds */

static uint32_t crc_table[8][256];
static uint32_t x2n_table[32];          /* x^(2^n) mod P */
static uint32_t shift_big, shift_small; /* x^(8 * BLK) mod P */
static uint32_t (*crc_fn)(uint32_t, const uint8_t *, size_t);
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* a * b mod P, both reflected (bit 31 is x^0) */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^(n * 2^k) mod P */
static uint32_t x2nmodp(uint64_t n, unsigned k)
{
	uint32_t p = 1u << 31; /* x^0 */

	while (n) {
		if (n & 1)
			p = multmodp(x2n_table[k & 31], p);
		n >>= 1;
		k++;
	}
	return p;
}

/* Pure computation over a chunk the ring's ordering already hands over whole: not worth
 * ThreadSanitizer's cost per load (it made the I/O thread of a tsan build too slow to keep up
 * with the recordings its tests make). */
#if defined(__SANITIZE_THREAD__)
#define NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define NO_TSAN
#endif

/* the register (no inversions) after more bytes */
static NO_TSAN uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
		      crc_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The three-stream body, for a CPU instruction step8 (8 bytes) and step1 (1 byte). */
#define CRC_HW_BODY(step8, step1)                                                                  \
	while (len && ((uintptr_t)p & 7)) {                                                        \
		crc = step1(crc, *p++);                                                            \
		len--;                                                                             \
	}                                                                                          \
	for (size_t blk = BLK_BIG, k = shift_big; blk >= BLK_SMALL;                                \
	     blk = blk == BLK_BIG ? BLK_SMALL : 0, k = shift_small) {                              \
		while (len >= 3 * blk) {                                                           \
			uint64_t c0 = crc, c1 = 0, c2 = 0;                                         \
			for (size_t i = 0; i < blk; i += 8) {                                      \
				c0 = step8(c0, load64(p + i));                                     \
				c1 = step8(c1, load64(p + blk + i));                               \
				c2 = step8(c2, load64(p + 2 * blk + i));                           \
			}                                                                          \
			crc = multmodp((uint32_t)k, (uint32_t)c0) ^ (uint32_t)c1;                  \
			crc = multmodp((uint32_t)k, crc) ^ (uint32_t)c2;                           \
			p += 3 * blk;                                                              \
			len -= 3 * blk;                                                            \
		}                                                                                  \
	}                                                                                          \
	while (len >= 8) {                                                                         \
		crc = (uint32_t)step8(crc, load64(p));                                             \
		p += 8;                                                                            \
		len -= 8;                                                                          \
	}                                                                                          \
	while (len--)                                                                              \
		crc = step1(crc, *p++);                                                            \
	return crc;

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static NO_TSAN uint32_t crc_hw(uint32_t crc, const uint8_t *p,
								 size_t len)
{
	CRC_HW_BODY(_mm_crc32_u64, _mm_crc32_u8)
}
static int hw_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#elif defined(__aarch64__)
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
__attribute__((target("+crc"))) static NO_TSAN uint32_t crc_hw(uint32_t crc, const uint8_t *p,
							       size_t len)
{
	CRC_HW_BODY(__crc32cd, __crc32cb)
}
static int hw_available(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
/* seconds one implementation takes over a buffer, the best of three */
static double time_crc(uint32_t (*fn)(uint32_t, const uint8_t *, size_t), const uint8_t *buf,
		       size_t len)
{
	double best = 1e9;

	for (int i = 0; i < 3; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		volatile uint32_t sink = fn(0, buf, len);
		(void)sink;
		clock_gettime(CLOCK_MONOTONIC, &b);
		double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		if (t < best)
			best = t;
	}
	return best;
}
#endif

static void crc_init(void)
{
	uint32_t p = 1u << 30; /* x^1 */

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
	x2n_table[0] = p;
	for (int n = 1; n < 32; n++)
		x2n_table[n] = p = multmodp(p, p);
	shift_big = x2nmodp(BLK_BIG, 3);
	shift_small = x2nmodp(BLK_SMALL, 3);
	crc_fn = crc_soft;
#if defined(__x86_64__) || defined(__aarch64__)
	if (hw_available()) {
		static uint8_t probe[192u << 10]; /* 3 x BLK_BIG: every path of the instruction's */
		crc_fn = time_crc(crc_hw, probe, sizeof(probe)) <=
					 time_crc(crc_soft, probe, sizeof(probe))
				 ? crc_hw
				 : crc_soft;
	}
#endif
}

uint32_t nvt_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_fn(~crc, buf, len);
}

uint32_t nvt_crc32c_soft(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_soft(~crc, buf, len);
}

uint32_t nvt_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
	pthread_once(&crc_once, crc_init);
	return multmodp(x2nmodp(len_b, 3), crc_a) ^ crc_b;
}

const char *nvt_crc32c_impl(void)
{
	pthread_once(&crc_once, crc_init);
	if (crc_fn == crc_soft)
		return "table";
#if defined(__x86_64__)
	return "sse4.2";
#else
	return "armv8-crc";
#endif
}
