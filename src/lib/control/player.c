/* SPDX-License-Identifier: MIT */
/* The pull API: a read thread reads the recording with O_DIRECT through the storage engine,
 * several reads in flight, and publishes the chunks to the ring strictly in order (each loop
 * pass starts at a chunk of its own); the consumer takes them with next() and hands them back
 * with release(). open() returns once the ring is full (or holds the whole recording), so
 * playback starts with the ring's depth of headroom. A watchdog covers the reads. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "nvtape/player.h"
#include "format/index.h"
#include "format/sums.h"
#include "ring/pump.h"
#include "ring/ring.h"
#include "storage/engine.h"
#include "util/opts.h"
#include "util/sysutil.h"

struct nvt_player {
	struct nvt_play_opts o;
	struct nvt_recording rec;
	struct nvt_drop_event *ev;
	uint64_t nev;
	struct nvt_chunk_crc *crc; /* the chunk checksums, checked as chunks land (read thread) */
	uint64_t ncrc, pass;
	struct nvt_sums_check sums;
	uint64_t sums_good, sums_bad, first_bad;
	struct nvt_layout layout;
	struct nvt_ring ring;
	struct nvt_engine eng;
	uint64_t valid, per_pass, total; /* bytes per pass; chunks per pass; chunks to read */
	struct nvt_pump pump;            /* reads in order into the ring */
	_Atomic uint64_t bytes_read;
	_Atomic unsigned inflight_seen; /* the engine's reads in flight, for stats() */
	_Atomic int stop;
	_Atomic int failed;
	_Atomic int ready; /* the prefill is done, or the reader gave up */
	int open_rc;
	uint64_t taken; /* consumer: chunks taken by next() */
	uint64_t t_read0, t_read_end, cpu_ns;
	pthread_t thread;
	pthread_mutex_t lock; /* ready_cv */
	pthread_cond_t ready_cv;
	struct nvt_err err;
};

static uint64_t chunk_len(const struct nvt_player *p, uint64_t k)
{
	uint64_t pos = (k % p->per_pass) * p->o.chunk_bytes;
	return p->valid - pos < p->o.chunk_bytes ? p->valid - pos : p->o.chunk_bytes;
}

static uint64_t chunk_offset(const struct nvt_player *p, uint64_t k)
{
	return (k % p->per_pass) * p->o.chunk_bytes;
}

static void set_ready(struct nvt_player *p)
{
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->ready, 1);
	pthread_cond_broadcast(&p->ready_cv);
	pthread_mutex_unlock(&p->lock);
}

static void fail(struct nvt_player *p, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct nvt_player *p, int code, const char *fmt, ...)
{
	va_list ap;

	if (atomic_load(&p->failed))
		return;
	if (!p->err.code) {
		p->err.code = code ? code : EIO;
		va_start(ap, fmt);
		vsnprintf(p->err.msg, sizeof(p->err.msg), fmt, ap);
		va_end(ap);
	}
	atomic_store(&p->failed, 1);
	set_ready(p); /* the read thread hands on what landed before, then closes the ring */
}

static void issue_reads(struct nvt_player *p)
{
	while (!atomic_load(&p->failed) && p->pump.queued < p->total &&
	       nvt_pump_can_queue(&p->pump)) {
		uint64_t k = p->pump.queued;
		if (nvt_pump_queue(&p->pump, p->rec.data_offset + chunk_offset(p, k),
				   chunk_len(p, k)))
			break;
	}
}

/* A read completed: true when it landed; a failed or short read stops the playback. */
static bool read_done(struct nvt_player *p, const struct nvt_io_done *d)
{
	uint64_t k, need;
	int rc = nvt_pump_complete(&p->pump, d, &k, &need);

	if (rc < 0)
		fail(p, d->res < 0 ? (int)-d->res : EIO,
		     "read of %llu bytes at offset %llu of %s%s%s: %s", (unsigned long long)need,
		     (unsigned long long)(p->rec.data_offset + chunk_offset(p, k)),
		     p->layout.path[0], p->eng.fault[0] ? " failed on " : "", p->eng.fault,
		     d->res < 0 ? strerror((int)-d->res) : "short read");
	return rc > 0;
}

static void on_bad_span(void *arg, const struct nvt_chunk_crc *span, uint32_t found)
{
	struct nvt_player *p = arg;

	(void)found;
	if (p->first_bad == UINT64_MAX)
		p->first_bad = span->data_offset;
}

/* Chunk k has landed: through the checksums of its pass. */
static void check_sums(struct nvt_player *p, uint64_t k, uint64_t len)
{
	uint64_t pass = k / p->per_pass;

	if (pass != p->pass || k == 0) {
		p->sums_good += p->sums.good;
		p->sums_bad += p->sums.bad;
		nvt_sums_check_init(&p->sums, p->crc, p->ncrc, p->valid);
		p->sums.on_bad = on_bad_span;
		p->sums.arg = p;
		p->pass = pass;
	}
	nvt_sums_check_feed(&p->sums, nvt_ring_chunk(&p->ring, k), len, chunk_offset(p, k));
}

/* The index: drop events for the checks, chunk checksums for the reads. An interrupted
 * recording's (its last checkpoint's) is used when it can be read. */
static int read_index(struct nvt_player *p, struct nvt_err *err)
{
	struct nvt_index ix;
	struct nvt_err ierr = {0};

	if (nvt_recording_read_index_all(&p->layout, &p->rec, &ix, &ierr)) {
		if (p->rec.complete && ierr.code != EPROTO) {
			*err = ierr;
			return -1;
		}
		if (p->o.notice) { /* damaged: played without drop positions and checksums */
			char msg[700];
			snprintf(msg, sizeof(msg),
				 "%s (nvtape verify tells more): played without the drop positions "
				 "and chunk checksums",
				 ierr.msg);
			p->o.notice(msg, p->o.arg);
		}
		return 0;
	}
	p->ev = ix.ev;
	p->nev = ix.nev;
	p->crc = ix.crc;
	p->ncrc = ix.ncrc;
	ix.ev = NULL;
	ix.crc = NULL;
	nvt_index_clear(&ix); /* the times and metadata are not played */
	return 0;
}

static void publish_in_order(struct nvt_player *p)
{
	uint64_t prefill = p->total < p->ring.nchunks ? p->total : p->ring.nchunks;
	uint64_t k, off, len;

	while (nvt_pump_ready(&p->pump, &k, &off, &len)) {
		if (p->ncrc)
			check_sums(p, k, len);
		nvt_pump_retire(&p->pump, 0);
		atomic_fetch_add(&p->bytes_read, len);
	}
	if (p->pump.retired == p->total && !nvt_ring_closed(&p->ring))
		nvt_ring_close(&p->ring);
	if (!atomic_load(&p->ready) && p->pump.retired >= prefill)
		set_ready(p);
}

static void read_loop(struct nvt_player *p)
{
	struct nvt_io_done d[64];
	uint64_t now = nvt_mono_ns(), t_progress = now;

	p->t_read0 = now;
	while (!nvt_ring_aborted(&p->ring) && !atomic_load(&p->stop) && !atomic_load(&p->failed) &&
	       !nvt_ring_closed(&p->ring)) {
		issue_reads(p);
		if (p->eng.ops->submit(&p->eng) < 0)
			fail(p, EIO, "io_uring submit failed");
		int n = p->eng.ops->reap(&p->eng, d, 64, 100000000);
		if (n < 0)
			fail(p, -n, "waiting for reads: %s", strerror(-n));
		now = nvt_mono_ns();
		for (int i = 0; i < n; i++)
			if (read_done(p, &d[i]))
				t_progress = p->t_read_end = now;
		publish_in_order(p);
		atomic_store(&p->inflight_seen, p->eng.inflight);
		if (p->eng.inflight && now - t_progress > p->o.timeout_ns) {
			char who[256];
			nvt_engine_stuck(&p->eng, who, sizeof(who));
			fail(p, ETIMEDOUT,
			     "playback stalled: no read completed for %.1f s (%u reads in flight; "
			     "drive hung?)%s",
			     p->o.timeout_ns / 1e9, p->eng.inflight, who);
		}
		if (!p->eng.inflight)
			t_progress = now;
	}
	/* reads still in flight land before the ring goes away; those in order before a failed
	 * one are still handed on */
	uint64_t deadline = p->o.timeout_ns > UINT64_MAX - nvt_mono_ns()
				    ? UINT64_MAX
				    : nvt_mono_ns() + p->o.timeout_ns;
	while (p->eng.inflight && nvt_mono_ns() < deadline) {
		int n = p->eng.ops->reap(&p->eng, d, 64, 100000000);
		if (n < 0)
			break;
		for (int i = 0; i < n; i++)
			read_done(p, &d[i]);
	}
	if (!nvt_ring_aborted(&p->ring))
		publish_in_order(p);
	nvt_ring_close(&p->ring);
	set_ready(p);
}

static int open_io(struct nvt_player *p, struct nvt_err *err);

static void *read_thread(void *arg)
{
	struct nvt_player *p = arg;
	uint64_t c0;

	prctl(PR_SET_NAME, "nvt-read");
	/* the read thread opens the engine itself: its io_uring has a single issuer */
	p->open_rc = open_io(p, &p->err);
	if (p->open_rc) {
		nvt_engine_close(&p->eng);
		set_ready(p);
		return NULL;
	}
	c0 = nvt_thread_cpu_ns();
	read_loop(p);
	p->cpu_ns = nvt_thread_cpu_ns() - c0;
	/* the io_uring's single issuer takes it down, letting go of its files at once */
	nvt_engine_close(&p->eng);
	return NULL;
}

static int open_recording(struct nvt_player *p, struct nvt_err *err)
{
	struct nvt_recording *rec = &p->rec;

	nvt_layout_resolve(&p->o.layout, p->o.path, &p->layout);
	if (nvt_recording_open(&p->layout, rec, err))
		return -(err->code ? err->code : EIO);
	if (rec->format == NVT_FMT_NVTAPE && read_index(p, err))
		return -(err->code ? err->code : EIO);
	if (rec->valid_bytes < rec->beat_bytes) {
		nvt_err_set(err, ENODATA, "%s holds no data to play", p->layout.path[0]);
		return -ENODATA;
	}
	if (!rec->complete && p->o.notice) {
		char msg[512];
		snprintf(msg, sizeof(msg),
			 "%s is incomplete (its writer died): playing the %llu bytes its last "
			 "checkpoint vouches for; nvtape recover finalizes it",
			 p->layout.path[0], (unsigned long long)rec->valid_bytes);
		p->o.notice(msg, p->o.arg);
	}
	p->valid = rec->valid_bytes - rec->valid_bytes % rec->beat_bytes;
	p->per_pass = (p->valid + p->o.chunk_bytes - 1) / p->o.chunk_bytes;
	p->total = p->o.loops ? p->per_pass * p->o.loops : UINT64_MAX;
	if (p->o.loops && p->total / p->o.loops != p->per_pass) {
		nvt_err_param(err, "too many loops: %llu passes of %llu chunks overflow",
			      (unsigned long long)p->o.loops, (unsigned long long)p->per_pass);
		return -EINVAL;
	}
	return 0;
}

static int open_io(struct nvt_player *p, struct nvt_err *err)
{
	struct nvt_engine_params ep = {0};
	int rc = nvt_ring_create(&p->ring, p->o.chunks, p->o.chunk_bytes, 0, err);

	if (rc)
		return rc;
	if (p->ring.notice[0] && p->o.notice)
		p->o.notice(p->ring.notice, p->o.arg);
	nvt_ring_wake_on_release(&p->ring); /* the reader wants every release */
	ep.path = p->layout.path[0];
	ep.layout = &p->layout;
	ep.qd = p->o.qd;
	ep.cmd_timeout_ns = p->o.timeout_ns;
	ep.bufs = p->ring.mem;
	ep.buf_bytes = p->o.chunk_bytes;
	ep.nbufs = p->o.chunks;
	ep.buf_phase = p->rec.data_offset;
	ep.wake_fd = nvt_ring_producer_fd(&p->ring);
	rc = nvt_pump_init(&p->pump, &p->ring, &p->eng, NVT_IO_READ, err);
	if (rc)
		return rc;
	if (nvt_engine_open(&p->eng, nvt_engine_for(p->o.engine, &p->layout), &ep, err))
		return -(err->code ? err->code : EIO);
	return 0;
}

static void destroy(struct nvt_player *p)
{
	nvt_engine_close(&p->eng);
	nvt_ring_destroy(&p->ring);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->ready_cv);
	nvt_pump_free(&p->pump);
	free(p->ev);
	free(p->crc);
	free(p);
}

int nvt_player_open(const struct nvt_play_opts *o, struct nvt_player **out, struct nvt_err *err)
{
	struct nvt_player *p;
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	p->first_bad = UINT64_MAX;
	nvt_play_opts_init(&p->o);
	rc = nvt_opts_merge(&p->o, sizeof(p->o), o, "nvt_play_opts_init", err);
	if (!rc && (p->o.chunk_bytes < NVT_BLOCK || p->o.chunk_bytes % NVT_BLOCK ||
		    p->o.chunks < 2 || p->o.qd < 1 || p->o.timeout_ns == 0)) {
		nvt_err_param(err,
			      "chunk size must be a multiple of 4 KiB, with at least 2 chunks, "
			      "a queue depth of at least 1 and a stall timeout");
		rc = -EINVAL;
	}
	if (rc) {
		free(p);
		return rc;
	}
	nvt_ring_init(&p->ring);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready_cv, NULL);
	rc = open_recording(p, err);
	if (!rc) {
		rc = -pthread_create(&p->thread, NULL, read_thread, p);
		if (rc)
			nvt_err_set(err, -rc, "cannot start the read thread: %s", strerror(-rc));
	}
	if (rc) {
		destroy(p);
		return rc;
	}
	pthread_mutex_lock(&p->lock);
	while (!atomic_load(&p->ready))
		pthread_cond_wait(&p->ready_cv, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (p->open_rc) {
		pthread_join(p->thread, NULL);
		*err = p->err;
		rc = p->open_rc;
		destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

const struct nvt_recording *nvt_player_recording(const struct nvt_player *p)
{
	return &p->rec;
}

int nvt_player_drops(const struct nvt_player *p, const struct nvt_drop_event **ev, uint64_t *n)
{
	*ev = p->ev;
	*n = p->nev;
	return 0;
}

int nvt_player_next(struct nvt_player *p, struct nvt_chunk *c, unsigned flags)
{
	for (;;) {
		if (p->taken < nvt_ring_published(&p->ring)) {
			uint64_t k = p->taken++;
			c->data = nvt_ring_chunk(&p->ring, k);
			c->bytes = nvt_ring_len(&p->ring, k);
			c->offset = chunk_offset(p, k);
			c->pass = k / p->per_pass;
			return 0;
		}
		if (nvt_ring_closed(&p->ring) && p->taken == nvt_ring_published(&p->ring)) {
			if (atomic_load(&p->failed))
				return -(p->err.code ? p->err.code : EIO);
			return atomic_load(&p->stop) ? -ECANCELED : -ENODATA;
		}
		if (flags & NVT_NEXT_NOWAIT)
			return -EAGAIN;
		nvt_ring_wait_published(&p->ring, 100);
	}
}

void nvt_player_release(struct nvt_player *p)
{
	if (nvt_ring_released(&p->ring) < p->taken)
		nvt_ring_release(&p->ring);
}

void nvt_player_stop(struct nvt_player *p)
{
	atomic_store(&p->stop, 1);
	nvt_ring_wake_producer(&p->ring);
}

void nvt_player_stats(struct nvt_player *p, struct nvt_play_stats *st)
{
	st->bytes_read = atomic_load(&p->bytes_read);
	st->reads_inflight = atomic_load(&p->inflight_seen);
	st->ring_fill = nvt_ring_fill(&p->ring);
	st->ring_chunks = p->ring.nchunks;
}

int nvt_player_close(struct nvt_player *p, struct nvt_play_result *res)
{
	int rc;

	nvt_player_stop(p);
	nvt_ring_abort(&p->ring);
	pthread_join(p->thread, NULL);
	rc = atomic_load(&p->failed) ? -(p->err.code ? p->err.code : EIO) : 0;
	if (res) {
		res->rec = p->rec;
		res->st.bytes_read = atomic_load(&p->bytes_read);
		res->read_seconds =
			p->t_read_end > p->t_read0 ? (p->t_read_end - p->t_read0) / 1e9 : 0;
		res->read_cpu_ns = p->cpu_ns;
		res->max_inflight = p->pump.max_inflight;
		res->sums_checked = p->ncrc > 0;
		res->sums_good = p->sums_good + p->sums.good;
		res->sums_bad = p->sums_bad + p->sums.bad;
		res->first_bad_offset = p->first_bad;
		/* a read that failed is the cause; the sink only saw the ring end under it */
		if (p->err.code && (!res->err.code || atomic_load(&p->failed)))
			res->err = p->err;
	}
	destroy(p);
	return rc;
}
