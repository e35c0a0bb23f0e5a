/* SPDX-License-Identifier: MIT */
/* The rate search of a bench: after the unthrottled run, a coarse sweep from the top of the range
 * down in quarters to the first rate that passes runs of runs, then a bisection between it and
 * the rate above that failed, until they are within the tolerance. Also the worst case of that
 * search (rates, runs, bytes, seconds) for the plan, and the stop at the write budget. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qualify/bench_int.h"

enum { TRY_FAIL = 0, TRY_PASS = 1, TRY_STOP = 2 };

static uint64_t coarse_rate(uint64_t hi, uint64_t lo, unsigned i)
{
	return hi - (hi - lo) / 4 * (uint64_t)i;
}

/* Bisection steps from (pass, fail) in the worst case: every midpoint fails, pass stays. */
static unsigned bisect_steps(uint64_t pass, uint64_t fail, double tol)
{
	unsigned n = 0;

	while (fail - pass > tol * pass) {
		fail = pass + (fail - pass) / 2;
		n++;
	}
	return n;
}

/* One run at rate: its data at that rate (the drive's own when slower), and the check after
 * a recording. */
static double run_seconds(const struct nvt_bench_opts *o, uint64_t rate, double top_bps,
			  double verify_s)
{
	double r = top_bps > 0 && (!rate || rate > top_bps) ? top_bps : (double)rate;
	return (r > 0 ? o->rec.size_bytes / r : 0) + verify_s;
}

struct worst {
	unsigned rates, runs;
	double seconds;
};

/* The worst case over every way the sweep can end: at coarse rate k (then the bisection below
 * the rate above it), or with none passing (as k = 4, without the bisection). Seconds when the
 * unthrottled rate top_bps is known. */
static void worst_case(const struct nvt_bench_opts *o, uint64_t hi, uint64_t lo, double top_bps,
		       double verify_s, struct worst *w)
{
	double t_coarse = 0;

	memset(w, 0, sizeof(*w));
	for (unsigned k = 0; k <= 4; k++) {
		uint64_t r = coarse_rate(hi, lo, k);
		unsigned steps = k ? bisect_steps(r, coarse_rate(hi, lo, k - 1), o->tolerance) : 0;
		double t;
		t_coarse += o->runs * run_seconds(o, r, top_bps, verify_s);
		t = t_coarse + steps * o->runs * run_seconds(o, r, top_bps, verify_s);
		if (k + 1 + steps > w->rates)
			w->rates = k + 1 + steps;
		if (t > w->seconds)
			w->seconds = t;
	}
	w->runs = w->rates * o->runs;
	if (top_bps <= 0)
		w->seconds = 0;
}

/* Runs besides the search: the unthrottled one, and the recording a playback bench plays. */
static unsigned fixed_runs(const struct nvt_bench_opts *o)
{
	return 1 + (o->mode == NVT_BENCH_PLAY);
}

static void plan_bytes(const struct nvt_bench_opts *o, struct nvt_bench_plan *p)
{
	unsigned writing = o->mode == NVT_BENCH_PLAY ? 1 : p->runs_max;
	p->write_bytes = p->runs_max ? (uint64_t)writing * o->rec.size_bytes : 0;
}

void bench_plan_initial(const struct nvt_bench_opts *o, struct nvt_bench_plan *p)
{
	struct worst w;

	memset(p, 0, sizeof(*p));
	p->run_bytes = o->rec.size_bytes;
	p->budget = o->max_write_bytes;
	if (o->no_sweep) {
		p->range_known = true;
		p->runs_max = fixed_runs(o);
	} else if (o->to_bps) {
		p->range_known = true;
		p->to_bps = o->to_bps;
		p->from_bps = o->from_bps ? o->from_bps : o->to_bps / 8;
		worst_case(o, p->to_bps, p->from_bps, 0, 0, &w);
		p->rates_max = w.rates;
		p->runs_max = fixed_runs(o) + w.runs;
	} else if (!o->from_bps) {
		/* an eighth of the top up to the top: the same runs whatever the top */
		worst_case(o, 8000000000ull, 1000000000ull, 0, 0, &w);
		p->rates_max = w.rates;
		p->runs_max = fixed_runs(o) + w.runs;
	}
	plan_bytes(o, p);
}

static int search_range(struct bench *b, uint64_t *hi, uint64_t *lo)
{
	const struct nvt_bench_opts *o = b->o;
	struct nvt_bench_result *res = b->res;

	/* up to a little above what the unthrottled run averaged (the ring absorbs a little
	 * more), down to an eighth of it */
	*hi = o->to_bps ? o->to_bps : (uint64_t)(res->max.mbps * 1e6 * 1.05);
	*lo = o->from_bps ? o->from_bps : *hi / 8;
	if (*hi < 16 || *lo < 16) {
		nvt_err_set(&res->err, EIO, "the unthrottled run moved no data");
		return -EIO;
	}
	if (*lo >= *hi) {
		nvt_err_param(&res->err,
			      "the bottom of the search range (%.1f MB/s) is not below its top "
			      "(%.1f MB/s, from the unthrottled run)",
			      *lo / 1e6, *hi / 1e6);
		return -EINVAL;
	}
	return 0;
}

static void plan_final(struct bench *b, uint64_t hi, uint64_t lo)
{
	struct nvt_bench_plan *p = &b->res->plan;
	const struct nvt_bench_opts *o = b->o;
	struct worst w;

	worst_case(o, hi, lo, b->res->max.mbps * 1e6, o->mode == NVT_BENCH_PLAY ? 0 : b->verify_s,
		   &w);
	p->range_known = true;
	p->from_bps = lo;
	p->to_bps = hi;
	p->rates_max = w.rates;
	p->runs_max = fixed_runs(o) + w.runs;
	p->seconds = w.seconds;
	plan_bytes(o, p);
	if (o->on_plan)
		o->on_plan(p, o->arg);
}

static struct nvt_bench_run *new_run(struct nvt_bench_result *res, uint64_t rate, unsigned index)
{
	struct nvt_bench_run *g, *run;

	if (res->nruns >= SIZE_MAX / sizeof(*g) - 1)
		return NULL;
	g = realloc(res->runs, (res->nruns + 1) * sizeof(*g));
	if (!g)
		return NULL;
	res->runs = g;
	run = &g[res->nruns++];
	memset(run, 0, sizeof(*run));
	run->rate_bps = rate;
	run->index = index;
	return run;
}

/* runs of runs at rate: TRY_PASS all passed, TRY_FAIL one failed (the rest are not run),
 * TRY_STOP the write budget allows no more, or -errno. */
static int try_rate(struct bench *b, uint64_t rate)
{
	for (unsigned i = 1; i <= b->o->runs; i++) {
		struct nvt_bench_run *run;
		int rc;
		if (!bench_may_write(b))
			return TRY_STOP;
		run = new_run(b->res, rate, i);
		if (!run) {
			nvt_err_set(&b->res->err, ENOMEM, "out of memory");
			return -ENOMEM;
		}
		rc = bench_run(b, run);
		if (rc)
			return rc;
		if (bench_interrupted(b)) {
			b->res->interrupted = true;
			return -EINTR;
		}
		if (!run->pass)
			return TRY_FAIL;
	}
	return TRY_PASS;
}

/* Coarse: from the top down in quarters of the range, to the first rate that passes. */
static int sweep(struct bench *b, uint64_t hi, uint64_t lo, uint64_t *pass, uint64_t *fail)
{
	for (unsigned i = 0; i <= 4; i++) {
		uint64_t rate = coarse_rate(hi, lo, i);
		int t = try_rate(b, rate);
		if (t < 0 || t == TRY_STOP)
			return t;
		if (t == TRY_PASS) {
			*pass = rate;
			return 0;
		}
		*fail = rate;
	}
	return 0;
}

/* Between the highest pass and the lowest fail, until they are within the tolerance. */
static int bisect(struct bench *b, uint64_t *pass, uint64_t *fail)
{
	while (*fail && *fail - *pass > b->o->tolerance * *pass) {
		uint64_t mid = *pass + (*fail - *pass) / 2;
		int t = try_rate(b, mid);
		if (t < 0 || t == TRY_STOP)
			return t;
		if (t == TRY_PASS)
			*pass = mid;
		else
			*fail = mid;
	}
	return 0;
}

int bench_search(struct bench *b)
{
	struct nvt_bench_result *res = b->res;
	uint64_t hi, lo, pass = 0, fail = 0;
	int rc = search_range(b, &hi, &lo);

	if (rc)
		return rc;
	plan_final(b, hi, lo);
	rc = sweep(b, hi, lo, &pass, &fail);
	if (!rc && pass) {
		res->limited_by_to = !fail;
		rc = bisect(b, &pass, &fail);
	}
	res->best_bps = pass;
	res->fail_bps = fail;
	res->found = pass != 0;
	if (rc == TRY_STOP) {
		char so_far[96] = "no rate was tried";
		if (pass)
			snprintf(so_far, sizeof(so_far),
				 "the highest rate that passed so far: %.1f MB/s", pass / 1e6);
		else if (fail)
			snprintf(so_far, sizeof(so_far),
				 "no rate passed so far (the lowest that failed: %.1f MB/s)",
				 fail / 1e6);
		bench_notice(b,
			     "the write budget (%.2f GB) leaves no room for another run of %.2f GB "
			     "(%.2f GB written): the search stops here; %s",
			     b->o->max_write_bytes / 1e9, b->o->rec.size_bytes / 1e9,
			     res->bytes_written / 1e9, so_far);
		rc = 0;
	}
	return rc;
}
