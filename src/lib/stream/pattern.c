/* SPDX-License-Identifier: MIT */
/* Test-pattern generation and checking. The generator writes with non-temporal stores on
 * x86-64: the chunk goes to a drive by DMA, so filling the CPU cache with it (and reading every
 * line for ownership first) only halves the fill rate. The checker's fast path compares whole
 * 4 KiB blocks with a branch-free loop the compiler vectorizes; only a block with a mismatch is
 * walked beat by beat. */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "nvtape/pattern.h"

void nvt_pattern_fill(void *buf, uint64_t seq, uint64_t beats)
{
	uint64_t *p = buf;

#if defined(__x86_64__)
	if (beats >= 64 && ((uintptr_t)buf & 15) == 0) {
		/* one beat is one 128-bit lane pair {seq, ~seq}; the next is {seq + 1, ~seq - 1} */
		__m128i v = _mm_set_epi64x((long long)~seq, (long long)seq);
		const __m128i inc = _mm_set_epi64x(-1, 1), inc4 = _mm_set_epi64x(-4, 4);
		__m128i v1 = _mm_add_epi64(v, inc), v2 = _mm_add_epi64(v1, inc);
		__m128i v3 = _mm_add_epi64(v2, inc);
		__m128i *q = buf;
		uint64_t i = 0;
		for (; i + 4 <= beats; i += 4) {
			_mm_stream_si128(q + i, v);
			_mm_stream_si128(q + i + 1, v1);
			_mm_stream_si128(q + i + 2, v2);
			_mm_stream_si128(q + i + 3, v3);
			v = _mm_add_epi64(v, inc4);
			v1 = _mm_add_epi64(v1, inc4);
			v2 = _mm_add_epi64(v2, inc4);
			v3 = _mm_add_epi64(v3, inc4);
		}
		_mm_sfence(); /* streamed stores are visible before the chunk is published */
		p += 2 * i;
		seq += i;
		beats -= i;
	}
#endif
	for (uint64_t i = 0; i < beats; i++) {
		p[2 * i] = seq + i;
		p[2 * i + 1] = ~(seq + i);
	}
}

void nvt_checker_init(struct nvt_checker *c, uint64_t first_seq)
{
	void (*cb)(void *, const struct nvt_check_event *) = c->on_event;
	void *arg = c->arg;

	memset(c, 0, sizeof(*c));
	c->expected = first_seq;
	c->on_event = cb;
	c->arg = arg;
}

static void report(struct nvt_checker *c, enum nvt_check_kind kind, uint64_t offset, uint64_t lo,
		   uint64_t hi)
{
	struct nvt_check_event ev = {.kind = kind,
				     .beat = c->beats,
				     .offset = offset,
				     .expected = c->expected,
				     .lo = lo,
				     .hi = hi,
				     .missing = kind == NVT_CHK_GAP ? lo - c->expected : 0};
	if (c->on_event)
		c->on_event(c->arg, &ev);
}

static void check_slow(struct nvt_checker *c, const uint64_t *p, uint64_t beats, uint64_t offset)
{
	for (uint64_t i = 0; i < beats; i++, offset += 16) {
		uint64_t lo = p[2 * i], hi = p[2 * i + 1];
		if (hi != ~lo) {
			c->corrupt++;
			report(c, NVT_CHK_CORRUPT, offset, lo, hi);
			c->expected++; /* lo is not to be trusted: assume the expected beat */
		} else {
			if (lo > c->expected) {
				c->gaps++;
				c->gap_beats += lo - c->expected;
				report(c, NVT_CHK_GAP, offset, lo, hi);
			} else if (lo < c->expected) {
				c->backward++;
				report(c, NVT_CHK_BACKWARD, offset, lo, hi);
			}
			if (!c->seen_good) {
				c->seen_good = true;
				c->first_seen = lo;
			}
			c->last_seen = lo;
			c->expected = lo + 1;
		}
		c->beats++;
	}
}

void nvt_checker_feed(struct nvt_checker *c, const void *buf, uint64_t bytes, uint64_t offset)
{
	const uint64_t *p = buf;
	uint64_t beats = bytes / 16;
	const uint64_t block = 256;

	while (beats) {
		uint64_t n = beats < block ? beats : block;
		uint64_t e = c->expected, diff = 0;
		for (uint64_t i = 0; i < n; i++)
			diff |= (p[2 * i] ^ (e + i)) | (p[2 * i + 1] ^ ~(e + i));
		if (diff) {
			check_slow(c, p, n, offset);
		} else {
			if (!c->seen_good) {
				c->seen_good = true;
				c->first_seen = e;
			}
			c->last_seen = e + n - 1;
			c->expected = e + n;
			c->beats += n;
		}
		p += 2 * n;
		beats -= n;
		offset += n * 16;
	}
}
