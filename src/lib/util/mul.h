/* SPDX-License-Identifier: MIT */
/* Exact comparison of two products of 64-bit counts and unit sizes (beats x 16 against bytes x
 * 1, records x stride against drops x unit): the 128-bit products in 32-bit limbs, so that no
 * count read from a damaged header can wrap or saturate into a false match, on any target. */
#ifndef NVT_UTIL_MUL_H
#define NVT_UTIL_MUL_H

#include <stdint.h>

static inline void nvt_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);

	*lo = (p00 & 0xffffffffu) | mid << 32;
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* a * u against b * v: -1, 0 or 1 */
static inline int nvt_mul_cmp(uint64_t a, uint64_t u, uint64_t b, uint64_t v)
{
	uint64_t h1, l1, h2, l2;

	nvt_mul128(a, u, &h1, &l1);
	nvt_mul128(b, v, &h2, &l2);
	if (h1 != h2)
		return h1 < h2 ? -1 : 1;
	return l1 < l2 ? -1 : l1 > l2;
}

#endif
