/* SPDX-License-Identifier: MIT */
/* Unit tests: burst / cache / sustained from synthetic time series (cliff.c's step fit); the
 * bench's plan against hand-counted worst cases and its write budget on a real run into a file;
 * the speedtest's rates on one clock: the aggregate of two files written and read at once
 * agrees with the per-target rates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "nvtape/bench.h"
#include "nvtape/speedtest.h"

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

static void test_plan(void **state)
{
	/* 500 down to 100 MB/s in quarters; 3 % tolerance. Worst case: 100 passes, 200 failed:
	 * 100 MB/s gap halved until within 3 MB/s: 6 steps, 5 + 6 = 11 rates (200 passing: 4 + 5).
	 * Every rate may take 3 runs, plus the unthrottled one. */
	struct nvt_bench_opts o;
	struct nvt_bench_plan p;
	struct nvt_err err = {0};
	(void)state;
	nvt_bench_opts_default(&o);
	o.from_bps = 100000000;
	o.to_bps = 500000000;
	o.rec.size_bytes = 1000000000;
	assert_int_equal(nvt_bench_plan(&o, &p, &err), 0);
	assert_true(p.range_known);
	assert_int_equal(p.rates_max, 11);
	assert_int_equal(p.runs_max, 1 + 11 * 3);
	assert_int_equal(p.write_bytes, 34ull * 1000000000);
	assert_true(p.seconds == 0);
	/* play: the recording is the only run that writes */
	o.mode = NVT_BENCH_PLAY;
	assert_int_equal(nvt_bench_plan(&o, &p, &err), 0);
	assert_int_equal(p.runs_max, 2 + 11 * 3);
	assert_int_equal(p.write_bytes, 1000000000);
	/* the range from the unthrottled run and a bottom of its own: runs not known yet */
	o.mode = NVT_BENCH_RECORD;
	o.to_bps = 0;
	assert_int_equal(nvt_bench_plan(&o, &p, &err), 0);
	assert_false(p.range_known);
	assert_int_equal(p.runs_max, 0);
	/* no sweep: the unthrottled run alone */
	o.no_sweep = true;
	assert_int_equal(nvt_bench_plan(&o, &p, &err), 0);
	assert_int_equal(p.runs_max, 1);
	assert_int_equal(p.write_bytes, 1000000000);
}

static void test_budget_refused(void **state)
{
	struct nvt_bench_opts o;
	struct nvt_bench_plan p;
	struct nvt_bench_result *r = calloc(1, sizeof(*r));
	struct nvt_err err = {0};
	(void)state;
	assert_non_null(r);
	nvt_bench_opts_default(&o);
	o.rec.path = "never-written.nvt";
	o.rec.size_bytes = 64 << 20;
	o.max_write_bytes = 32 << 20;
	assert_int_equal(nvt_bench_plan(&o, &p, &err), -EINVAL);
	assert_true(err.flags & NVT_ERR_PARAM);
	assert_non_null(strstr(err.msg, "write budget"));
	assert_null(strstr(err.msg, "--"));
	assert_int_equal(nvt_bench(&o, r), -EINVAL);
	assert_true(r->err.flags & NVT_ERR_PARAM);
	assert_int_equal(r->nruns, 0);
	assert_int_equal(r->bytes_written, 0);
	assert_int_equal(access("never-written.nvt", F_OK), -1);
	nvt_bench_result_free(r);
	free(r);
}

struct seen {
	unsigned plans, runs;
	double seconds;
	char notice[512];
};

static void on_plan(const struct nvt_bench_plan *p, void *arg)
{
	struct seen *s = arg;
	s->plans++;
	s->seconds = p->seconds;
}

static void on_run(const struct nvt_bench_run *r, void *arg)
{
	struct seen *s = arg;
	(void)r;
	s->runs++;
}

static void on_notice(const char *msg, void *arg)
{
	struct seen *s = arg;
	if (strstr(msg, "write budget"))
		snprintf(s->notice, sizeof(s->notice), "%s", msg);
}

static char dir[PATH_MAX];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s", "nvt-bench.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_budget_stops(void **state)
{
	/* room for two and a half runs of 8 MiB: the unthrottled run and one run of the sweep
	 * (two must pass at a rate: the first one passing or not, the next is over budget) */
	struct nvt_bench_opts o;
	struct nvt_bench_result *r = calloc(1, sizeof(*r));
	struct seen seen = {0};
	char path[PATH_MAX + 16];
	(void)state;
	assert_non_null(r);
	snprintf(path, sizeof(path), "%s/b.nvt", dir);
	nvt_bench_opts_default(&o);
	o.rec.path = path;
	o.rec.size_bytes = 8 << 20;
	o.rec.chunk_bytes = 1 << 20;
	o.rec.chunks = 4;
	o.rec.qd = 2;
	o.runs = 2;
	o.max_write_bytes = 20 << 20;
	o.on_plan = on_plan;
	o.on_run = on_run;
	o.notice = on_notice;
	o.arg = &seen;
	assert_int_equal(nvt_bench(&o, r), 0);
	assert_true(r->budget_stop);
	assert_int_equal(r->nruns, 1);
	assert_int_equal(seen.runs, 2);
	assert_int_equal(r->bytes_written, 16 << 20);
	assert_true(r->bytes_written <= o.max_write_bytes);
	assert_int_equal(seen.plans, 2);
	assert_true(seen.seconds > 0);
	assert_non_null(strstr(seen.notice, "the search stops"));
	assert_true(r->found == (r->best_bps != 0));
	nvt_bench_result_free(r);
	free(r);
}

static void test_aggregate_sum(void **state)
{
	/* 100 MB over 1 s and 300 MB over 2 s, overlapping for 1 s: 400 MB over 2.5 s; a target
	 * that did not run counts for nothing */
	struct nvt_speed_target t[3] = {0};
	double mbps, s;
	(void)state;
	t[0] = (struct nvt_speed_target){.wrote = true,
					 .write_bytes = 100000000,
					 .write_t0_ns = 1000000000,
					 .write_t1_ns = 2000000000};
	t[1] = (struct nvt_speed_target){.wrote = true,
					 .write_bytes = 300000000,
					 .write_t0_ns = 1500000000,
					 .write_t1_ns = 3500000000};
	t[2] = (struct nvt_speed_target){.write_bytes = 999, .write_t0_ns = 1, .write_t1_ns = 9};
	nvt_speed_aggregate(t, 3, true, &mbps, &s);
	assert_true(s > 2.4999 && s < 2.5001);
	assert_true(mbps > 159.99 && mbps < 160.01);
	nvt_speed_aggregate(t, 3, false, &mbps, &s);
	assert_true(mbps == 0 && s == 0);
}

/* The aggregate of a phase against its targets: >= every target's rate x its share of the
 * aggregate interval, and, the targets running at once (the aggregate interval no longer than
 * theirs together), never below the slowest alone. */
static void check_phase(const struct nvt_speedtest_result *r, bool write)
{
	double agg = write ? r->agg_write_mbps : r->agg_read_mbps;
	double agg_s = write ? r->agg_write_s : r->agg_read_s, slowest = INFINITY, sum_s = 0;

	assert_true(agg > 0 && agg_s > 0);
	for (unsigned i = 0; i < r->n; i++) {
		const struct nvt_speed_target *t = &r->t[i];
		double mbps = write ? t->write_mbps : t->read_mbps;
		double s = write ? t->write_s : t->read_s;
		print_message("%s %s: %.1f MB/s over %.3f s (all: %.1f MB/s over %.3f s)\n",
			      t->path, write ? "write" : "read", mbps, s, agg, agg_s);
		assert_true(mbps > 0 && s > 0);
		assert_true(s <= agg_s * 1.000001);
		assert_true(agg >= mbps * s / agg_s * 0.999999);
		if (mbps < slowest)
			slowest = mbps;
		sum_s += s;
	}
	if (agg_s <= sum_s)
		assert_true(agg >= slowest * 0.999999);
	else
		print_message("the targets did not run at once: %.3f s apart\n", agg_s - sum_s);
}

static void test_speedtest_one_clock(void **state)
{
	struct nvt_speedtest_opts o;
	struct nvt_speedtest_result *r = calloc(1, sizeof(*r));
	char a[PATH_MAX + 16], b[PATH_MAX + 16];
	(void)state;
	assert_non_null(r);
	snprintf(a, sizeof(a), "%s/a.nvt", dir);
	snprintf(b, sizeof(b), "%s/b.nvt", dir);
	nvt_speedtest_opts_default(&o);
	o.ntargets = 2;
	o.target[0] = a;
	o.target[1] = b;
	o.size_bytes = 128 << 20;
	o.chunk_bytes = 1 << 20;
	o.chunks = 8;
	o.qd = 4;
	assert_int_equal(nvt_speedtest(&o, r), 0);
	assert_int_equal(r->failed, 0);
	assert_int_equal(r->problems, 0);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(r->t[i].write_bytes, 128 << 20);
		assert_int_equal(r->t[i].read_bytes, 128 << 20);
		assert_true(r->t[i].write_t1_ns > r->t[i].write_t0_ns);
	}
	check_phase(r, true);
	check_phase(r, false);
	nvt_speedtest_result_free(r);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cliff),
		cmocka_unit_test(test_cliff_short_last_interval),
		cmocka_unit_test(test_flat),
		cmocka_unit_test(test_cliff_at_the_end),
		cmocka_unit_test(test_too_short),
		cmocka_unit_test(test_still_changing),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_budget_refused),
		cmocka_unit_test_setup_teardown(test_budget_stops, dir_setup, dir_teardown),
		cmocka_unit_test(test_aggregate_sum),
		cmocka_unit_test_setup_teardown(test_speedtest_one_clock, dir_setup, dir_teardown)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
