/* SPDX-License-Identifier: MIT */
/* Unit tests: burst / cache / sustained from synthetic time series (bench.c's step fit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvtape/bench.h"

/* A series sampled every 100 ms: rate1 (bytes/s) for t1 seconds, then rate2 for t2, with a
 * deterministic +-jitter (fraction) per interval. */
static struct nvt_series make(double rate1, double t1, double rate2, double t2, double jitter)
{
	struct nvt_series s = {0};
	struct nvt_sample smp = {0};
	unsigned n1 = (unsigned)(t1 * 10 + 0.5), n2 = (unsigned)(t2 * 10 + 0.5);
	uint64_t bytes = 0;

	nvt_series_add(&s, &smp);
	for (unsigned i = 0; i < n1 + n2; i++) {
		double r = i < n1 ? rate1 : rate2;
		double j = ((int)((i * 7919) % 11) - 5) / 5.0 * jitter;
		bytes += (uint64_t)(r * (1 + j) / 10);
		smp.t_ns = (uint64_t)(i + 1) * 100000000ull;
		smp.bytes = bytes;
		nvt_series_add(&s, &smp);
	}
	return s;
}

static void test_cliff(void **state)
{
	/* 2 GB/s for 1.5 s (3 GB of cache), then 500 MB/s for 6 s */
	struct nvt_series s = make(2e9, 1.5, 5e8, 6, 0.1);
	struct nvt_cliff c;
	(void)state;
	nvt_cliff_analyze(&s, &c);
	assert_true(c.found);
	assert_true(c.steady);
	assert_true(c.cliff_bytes > 2.85e9 && c.cliff_bytes < 3.15e9);
	assert_true(c.burst_bps > 1.9e9 && c.burst_bps < 2.1e9);
	assert_true(c.sustained_bps > 4.75e8 && c.sustained_bps < 5.25e8);
	assert_true(c.cliff_s > 1.4 && c.cliff_s < 1.6);
	assert_string_equal(c.warning, "");
	nvt_series_free(&s);
}

static void test_cliff_short_last_interval(void **state)
{
	/* seen on a throttled loop device: the last progress interval moved nothing, then the run
	 * ended 10 ms later with 8 MB more: alone that interval reads as 800 MB/s */
	struct nvt_series s = make(2e8, 1.5, 5e7, 6, 0.3);
	struct nvt_sample end = s.s[s.n - 1];
	struct nvt_cliff c;
	(void)state;
	end.t_ns += 100000000ull;
	nvt_series_add(&s, &end);
	end.t_ns += 10000000ull;
	end.bytes += 8000000;
	nvt_series_add(&s, &end);
	nvt_cliff_analyze(&s, &c);
	assert_true(c.found);
	assert_true(c.cliff_bytes > 2.85e8 && c.cliff_bytes < 3.15e8);
	assert_true(c.sustained_bps > 4.5e7 && c.sustained_bps < 5.5e7);
	nvt_series_free(&s);
}

static void test_flat(void **state)
{
	struct nvt_series s = make(1e9, 5, 1e9, 0, 0.15);
	struct nvt_cliff c;
	(void)state;
	nvt_cliff_analyze(&s, &c);
	assert_false(c.found);
	assert_true(c.steady);
	assert_true(c.avg_bps > 0.95e9 && c.avg_bps < 1.05e9);
	assert_string_equal(c.warning, "");
	nvt_series_free(&s);
}

static void test_cliff_at_the_end(void **state)
{
	/* the cache fills 0.5 s before the run ends: found, but not a steady state */
	struct nvt_series s = make(2e9, 4, 4e8, 0.5, 0.05);
	struct nvt_cliff c;
	(void)state;
	nvt_cliff_analyze(&s, &c);
	assert_true(c.found);
	assert_false(c.steady);
	assert_non_null(strstr(c.warning, "after the cache cliff"));
	nvt_series_free(&s);
}

static void test_too_short(void **state)
{
	struct nvt_series s = make(1e9, 0.4, 1e9, 0, 0);
	struct nvt_cliff c;
	(void)state;
	nvt_cliff_analyze(&s, &c);
	assert_false(c.found);
	assert_false(c.steady);
	assert_non_null(strstr(c.warning, "too short"));
	nvt_series_free(&s);
}

static void test_still_changing(void **state)
{
	/* the rate climbs through the run (a drive waking up): no cliff, no steady state */
	struct nvt_series s = {0};
	struct nvt_sample smp = {0};
	struct nvt_cliff c;
	(void)state;
	nvt_series_add(&s, &smp);
	for (unsigned i = 1; i <= 40; i++) {
		smp.t_ns = i * 100000000ull;
		smp.bytes += (uint64_t)(i * 5e6);
		nvt_series_add(&s, &smp);
	}
	nvt_cliff_analyze(&s, &c);
	assert_false(c.found);
	assert_false(c.steady);
	assert_non_null(strstr(c.warning, "still changing"));
	nvt_series_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cliff),     cmocka_unit_test(test_cliff_short_last_interval),
		cmocka_unit_test(test_flat),      cmocka_unit_test(test_cliff_at_the_end),
		cmocka_unit_test(test_too_short), cmocka_unit_test(test_still_changing)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
