/* SPDX-License-Identifier: MIT */
/* speedtest: every target gets its own thread; all write the test pattern at once (unthrottled
 * record), then all read it back at once through verify, so every byte is checked. Per target
 * and aggregate rates, each the bytes over the interval in which they moved, all on
 * CLOCK_MONOTONIC; the PCIe link of the NVMe controllers behind each target comes from sysfs
 * (src/lib/sys/nvme_link.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/record.h"
#include "nvtape/speedtest.h"
#include "nvtape/verify.h"
#include "util/sysutil.h"

void nvt_speedtest_opts_default(struct nvt_speedtest_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->write = o->read = true;
	o->size_bytes = 8ull << 30;
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->sample_ns = 100000000ull;
}

struct worker {
	const struct nvt_speedtest_opts *o;
	struct nvt_speed_target *t;
	pthread_t th;
	bool joinable;
	uint64_t next_sample, t0;
	uint64_t first_beat_ns; /* CLOCK_MONOTONIC of the recording's first beat (0: not seen) */
};

static void on_write_stats(const struct nvt_record_stats *st, void *arg)
{
	struct worker *w = arg;
	uint64_t now = nvt_mono_ns();

	/* elapsed_ns counts from the first beat: the earliest reading is the closest */
	if (st->elapsed_ns && st->elapsed_ns < now &&
	    (!w->first_beat_ns || now - st->elapsed_ns < w->first_beat_ns))
		w->first_beat_ns = now - st->elapsed_ns;
	nvt_series_add_record(&w->t->wseries, st);
}

static void on_read_progress(uint64_t done, uint64_t total, void *arg)
{
	struct worker *w = arg;
	uint64_t now = nvt_mono_ns();
	struct nvt_sample s = {.t_ns = now - w->t0, .bytes = done};

	if (now < w->next_sample && done < total)
		return;
	w->next_sample = now + w->o->sample_ns;
	if (nvt_series_add(&w->t->rseries, &s)) {
		/* out of memory: a shorter series */
	}
}

static void on_event(const struct nvt_check_event *ev, void *arg)
{
	struct worker *w = arg;
	if (!w->t->first_bad_offset || ev->offset < w->t->first_bad_offset)
		w->t->first_bad_offset = ev->offset;
}

static void notice(const char *msg, void *arg)
{
	struct worker *w = arg;
	if (w->o->notice)
		w->o->notice(msg, w->o->arg);
}

/* nvt_record: 0 or -errno (err); dropped beats in the result. */
static void write_outcome(struct nvt_speed_target *t, int rc, const struct nvt_record_result *r)
{
	if (rc < 0 || r->err.code) {
		t->write_rc = r->err.code ? -r->err.code : rc < 0 ? rc : -EIO;
		snprintf(t->error, sizeof(t->error), "write: %.500s", r->err.msg);
	} else if (r->rec.drop_count) {
		t->problems |= NVT_SPP_DROPS;
	}
}

/* The interval the bytes moved in: from the first beat to the last write done. */
static void write_interval(struct worker *w, const struct nvt_record_result *r, uint64_t t_ret)
{
	uint64_t s = (uint64_t)(r->seconds * 1e9);

	w->t->write_t0_ns = w->first_beat_ns ? w->first_beat_ns : (t_ret > s ? t_ret - s : 0);
	w->t->write_t1_ns = w->t->write_t0_ns + s;
}

static void record_opts(struct worker *w, struct nvt_record_opts *ro)
{
	nvt_record_opts_init(ro);
	ro->path = w->t->path;
	ro->engine = w->o->engine ? w->o->engine : "file";
	ro->size_bytes = w->o->size_bytes;
	ro->chunk_bytes = w->o->chunk_bytes;
	ro->chunks = w->o->chunks;
	ro->qd = w->o->qd;
	ro->force = w->o->force;
	ro->stats_ns = w->o->sample_ns;
	ro->progress = on_write_stats;
	ro->notice = notice;
	ro->interrupt = w->o->interrupt;
	ro->arg = w;
}

static void *write_thread(void *arg)
{
	struct worker *w = arg;
	struct nvt_record_opts ro;
	struct nvt_record_result *r = calloc(1, sizeof(*r));
	int rc;

	w->t->wrote = true;
	if (!r) {
		w->t->write_rc = -ENOMEM;
		snprintf(w->t->error, sizeof(w->t->error), "out of memory");
		return NULL;
	}
	record_opts(w, &ro);
	nvt_series_add(&w->t->wseries, &(struct nvt_sample){0});
	rc = nvt_record(&ro, r);
	write_interval(w, r, nvt_mono_ns());
	w->t->write_bytes = r->st.bytes_written;
	w->t->write_s = r->seconds;
	w->t->write_mbps = r->seconds > 0 ? r->st.bytes_written / r->seconds / 1e6 : 0;
	w->t->write_cpu_s = r->io_cpu_ns / 1e9;
	write_outcome(w->t, rc, r);
	free(r);
	return NULL;
}

/* nvt_verify: 0 or -errno (err); what it found in problems. */
static void read_outcome(struct nvt_speed_target *t, int rc, const struct nvt_verify_result *r)
{
	if (rc < 0 || r->err.code || (rc > 0 && !r->problems)) {
		t->read_rc = r->err.code ? -r->err.code : rc < 0 ? rc : -EIO;
		snprintf(t->error, sizeof(t->error), "read: %.500s", r->err.msg);
	} else if (!r->pattern_checked) {
		t->problems |= NVT_SPP_NO_PATTERN;
		snprintf(t->error, sizeof(t->error),
			 "read: %s holds no test pattern to check (the speedtest's write phase "
			 "leaves one)",
			 t->path);
	} else if (r->problems) {
		t->problems |= NVT_SPP_BAD_DATA;
	}
}

static void *read_thread(void *arg)
{
	struct worker *w = arg;
	struct nvt_verify_opts vo;
	struct nvt_verify_result *r = calloc(1, sizeof(*r));
	int rc;

	w->t->read = true;
	if (!r) {
		w->t->read_rc = -ENOMEM;
		snprintf(w->t->error, sizeof(w->t->error), "out of memory");
		return NULL;
	}
	nvt_verify_opts_default(&vo);
	vo.path = w->t->path;
	vo.engine = w->o->engine;
	vo.chunk_bytes = w->o->chunk_bytes;
	vo.qd = w->o->qd;
	if (vo.qd * 2 > vo.chunks)
		vo.chunks = vo.qd * 2;
	vo.progress = on_read_progress;
	vo.on_event = on_event;
	vo.notice = notice;
	vo.interrupt = w->o->interrupt;
	vo.arg = w;
	nvt_series_add(&w->t->rseries, &(struct nvt_sample){0});
	w->t0 = nvt_mono_ns();
	w->next_sample = w->t0 + w->o->sample_ns;
	rc = nvt_verify(&vo, r);
	w->t->read_t0_ns = w->t0;
	w->t->read_t1_ns = w->t0 + (uint64_t)(r->seconds * 1e9);
	w->t->read_bytes = r->checked_bytes;
	w->t->read_s = r->seconds;
	w->t->read_mbps = r->seconds > 0 ? r->checked_bytes / r->seconds / 1e6 : 0;
	w->t->read_cpu_s = r->cpu_ns / 1e9;
	w->t->corrupt = r->chk.corrupt;
	w->t->gaps = r->chk.gaps;
	w->t->backward = r->chk.backward;
	read_outcome(w->t, rc, r);
	free(r);
	return NULL;
}

void nvt_speed_aggregate(const struct nvt_speed_target *t, unsigned n, bool write, double *mbps,
			 double *seconds)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, bytes = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t a = write ? t[i].write_t0_ns : t[i].read_t0_ns;
		uint64_t b = write ? t[i].write_t1_ns : t[i].read_t1_ns;
		if (!(write ? t[i].wrote : t[i].read) || b <= a)
			continue;
		t0 = a < t0 ? a : t0;
		t1 = b > t1 ? b : t1;
		bytes += write ? t[i].write_bytes : t[i].read_bytes;
	}
	*seconds = t1 > t0 ? (t1 - t0) / 1e9 : 0;
	*mbps = *seconds > 0 ? bytes / *seconds / 1e6 : 0;
}

/* Run fn for every target at once. */
static void run_phase(struct worker *w, unsigned n, void *(*fn)(void *))
{
	for (unsigned i = 0; i < n; i++) {
		w[i].joinable = pthread_create(&w[i].th, NULL, fn, &w[i]) == 0;
		if (!w[i].joinable)
			fn(&w[i]); /* no thread: run it here (then not concurrently) */
	}
	for (unsigned i = 0; i < n; i++)
		if (w[i].joinable)
			pthread_join(w[i].th, NULL);
}

static unsigned count_failed(const struct nvt_speedtest_result *res)
{
	unsigned n = 0;
	for (unsigned i = 0; i < res->n; i++)
		n += res->t[i].write_rc || res->t[i].read_rc;
	return n;
}

int nvt_speedtest(const struct nvt_speedtest_opts *o, struct nvt_speedtest_result *res)
{
	struct worker w[NVT_SPEED_MAX_TARGETS];

	memset(res, 0, sizeof(*res));
	memset(w, 0, sizeof(w));
	if (!o->ntargets || o->ntargets > NVT_SPEED_MAX_TARGETS || (!o->write && !o->read)) {
		nvt_err_param(&res->err, "a speedtest needs 1 to %d targets and a write or a read",
			      NVT_SPEED_MAX_TARGETS);
		return -EINVAL;
	}
	res->n = o->ntargets;
	for (unsigned i = 0; i < o->ntargets; i++) {
		struct nvt_speed_target *t = &res->t[i];
		t->path = o->target[i];
		nvt_links_of(t->path, t->link, NVT_LINK_MAX, &t->nlinks, t->on, sizeof(t->on));
		w[i].o = o;
		w[i].t = t;
	}
	if (o->write) {
		run_phase(w, o->ntargets, write_thread);
		nvt_speed_aggregate(res->t, res->n, true, &res->agg_write_mbps, &res->agg_write_s);
	}
	res->interrupted = nvt_interrupted(o->interrupt);
	if (o->read && !count_failed(res) && !res->interrupted) {
		run_phase(w, o->ntargets, read_thread);
		nvt_speed_aggregate(res->t, res->n, false, &res->agg_read_mbps, &res->agg_read_s);
		res->interrupted = nvt_interrupted(o->interrupt);
	}
	res->failed = count_failed(res);
	for (unsigned i = 0; i < res->n; i++)
		res->problems += res->t[i].problems != 0;
	return 0;
}

void nvt_speedtest_result_free(struct nvt_speedtest_result *res)
{
	for (unsigned i = 0; i < res->n; i++) {
		nvt_series_free(&res->t[i].wseries);
		nvt_series_free(&res->t[i].rseries);
	}
}
