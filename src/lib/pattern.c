/* Test-pattern generation and checking. The checker's fast path compares whole 4 KiB blocks
 * with a branch-free loop the compiler vectorizes; only a block with a mismatch is walked
 * beat by beat. */
#include <string.h>

#include "nvtape/pattern.h"

void nvt_pattern_fill(void *buf, uint64_t seq, uint64_t beats)
{
	uint64_t *p = buf;

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
