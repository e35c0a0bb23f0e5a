/* SPDX-License-Identifier: MIT */
/* Drive qualification. An unthrottled run gives the burst rate, the cache size and the
 * sustained rate (a two-level step fitted to its time series); then a coarse sweep from the top
 * of the range down to the first rate that passes runs of runs, and a bisection between it and
 * the rate above that failed. A record run passes with zero drops and a clean verify; a play
 * run with zero underflows and a clean checker. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/exit_compat.h"
#include "nvtape/bench.h"
#include "nvtape/verify.h"

int nvt_series_add(struct nvt_series *ser, const struct nvt_sample *smp)
{
	if (ser->n == ser->cap) {
		size_t cap = ser->cap ? ser->cap * 2 : 256;
		struct nvt_sample *s = realloc(ser->s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		ser->s = s;
		ser->cap = cap;
	}
	ser->s[ser->n++] = *smp;
	return 0;
}

void nvt_series_add_record(struct nvt_series *ser, const struct nvt_record_stats *st)
{
	struct nvt_sample smp = {.t_ns = st->elapsed_ns,
				 .bytes = st->bytes_written,
				 .ring_fill = st->ring_fill,
				 .drops = st->drops};
	ser->ring_chunks = st->ring_chunks;
	if (nvt_series_add(ser, &smp)) {
		/* out of memory: the series stays shorter, the run itself goes on */
	}
}

void nvt_series_free(struct nvt_series *ser)
{
	free(ser->s);
	memset(ser, 0, sizeof(*ser));
}

/* Rates between consecutive samples; the step fit runs on these. A cliff is a split into two
 * levels, each at least 3 intervals long, where the first level is >= 1.3x the second and the
 * split explains at least half of the variance: a cache that fills, not jitter. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* in, with every interval shorter than half the usual sampling interval merged into the one
 * before it: the last sample of a run comes when the run ends, often milliseconds after the
 * one before, and the bytes that completed in between would read as a huge rate. */
static int regular(const struct nvt_series *in, struct nvt_series *out)
{
	uint64_t *dt = in->n > 1 ? malloc((in->n - 1) * sizeof(*dt)) : NULL, min;

	memset(out, 0, sizeof(*out));
	if (in->n < 2 || !dt) {
		free(dt);
		return in->n < 2 ? 0 : -ENOMEM;
	}
	for (size_t i = 1; i < in->n; i++)
		dt[i - 1] = in->s[i].t_ns - in->s[i - 1].t_ns;
	qsort(dt, in->n - 1, sizeof(*dt), cmp_u64);
	min = dt[(in->n - 1) / 2] / 2;
	free(dt);
	for (size_t i = 0; i < in->n; i++) {
		bool last = i == in->n - 1;
		if (out->n && in->s[i].t_ns - out->s[out->n - 1].t_ns < min) {
			if (!last)
				continue;
			if (out->n > 1) {
				out->s[out->n - 1] =
					in->s[i]; /* the run's end closes the interval */
				continue;
			}
		}
		if (nvt_series_add(out, &in->s[i]))
			return -ENOMEM;
	}
	return 0;
}

void nvt_cliff_analyze(const struct nvt_series *in, struct nvt_cliff *c)
{
	struct nvt_series reg, *ser = &reg;
	int oom = regular(in, &reg);
	size_t m = ser->n > 1 ? ser->n - 1 : 0;
	double *r = m ? calloc(m, sizeof(*r)) : NULL;
	const struct nvt_sample *s = ser->s;
	double total_s, best = INFINITY, sse_all = 0, mean_all = 0;
	size_t k_best = 0;

	memset(c, 0, sizeof(*c));
	if (ser->n < 2 || !r || oom) {
		free(r);
		nvt_series_free(&reg);
		snprintf(c->warning, sizeof(c->warning),
			 "too few samples to see how the rate develops: run longer (--size)");
		return;
	}
	total_s = (s[ser->n - 1].t_ns - s[0].t_ns) / 1e9;
	c->avg_bps = total_s > 0 ? (s[ser->n - 1].bytes - s[0].bytes) / total_s : 0;
	c->burst_bps = c->sustained_bps = c->avg_bps;
	for (size_t i = 0; i < m; i++) {
		double dt = (s[i + 1].t_ns - s[i].t_ns) / 1e9;
		r[i] = dt > 0 ? (s[i + 1].bytes - s[i].bytes) / dt : 0;
		mean_all += r[i] / m;
	}
	for (size_t i = 0; i < m; i++)
		sse_all += (r[i] - mean_all) * (r[i] - mean_all);
	if (m < 9) {
		free(r);
		nvt_series_free(&reg);
		snprintf(c->warning, sizeof(c->warning),
			 "only %zu intervals of %.2f s: too short to see a cache cliff or a steady "
			 "rate; run longer (--size)",
			 m, total_s / m);
		return;
	}
	for (size_t k = 3; k + 3 <= m; k++) {
		double m1 = 0, m2 = 0, sse = 0;
		for (size_t i = 0; i < k; i++)
			m1 += r[i] / k;
		for (size_t i = k; i < m; i++)
			m2 += r[i] / (m - k);
		for (size_t i = 0; i < m; i++) {
			double d = r[i] - (i < k ? m1 : m2);
			sse += d * d;
		}
		if (m1 >= 1.3 * m2 && sse < best) {
			best = sse;
			k_best = k;
		}
	}
	if (k_best && best <= 0.5 * sse_all) {
		const struct nvt_sample *a = &s[0], *b = &s[k_best], *e = &s[ser->n - 1];
		double before = (b->t_ns - a->t_ns) / 1e9, after = (e->t_ns - b->t_ns) / 1e9;
		double m2 = 0, v2 = 0;
		c->found = true;
		c->cliff_bytes = b->bytes - a->bytes;
		c->cliff_s = before;
		c->burst_bps = before > 0 ? c->cliff_bytes / before : 0;
		c->sustained_bps = after > 0 ? (e->bytes - b->bytes) / after : 0;
		for (size_t i = k_best; i < m; i++)
			m2 += r[i] / (m - k_best);
		for (size_t i = k_best; i < m; i++)
			v2 += (r[i] - m2) * (r[i] - m2) / (m - k_best);
		c->steady = after >= 2.0 && after >= 0.2 * total_s && sqrt(v2) <= 0.35 * m2;
		if (!c->steady)
			snprintf(c->warning, sizeof(c->warning),
				 "the run ended %.1f s after the cache cliff: the sustained rate "
				 "rests on little data; run longer (--size)",
				 after);
	} else {
		size_t third = m / 3;
		double mid = 0, last = 0;
		for (size_t i = third; i < 2 * third; i++)
			mid += r[i] / third;
		for (size_t i = m - third; i < m; i++)
			last += r[i] / third;
		c->sustained_bps = last;
		c->steady = fabs(last - mid) <= 0.15 * (c->avg_bps > 0 ? c->avg_bps : 1);
		if (!c->steady)
			snprintf(c->warning, sizeof(c->warning),
				 "the rate was still changing when the run ended (%.0f MB/s in the "
				 "middle third, %.0f MB/s in the last): not a steady state; run "
				 "longer (--size)",
				 mid / 1e6, last / 1e6);
	}
	free(r);
	nvt_series_free(&reg);
}

void nvt_bench_opts_default(struct nvt_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	nvt_record_opts_init(&o->rec);
	nvt_play_opts_init(&o->play);
	o->rec.size_bytes = 16ull << 30;
	o->runs = 3;
	o->tolerance = 0.03;
	o->sample_ns = 100000000ull;
}

struct bench {
	const struct nvt_bench_opts *o;
	struct nvt_bench_result *res;
	struct nvt_record_opts rec;
	struct nvt_play_opts play;
	struct nvt_bench_run *cur;
};

static void on_record_stats(const struct nvt_record_stats *st, void *arg)
{
	struct bench *b = arg;
	nvt_series_add_record(&b->cur->series, st);
}

static void on_play_stats(const struct nvt_play_stats *st, void *arg)
{
	struct bench *b = arg;
	struct nvt_sample smp = {.t_ns = st->elapsed_ns,
				 .bytes = st->bytes_read,
				 .ring_fill = st->ring_fill,
				 .drops = st->underflow_beats};
	b->cur->series.ring_chunks = st->ring_chunks;
	if (nvt_series_add(&b->cur->series, &smp)) {
		/* out of memory: the series stays shorter, the run itself goes on */
	}
}

/* The end of a run, when it came after the last sample. */
static void add_last(struct nvt_series *ser, uint64_t t_ns, uint64_t bytes, uint64_t fill,
		     uint64_t drops)
{
	struct nvt_sample smp = {.t_ns = t_ns, .bytes = bytes, .ring_fill = fill, .drops = drops};
	if (ser->n && t_ns > ser->s[ser->n - 1].t_ns && bytes >= ser->s[ser->n - 1].bytes &&
	    nvt_series_add(ser, &smp)) {
		/* out of memory: the series ends at its last sample */
	}
}

static void notice(const char *msg, void *arg)
{
	struct bench *b = arg;
	if (b->o->notice)
		b->o->notice(msg, b->o->arg);
}

/* One record run at rate (0 = unthrottled) and the verify of what it wrote. */
static int run_record(struct bench *b, struct nvt_bench_run *run)
{
	struct nvt_record_result *rr = calloc(1, sizeof(*rr));
	struct nvt_verify_result *vr = calloc(1, sizeof(*vr));
	struct nvt_verify_opts vo;
	int rc = NVT_EXIT_RUNTIME;

	if (!rr || !vr) {
		nvt_err_set(&b->res->err, ENOMEM, "out of memory");
		goto out;
	}
	b->cur = run;
	nvt_series_add(&run->series, &(struct nvt_sample){0});
	b->rec.rate_bps = run->rate_bps;
	rc = nvt_record(&b->rec, rr);
	add_last(&run->series, (uint64_t)(rr->seconds * 1e9), rr->st.bytes_written,
		 rr->st.ring_fill, rr->rec.drop_count);
	run->exit_code = rc;
	run->bytes = rr->st.bytes_written;
	run->mbps = rr->seconds > 0 ? rr->st.bytes_written / rr->seconds / 1e6 : 0;
	run->drops = rr->rec.drop_count;
	run->io_cpu_s = rr->io_cpu_ns / 1e9;
	snprintf(b->res->engine_desc, sizeof(b->res->engine_desc), "%s", rr->engine_desc);
	if (rc == NVT_EXIT_USAGE || rc == NVT_EXIT_RUNTIME) {
		b->res->err = rr->err;
		snprintf(run->why, sizeof(run->why), "recording failed: %.140s", rr->err.msg);
		goto out;
	}
	b->rec.force = true; /* what is on the target now is our own recording */
	if (rc == NVT_EXIT_DATA) {
		snprintf(run->why, sizeof(run->why), "%llu beats dropped",
			 (unsigned long long)run->drops);
		rc = NVT_EXIT_OK;
		goto out;
	}
	nvt_verify_opts_default(&vo);
	vo.path = b->rec.path;
	vo.layout = b->rec.layout;
	vo.engine = b->rec.engine && strcmp(b->rec.engine, "null") ? b->rec.engine : NULL;
	vo.qd = b->rec.qd;
	if (vo.qd * 2 > vo.chunks)
		vo.chunks = vo.qd * 2;
	vo.notice = notice;
	vo.arg = b;
	rc = nvt_verify(&vo, vr);
	run->exit_code = rc;
	run->errors = vr->chk.corrupt + vr->chk.gaps + vr->chk.backward;
	if (rc == NVT_EXIT_RUNTIME || rc == NVT_EXIT_USAGE) {
		b->res->err = vr->err;
		snprintf(run->why, sizeof(run->why), "verify failed: %.140s", vr->err.msg);
		rc = NVT_EXIT_RUNTIME;
		goto out;
	}
	run->pass = rc == NVT_EXIT_OK;
	if (!run->pass)
		snprintf(run->why, sizeof(run->why),
			 "verify: %llu corrupt beats, %llu gaps, problems 0x%x",
			 (unsigned long long)vr->chk.corrupt, (unsigned long long)vr->chk.gaps,
			 vr->problems);
	rc = NVT_EXIT_OK;
out:
	free(rr);
	free(vr);
	return rc;
}

/* One play run at rate (0 = as fast as the reads go) through the checker. */
static int run_play(struct bench *b, struct nvt_bench_run *run)
{
	struct nvt_play_result *pr = calloc(1, sizeof(*pr));
	int rc = NVT_EXIT_RUNTIME;

	if (!pr) {
		nvt_err_set(&b->res->err, ENOMEM, "out of memory");
		return rc;
	}
	b->cur = run;
	nvt_series_add(&run->series, &(struct nvt_sample){0});
	b->play.rate_bps = run->rate_bps;
	rc = nvt_play(&b->play, pr);
	add_last(&run->series, pr->st.elapsed_ns, pr->st.bytes_read, pr->st.ring_fill,
		 pr->st.underflow_beats);
	run->exit_code = rc;
	run->bytes = pr->st.bytes_read;
	run->mbps = pr->read_seconds > 0 ? pr->st.bytes_read / pr->read_seconds / 1e6 : 0;
	run->drops = pr->st.underflow_beats;
	run->errors = pr->chk.corrupt + pr->chk.backward;
	run->io_cpu_s = pr->read_cpu_ns / 1e9;
	if (rc == NVT_EXIT_RUNTIME || rc == NVT_EXIT_USAGE) {
		b->res->err = pr->err;
		snprintf(run->why, sizeof(run->why), "playback failed: %.140s", pr->err.msg);
		free(pr);
		return NVT_EXIT_RUNTIME;
	}
	run->pass = rc == NVT_EXIT_OK;
	if (!run->pass)
		snprintf(run->why, sizeof(run->why),
			 "%llu underflow beats in %llu events, %llu corrupt beats",
			 (unsigned long long)pr->st.underflow_beats,
			 (unsigned long long)pr->st.underflow_events,
			 (unsigned long long)pr->chk.corrupt);
	free(pr);
	return NVT_EXIT_OK;
}

static int run_once(struct bench *b, struct nvt_bench_run *run)
{
	int rc = b->o->mode == NVT_BENCH_PLAY ? run_play(b, run) : run_record(b, run);
	if (rc == NVT_EXIT_OK && b->o->on_run)
		b->o->on_run(run, b->o->arg);
	return rc;
}

static bool interrupted(const struct bench *b)
{
	return b->o->interrupt && *b->o->interrupt;
}

/* runs of runs at rate: 1 all passed, 0 one failed (the rest are not run), < 0 error. */
static int try_rate(struct bench *b, uint64_t rate)
{
	for (unsigned i = 1; i <= b->o->runs; i++) {
		struct nvt_bench_run *g =
			realloc(b->res->runs, (b->res->nruns + 1) * sizeof(*b->res->runs));
		struct nvt_bench_run *run;
		if (!g) {
			nvt_err_set(&b->res->err, ENOMEM, "out of memory");
			return -1;
		}
		b->res->runs = g;
		run = &g[b->res->nruns++];
		memset(run, 0, sizeof(*run));
		run->rate_bps = rate;
		run->index = i;
		if (run_once(b, run) != NVT_EXIT_OK)
			return -1;
		if (interrupted(b)) {
			b->res->interrupted = true;
			return -1;
		}
		if (!run->pass)
			return 0;
	}
	return 1;
}

static int check_opts(const struct nvt_bench_opts *o, struct nvt_err *err)
{
	if (!o->runs || o->runs > 100) {
		nvt_err_set(err, EINVAL, "--runs must be between 1 and 100");
		return -EINVAL;
	}
	if (!o->rec.size_bytes) {
		nvt_err_set(err, EINVAL, "a bench run needs --size (every run writes that much)");
		return -EINVAL;
	}
	if (o->to_bps && o->from_bps >= o->to_bps) {
		nvt_err_set(err, EINVAL, "--from must be below --to");
		return -EINVAL;
	}
	if (o->tolerance < 0.001 || o->tolerance > 0.5) {
		nvt_err_set(err, EINVAL, "--tolerance must be between 0.1%% and 50%%");
		return -EINVAL;
	}
	return 0;
}

int nvt_bench(const struct nvt_bench_opts *o, struct nvt_bench_result *res)
{
	struct bench b = {.o = o, .res = res, .rec = o->rec, .play = o->play};
	uint64_t hi, lo, pass = 0, fail = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	if (check_opts(o, &res->err))
		return NVT_EXIT_USAGE;
	b.rec.stats_ns = o->sample_ns;
	b.rec.progress = on_record_stats;
	b.rec.notice = notice;
	b.rec.arg = &b;
	b.rec.interrupt = o->interrupt;
	b.play.path = o->rec.path;
	b.play.layout = o->rec.layout;
	b.play.sink = "checker";
	b.play.stats_ns = o->sample_ns;
	b.play.progress = on_play_stats;
	b.play.notice = notice;
	b.play.arg = &b;
	b.play.interrupt = o->interrupt;
	res->ring_bytes = (uint64_t)(o->mode == NVT_BENCH_PLAY ? b.play.chunks : b.rec.chunks) *
			  (o->mode == NVT_BENCH_PLAY ? b.play.chunk_bytes : b.rec.chunk_bytes);
	if (res->ring_bytes * 4 > o->rec.size_bytes && o->notice) {
		char msg[320];
		snprintf(msg, sizeof(msg),
			 "the ring (%.0f MB) holds a quarter or more of every run (%.0f MB): rates "
			 "above the drive's pass while the ring fills; use --size of 10x the ring "
			 "or "
			 "more, or a smaller ring (--chunks)",
			 res->ring_bytes / 1e6, o->rec.size_bytes / 1e6);
		o->notice(msg, o->arg);
	}
	if (o->mode == NVT_BENCH_PLAY) {
		/* the recording to play: written once, unthrottled, and verified */
		struct nvt_bench_run w = {0};
		struct bench wb = b;
		wb.rec.arg = &wb;
		wb.o = &(struct nvt_bench_opts){
			.mode = NVT_BENCH_RECORD, .notice = o->notice, .arg = o->arg};
		rc = run_record(&wb, &w);
		nvt_series_free(&w.series);
		b.rec.force = wb.rec.force;
		if (rc != NVT_EXIT_OK || !w.pass) {
			if (!res->err.code)
				nvt_err_set(&res->err, EIO,
					    "the recording to play back did not pass: %s", w.why);
			return NVT_EXIT_RUNTIME;
		}
	}
	rc = run_once(&b, &res->max);
	if (rc != NVT_EXIT_OK)
		return NVT_EXIT_RUNTIME;
	nvt_cliff_analyze(&res->max.series, &res->cliff);
	if (interrupted(&b)) {
		res->interrupted = true;
		return NVT_EXIT_RUNTIME;
	}
	if (o->no_sweep)
		return NVT_EXIT_OK;
	/* the range: up to a little above what the unthrottled run averaged (the ring absorbs a
	 * little more), down to an eighth of it */
	hi = o->to_bps ? o->to_bps : (uint64_t)(res->max.mbps * 1e6 * 1.05);
	lo = o->from_bps ? o->from_bps : hi / 8;
	if (hi < 16 || lo < 16) {
		nvt_err_set(&res->err, EIO, "the unthrottled run moved no data");
		return NVT_EXIT_RUNTIME;
	}
	/* coarse: from the top down in quarters of the range, to the first that passes */
	for (int i = 0; i <= 4; i++) {
		uint64_t rate = hi - (hi - lo) / 4 * (uint64_t)i;
		int t = try_rate(&b, rate);
		if (t < 0)
			return NVT_EXIT_RUNTIME;
		if (t) {
			pass = rate;
			break;
		}
		fail = rate;
	}
	if (!pass) {
		res->fail_bps = fail;
		return NVT_EXIT_DATA;
	}
	res->limited_by_to = !fail;
	/* bisection between the highest pass and the lowest fail */
	while (fail && fail - pass > o->tolerance * pass) {
		uint64_t mid = pass + (fail - pass) / 2;
		int t = try_rate(&b, mid);
		if (t < 0)
			return NVT_EXIT_RUNTIME;
		if (t)
			pass = mid;
		else
			fail = mid;
	}
	res->best_bps = pass;
	res->fail_bps = fail;
	return NVT_EXIT_OK;
}

void nvt_bench_result_free(struct nvt_bench_result *res)
{
	nvt_series_free(&res->max.series);
	for (size_t i = 0; i < res->nruns; i++)
		nvt_series_free(&res->runs[i].series);
	free(res->runs);
	res->runs = NULL;
	res->nruns = 0;
}
