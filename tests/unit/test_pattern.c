/* SPDX-License-Identifier: MIT */
/* Unit tests: the pattern checker finds gaps, corrupt beats and backward jumps at the right
 * beat and offset, on both its fast and slow paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvtape/pattern.h"

struct seen {
	struct nvt_check_event ev[16];
	int n;
};

static void collect(void *arg, const struct nvt_check_event *e)
{
	struct seen *s = arg;
	if (s->n < 16)
		s->ev[s->n++] = *e;
}

static void test_clean(void **state)
{
	uint64_t *buf = malloc(1 << 20);
	struct seen s = {0};
	struct nvt_checker c = {.on_event = collect, .arg = &s};
	(void)state;
	nvt_pattern_fill(buf, 100, (1 << 20) / 16);
	nvt_checker_init(&c, 100);
	nvt_checker_feed(&c, buf, 1 << 19, 4096);
	nvt_checker_feed(&c, (uint8_t *)buf + (1 << 19), 1 << 19, 4096 + (1 << 19));
	assert_int_equal(c.beats, (1 << 20) / 16);
	assert_int_equal(c.gaps + c.corrupt + c.backward, 0);
	assert_int_equal(c.first_seen, 100);
	assert_int_equal(c.last_seen, 100 + (1 << 20) / 16 - 1);
	assert_int_equal(s.n, 0);
	free(buf);
}

static void test_gap_corrupt_backward(void **state)
{
	const uint64_t beats = 10000;
	uint64_t *buf = malloc(beats * 16);
	struct seen s = {0};
	struct nvt_checker c = {.on_event = collect, .arg = &s};
	(void)state;
	/* beats 0..4999 = seq 0..4999; 5000.. = seq 5100..: a gap of 100 at beat 5000 */
	nvt_pattern_fill(buf, 0, 5000);
	nvt_pattern_fill(buf + 2 * 5000, 5100, beats - 5000);
	buf[2 * 7000 + 1] ^= 0x10;                 /* corrupt beat 7000 */
	nvt_pattern_fill(buf + 2 * 9000, 9000, 1); /* backward: seq 9000 where 9100 is due */
	nvt_pattern_fill(buf + 2 * 9001, 9101, beats - 9001);
	nvt_checker_init(&c, 0);
	nvt_checker_feed(&c, buf, beats * 16, 4096);
	assert_int_equal(c.gaps, 2); /* 5000 (100 beats) and 9001 (9001 -> 9101) */
	assert_int_equal(c.gap_beats, 100 + 100);
	assert_int_equal(c.corrupt, 1);
	assert_int_equal(c.backward, 1);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.ev[0].kind, NVT_CHK_GAP);
	assert_int_equal(s.ev[0].beat, 5000);
	assert_int_equal(s.ev[0].offset, 4096 + 5000 * 16);
	assert_int_equal(s.ev[0].expected, 5000);
	assert_int_equal(s.ev[0].missing, 100);
	assert_int_equal(s.ev[1].kind, NVT_CHK_CORRUPT);
	assert_int_equal(s.ev[1].beat, 7000);
	assert_int_equal(s.ev[1].offset, 4096 + 7000 * 16);
	assert_int_equal(s.ev[2].kind, NVT_CHK_BACKWARD);
	assert_int_equal(s.ev[2].beat, 9000);
	assert_int_equal(s.ev[3].kind, NVT_CHK_GAP);
	assert_int_equal(s.ev[3].beat, 9001);
	free(buf);
}

/* the vector fill must equal the definition for every length, alignment and seq (also across
 * the 64-bit wrap) */
static void test_fill_matches_definition(void **state)
{
	uint64_t *buf = aligned_alloc(64, 300 * 16 + 64);
	const uint64_t seqs[] = {0, 12345, UINT64_MAX - 150};
	(void)state;
	for (unsigned si = 0; si < 3; si++)
		for (unsigned off = 0; off < 2; off++)
			for (uint64_t n = 0; n <= 300; n++) {
				uint64_t *p = buf + 2 * off;
				nvt_pattern_fill(p, seqs[si], n);
				for (uint64_t i = 0; i < n; i++) {
					assert_int_equal(p[2 * i], seqs[si] + i);
					assert_int_equal(p[2 * i + 1], ~(seqs[si] + i));
				}
			}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_gap_corrupt_backward),
		cmocka_unit_test(test_fill_matches_definition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
