/* SPDX-License-Identifier: MIT */
/* Unit tests: counter-check specifications parse, print and refuse as documented; the check
 * finds gaps, backward jumps and bad values at the right record and offset for every width and
 * byte order, across wraps and with counters straddling two buffers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvtape/counter.h"

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

static void put(uint8_t *p, const struct nvt_counter_spec *s, uint64_t v)
{
	for (unsigned i = 0; i < s->width; i++) {
		unsigned shift = 8 * (s->big_endian ? s->width - 1 - i : i);
		p[s->offset + i] = (uint8_t)(v >> shift);
	}
}

/* n records, record i carrying values[i], fed in pieces of `piece` bytes from file offset 4096 */
static void run(const char *spec, const uint64_t *values, unsigned n, unsigned piece,
		struct nvt_counter_check *c, struct seen *s)
{
	struct nvt_counter_spec sp;
	struct nvt_err err = {0};
	uint8_t *buf;

	assert_int_equal(nvt_counter_parse(spec, &sp, &err), 0);
	buf = calloc(n, sp.stride);
	assert_non_null(buf);
	for (unsigned i = 0; i < n; i++) {
		memset(buf + (size_t)i * sp.stride, 0xa5, sp.stride);
		put(buf + (size_t)i * sp.stride, &sp, values[i]);
	}
	memset(s, 0, sizeof(*s));
	c->counts.on_event = collect;
	c->counts.arg = s;
	nvt_counter_check_init(c, &sp);
	for (uint64_t at = 0; at < (uint64_t)n * sp.stride; at += piece) {
		uint64_t k =
			(uint64_t)n * sp.stride - at < piece ? (uint64_t)n * sp.stride - at : piece;
		nvt_counter_check_feed(c, buf + at, k, 4096 + at);
	}
	free(buf);
}

static void test_parse(void **state)
{
	struct nvt_counter_spec s;
	struct nvt_err err = {0};
	char txt[NVT_CHECK_SPEC_MAX];
	(void)state;
	assert_int_equal(nvt_counter_parse("counter:u32le@0/4096", &s, &err), 0);
	assert_int_equal(s.width, 4);
	assert_false(s.big_endian);
	assert_int_equal(s.stride, 4096);
	assert_int_equal(s.inc, 1);
	assert_true(s.wrap == 1ull << 32);
	nvt_counter_format(&s, txt, sizeof(txt));
	assert_string_equal(txt, "counter:u32le@0/4096");
	assert_int_equal(nvt_counter_parse("counter:u16be@6", &s, &err), 0);
	assert_int_equal(s.stride, 8);
	assert_int_equal(nvt_counter_parse("counter:u64be@8/0x2000+4%1000000", &s, &err), 0);
	assert_int_equal(s.stride, 8192);
	assert_int_equal(s.inc, 4);
	assert_int_equal(s.wrap, 1000000);
	nvt_counter_format(&s, txt, sizeof(txt));
	assert_string_equal(txt, "counter:u64be@8/8192+4%1000000");
	assert_int_equal(nvt_counter_parse(txt, &s, &err), 0);
	assert_int_equal(nvt_counter_parse("counter:u64le", &s, &err), 0);
	assert_int_equal(s.wrap, 0);
	const char *bad[] = {"counter:",
			     "counter:u32",
			     "counter:u24le",
			     "counter:u32le@",
			     "counter:u32le/0",
			     "counter:u32le@4/6",
			     "counter:u8%257",
			     "counter:u8%1",
			     "counter:u8+0",
			     "counter:u8%10+20",
			     "counter:u32le/4096x",
			     "crc:x",
			     "counter:u32le@-1",
			     "counter:u32le/99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nvt_err_clear(&err);
		assert_int_equal(nvt_counter_parse(bad[i], &s, &err), -EINVAL);
		assert_true(err.msg[0] != 0);
	}
}

/* every width and byte order: clean, then a gap, a backward jump, across the type's wrap */
static void test_widths(void **state)
{
	const char *specs[] = {"counter:u8/16",      "counter:u16le@2/16",  "counter:u16be@14/16",
			       "counter:u32le@4/64", "counter:u32be@60/64", "counter:u64le@8/32",
			       "counter:u64be@24/32"};
	struct nvt_counter_check c;
	struct seen s;
	(void)state;
	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		struct nvt_counter_spec sp;
		struct nvt_err err = {0};
		uint64_t v[64];
		assert_int_equal(nvt_counter_parse(specs[k], &sp, &err), 0);
		uint64_t top = sp.wrap ? sp.wrap - 1 : UINT64_MAX;
		for (unsigned i = 0; i < 64; i++) /* wraps after record 20 */
			v[i] = top - 20 + i;
		if (sp.wrap)
			for (unsigned i = 21; i < 64; i++)
				v[i] = i - 21;
		for (unsigned piece = 7; piece <= 4096; piece *= 9) {
			run(specs[k], v, 64, piece, &c, &s);
			assert_int_equal(c.counts.beats, 64);
			assert_int_equal(s.n, 0);
		}
		uint64_t w[64];
		memcpy(w, v, sizeof(w));
		for (unsigned i = 30; i < 64; i++) /* 5 records missing at record 30 */
			w[i] = v[i] + 5;
		w[50] = w[49]; /* and a repeat at 50: back one, then a record missing after it */
		run(specs[k], w, 64, 5, &c, &s);
		assert_int_equal(c.counts.gaps, 2);
		assert_int_equal(c.counts.gap_beats, 6);
		assert_int_equal(c.counts.backward, 1);
		assert_int_equal(s.n, 3); /* the gap, the repeat, and the jump back up after it */
		assert_int_equal(s.ev[0].kind, NVT_CHK_GAP);
		assert_int_equal(s.ev[0].beat, 30);
		assert_int_equal(s.ev[0].offset, 4096 + 30 * sp.stride);
		assert_int_equal(s.ev[0].missing, 5);
		assert_int_equal(s.ev[1].kind, NVT_CHK_BACKWARD);
		assert_int_equal(s.ev[1].beat, 50);
		assert_int_equal(s.ev[2].kind, NVT_CHK_GAP);
		assert_int_equal(s.ev[2].beat, 51);
		assert_int_equal(s.ev[2].missing, 1);
	}
}

/* a step of 4 wrapping at 1000 (a frame number within a second, say): clean across the wrap;
 * a value at or above the wrap is bad; a jump by other than whole steps is out of step */
static void test_step_and_wrap(void **state)
{
	struct nvt_counter_check c;
	struct seen s;
	uint64_t v[40];
	(void)state;
	for (unsigned i = 0; i < 40; i++)
		v[i] = (960 + 4 * i) % 1000;
	run("counter:u32le@0/64+4%1000", v, 40, 64, &c, &s);
	assert_int_equal(s.n, 0);
	assert_int_equal(c.counts.first_seen, 960);
	assert_int_equal(c.counts.last_seen, (960 + 4 * 39) % 1000);
	v[5] = 1000;                       /* bad */
	v[20] = v[20] + 8;                 /* 2 steps ahead: a gap of 2 records ... */
	for (unsigned i = 21; i < 40; i++) /* ... that the rest keep */
		v[i] = (v[i] + 8) % 1000;
	v[30] = (v[30] + 1) % 1000; /* out of step, and back from it at 31 */
	run("counter:u32le@0/64+4%1000", v, 40, 64, &c, &s);
	assert_int_equal(c.counts.corrupt, 1);
	assert_int_equal(c.counts.gaps, 1);
	assert_int_equal(c.counts.gap_beats, 2);
	assert_int_equal(c.counts.backward, 2);
	assert_int_equal(s.ev[0].kind, NVT_CHK_CORRUPT);
	assert_int_equal(s.ev[0].beat, 5);
	assert_int_equal(s.ev[1].kind, NVT_CHK_GAP);
	assert_int_equal(s.ev[1].beat, 20);
	assert_int_equal(s.ev[1].missing, 2);
	assert_int_equal(s.ev[2].kind, NVT_CHK_BACKWARD);
	assert_int_equal(s.ev[2].beat, 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_widths),
		cmocka_unit_test(test_step_and_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
