/* SPDX-License-Identifier: MIT */
/* The bench driver: options, the plan, and the passes it runs: a record run (at a rate, or
 * unthrottled) followed by a verify of what it wrote, or a play run through the checker; the
 * unthrottled run and its cliff analysis, then the rate search (search.c). A record run passes
 * with zero drops and a clean verify; a play run with zero underflows and a clean checker. How
 * each library call's outcome reads is decided in one place per call (*_outcome below). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/verify.h"
#include "qualify/bench_int.h"
#include "util/sysutil.h"

enum outcome {
	OUT_PASSED,     /* ran to its end without a data problem */
	OUT_FAILED,     /* ran to its end with a data problem */
	OUT_INCOMPLETE, /* stopped by the interrupt */
	OUT_ERROR,      /* did not run (err says why) */
};

/* nvt_record: 0 or -errno (err); data problems (drops) in the result. */
static enum outcome record_outcome(int rc, const struct nvt_record_result *r)
{
	if (rc < 0 || r->err.code)
		return OUT_ERROR;
	if (r->reason == NVT_STOP_SIGNAL)
		return OUT_INCOMPLETE;
	return r->rec.drop_count ? OUT_FAILED : OUT_PASSED;
}

/* nvt_verify: 0 or -errno (err); what it found in problems. */
static enum outcome verify_outcome(int rc, const struct nvt_verify_result *r)
{
	if (rc < 0 || r->err.code || (rc > 0 && !r->problems))
		return OUT_ERROR;
	return r->problems ? OUT_FAILED : OUT_PASSED;
}

/* nvt_play: 0 or -errno (err); underflows and checker findings in problems. */
static enum outcome play_outcome(int rc, const struct nvt_play_result *r)
{
	if (r->interrupted)
		return OUT_INCOMPLETE;
	if (rc < 0 || r->err.code || !r->complete)
		return OUT_ERROR;
	return r->problems ? OUT_FAILED : OUT_PASSED;
}

/* The error of a call that did not run, as -errno, into the bench's result. */
static int run_error(struct bench *b, int rc, const struct nvt_err *err)
{
	if (err->code)
		b->res->err = *err;
	else
		nvt_err_set(&b->res->err, rc < 0 ? -rc : EIO, "%s", "the run failed");
	return -b->res->err.code;
}

void bench_notice(struct bench *b, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!b->o->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	b->o->notice(msg, b->o->arg);
}

static void pass_notice(const char *msg, void *arg)
{
	struct bench *b = arg;
	if (b->o->notice)
		b->o->notice(msg, b->o->arg);
}

static void on_record_stats(const struct nvt_record_stats *st, void *arg)
{
	struct bench *b = arg;
	nvt_series_add_record(&b->cur->series, st);
}

static void on_play_stats(const struct nvt_play_stats *st, void *arg)
{
	struct bench *b = arg;
	nvt_series_add_play(&b->cur->series, st);
}

bool bench_interrupted(const struct bench *b)
{
	return nvt_interrupted(b->o->interrupt);
}

bool bench_may_write(struct bench *b)
{
	uint64_t budget = b->o->max_write_bytes, written = b->res->bytes_written;
	uint64_t run = (b->o->rec.size_bytes + 4095) / 4096 * 4096;

	if (b->o->mode == NVT_BENCH_PLAY || !budget ||
	    (written <= budget && run <= budget - written))
		return true;
	b->res->budget_stop = true;
	return false;
}

/* The check of what a record run wrote. */
static int verify_run(struct bench *b, struct nvt_bench_run *run)
{
	struct nvt_verify_result *vr = calloc(1, sizeof(*vr));
	struct nvt_verify_opts vo;
	int rc;

	if (!vr) {
		nvt_err_set(&b->res->err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	nvt_verify_opts_default(&vo);
	vo.path = b->rec.path;
	vo.layout = b->rec.layout;
	vo.engine = b->rec.engine && strcmp(b->rec.engine, "null") ? b->rec.engine : NULL;
	vo.qd = b->rec.qd;
	if (vo.qd * 2 > vo.chunks)
		vo.chunks = vo.qd * 2;
	vo.notice = pass_notice;
	vo.arg = b;
	rc = nvt_verify(&vo, vr);
	b->verify_s = vr->seconds;
	run->errors = vr->chk.corrupt + vr->chk.gaps + vr->chk.backward;
	switch (verify_outcome(rc, vr)) {
	case OUT_ERROR:
		snprintf(run->why, sizeof(run->why), "verify failed: %.140s", vr->err.msg);
		rc = run->rc = run_error(b, rc, &vr->err);
		break;
	case OUT_FAILED:
		snprintf(run->why, sizeof(run->why),
			 "verify: %llu corrupt beats, %llu gaps, problems 0x%x",
			 (unsigned long long)vr->chk.corrupt, (unsigned long long)vr->chk.gaps,
			 vr->problems);
		rc = 0;
		break;
	default:
		run->pass = true;
		rc = 0;
	}
	free(vr);
	return rc;
}

/* The figures of a finished recording into run. */
static void record_figures(struct bench *b, struct nvt_bench_run *run,
			   const struct nvt_record_result *rr)
{
	struct nvt_sample end = {.t_ns = (uint64_t)(rr->seconds * 1e9),
				 .bytes = rr->st.bytes_written,
				 .ring_fill = rr->st.ring_fill,
				 .drops = rr->rec.drop_count};

	nvt_series_add_end(&run->series, &end);
	run->bytes = rr->st.bytes_written;
	run->mbps = rr->seconds > 0 ? rr->st.bytes_written / rr->seconds / 1e6 : 0;
	run->drops = rr->rec.drop_count;
	run->io_cpu_s = rr->io_cpu_ns / 1e9;
	b->res->bytes_written += rr->st.bytes_written;
	snprintf(b->res->engine_desc, sizeof(b->res->engine_desc), "%s", rr->engine_desc);
}

/* One record run at run->rate_bps (0 = unthrottled) and the verify of what it wrote. */
static int run_record(struct bench *b, struct nvt_bench_run *run)
{
	struct nvt_record_result *rr = calloc(1, sizeof(*rr));
	int rc;

	if (!rr) {
		nvt_err_set(&b->res->err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	b->cur = run;
	nvt_series_add(&run->series, &(struct nvt_sample){0});
	b->rec.rate_bps = run->rate_bps;
	rc = nvt_record(&b->rec, rr);
	record_figures(b, run, rr);
	switch (record_outcome(rc, rr)) {
	case OUT_ERROR:
		snprintf(run->why, sizeof(run->why), "recording failed: %.140s", rr->err.msg);
		rc = run->rc = run_error(b, rc, &rr->err);
		break;
	case OUT_INCOMPLETE:
		b->rec.force = true; /* what is on the target now is our own recording */
		snprintf(run->why, sizeof(run->why), "interrupted");
		rc = 0;
		break;
	case OUT_FAILED:
		b->rec.force = true;
		snprintf(run->why, sizeof(run->why), "%llu beats dropped",
			 (unsigned long long)run->drops);
		rc = 0;
		break;
	default:
		b->rec.force = true;
		rc = verify_run(b, run);
	}
	free(rr);
	return rc;
}

/* One play run at run->rate_bps (0 = as fast as the reads go) through the checker. */
static int run_play(struct bench *b, struct nvt_bench_run *run)
{
	struct nvt_play_result *pr = calloc(1, sizeof(*pr));
	int rc;

	if (!pr) {
		nvt_err_set(&b->res->err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	b->cur = run;
	nvt_series_add(&run->series, &(struct nvt_sample){0});
	b->play.rate_bps = run->rate_bps;
	rc = nvt_play(&b->play, pr);
	nvt_series_add_end(&run->series, &(struct nvt_sample){.t_ns = pr->st.elapsed_ns,
							      .bytes = pr->st.bytes_read,
							      .ring_fill = pr->st.ring_fill,
							      .drops = pr->st.underflow_beats});
	run->bytes = pr->st.bytes_read;
	run->mbps = pr->read_seconds > 0 ? pr->st.bytes_read / pr->read_seconds / 1e6 : 0;
	run->drops = pr->st.underflow_beats;
	run->errors = pr->chk.corrupt + pr->chk.backward;
	run->io_cpu_s = pr->read_cpu_ns / 1e9;
	switch (play_outcome(rc, pr)) {
	case OUT_ERROR:
		snprintf(run->why, sizeof(run->why), "playback failed: %.140s", pr->err.msg);
		rc = run->rc = run_error(b, rc, &pr->err);
		break;
	case OUT_INCOMPLETE:
		snprintf(run->why, sizeof(run->why), "interrupted");
		rc = 0;
		break;
	case OUT_FAILED:
		snprintf(run->why, sizeof(run->why),
			 "%llu underflow beats in %llu events, %llu corrupt beats",
			 (unsigned long long)pr->st.underflow_beats,
			 (unsigned long long)pr->st.underflow_events,
			 (unsigned long long)pr->chk.corrupt);
		rc = 0;
		break;
	default:
		run->pass = true;
		rc = 0;
	}
	free(pr);
	return rc;
}

int bench_run(struct bench *b, struct nvt_bench_run *run)
{
	int rc = b->o->mode == NVT_BENCH_PLAY ? run_play(b, run) : run_record(b, run);
	if (!rc && b->o->on_run)
		b->o->on_run(run, b->o->arg);
	return rc;
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

static int check_opts(const struct nvt_bench_opts *o, struct nvt_err *err)
{
	if (!o->runs || o->runs > 100)
		nvt_err_param(err, "the runs that must pass at a rate must be 1 to 100, not %u",
			      o->runs);
	else if (!o->rec.size_bytes)
		nvt_err_param(err, "a bench needs the bytes every run writes");
	else if (o->to_bps && o->from_bps >= o->to_bps)
		nvt_err_param(err, "the bottom of the search range must be below its top");
	else if (!(o->tolerance >= 0.001 && o->tolerance <= 0.5))
		nvt_err_param(err, "the tolerance must be between 0.1%% and 50%%");
	else if (!o->sample_ns)
		nvt_err_param(err, "the sampling interval must be above 0");
	else if (o->max_write_bytes && o->max_write_bytes < o->rec.size_bytes)
		nvt_err_param(err,
			      "the write budget (%llu bytes) is smaller than one run (%llu bytes)",
			      (unsigned long long)o->max_write_bytes,
			      (unsigned long long)o->rec.size_bytes);
	return err->code ? -EINVAL : 0;
}

int nvt_bench_plan(const struct nvt_bench_opts *o, struct nvt_bench_plan *p, struct nvt_err *err)
{
	int rc = check_opts(o, err);

	if (!rc)
		bench_plan_initial(o, p);
	return rc;
}

/* The record and play options of every run, wired to the bench. */
static void wire(struct bench *b)
{
	const struct nvt_bench_opts *o = b->o;

	b->rec.stats_ns = o->sample_ns;
	b->rec.progress = on_record_stats;
	b->rec.notice = pass_notice;
	b->rec.arg = b;
	b->rec.interrupt = o->interrupt;
	b->play.path = o->rec.path;
	b->play.layout = o->rec.layout;
	b->play.sink = "checker";
	b->play.stats_ns = o->sample_ns;
	b->play.progress = on_play_stats;
	b->play.notice = pass_notice;
	b->play.arg = b;
	b->play.interrupt = o->interrupt;
}

static void ring_notice(struct bench *b)
{
	const struct nvt_bench_opts *o = b->o;
	bool play = o->mode == NVT_BENCH_PLAY;

	b->res->ring_bytes = (uint64_t)(play ? b->play.chunks : b->rec.chunks) *
			     (play ? b->play.chunk_bytes : b->rec.chunk_bytes);
	if (b->res->ring_bytes > o->rec.size_bytes / 4)
		bench_notice(
			b,
			"the ring (%.0f MB) holds a quarter or more of every run (%.0f MB): "
			"rates above the drive's pass while the ring fills; make every run 10x "
			"the ring or more, or the ring smaller",
			b->res->ring_bytes / 1e6, o->rec.size_bytes / 1e6);
}

/* The recording a playback bench plays: written once, unthrottled, and verified. */
static int write_recording(struct bench *b)
{
	struct nvt_bench_run w = {0};
	int rc = run_record(b, &w);

	nvt_series_free(&w.series);
	if (rc)
		return rc;
	if (!w.pass) {
		nvt_err_set(&b->res->err, EIO, "the recording to play back did not pass: %s",
			    w.why);
		return -EIO;
	}
	return 0;
}

int nvt_bench(const struct nvt_bench_opts *o, struct nvt_bench_result *res)
{
	struct bench b = {.o = o, .res = res, .rec = o->rec, .play = o->play};
	int rc;

	memset(res, 0, sizeof(*res));
	rc = nvt_bench_plan(o, &res->plan, &res->err);
	if (rc)
		return rc;
	wire(&b);
	ring_notice(&b);
	if (o->on_plan)
		o->on_plan(&res->plan, o->arg);
	if (o->mode == NVT_BENCH_PLAY) {
		rc = write_recording(&b);
		if (rc)
			return rc;
	}
	rc = bench_run(&b, &res->max);
	if (rc)
		return rc;
	nvt_cliff_analyze(&res->max.series, &res->cliff);
	if (bench_interrupted(&b)) {
		res->interrupted = true;
		return -EINTR;
	}
	return o->no_sweep ? 0 : bench_search(&b);
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
