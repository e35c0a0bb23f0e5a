/* SPDX-License-Identifier: MIT */
/* Playback controller. The calling thread is the read thread: O_DIRECT reads through the
 * engine interface, qd in flight, published to the ring strictly in file order (--loop passes
 * are marked so the checker restarts its sequence); the ring is full before the sink starts;
 * a stall watchdog covers the reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "util/exit_compat.h"
#include "storage/engine.h"
#include "nvtape/play.h"
#include "ring/ring.h"
#include "stream/sink.h"
#include "util/sysutil.h"

void nvt_play_opts_default(struct nvt_play_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->loops = 1;
	o->timeout_ns = 10000000000ull;
	o->stats_ns = 1000000000ull;
	o->out_fd = 1;
}

struct player {
	const struct nvt_play_opts *o;
	struct nvt_play_result *res;
	struct nvt_ring ring;
	struct nvt_engine eng;
	struct nvt_sink sink;
	uint64_t valid, per_pass, total, issued, published;
	uint8_t *done;
	struct nvt_layout layout;
	bool sink_started, closed, failed;
	uint64_t t_read0, t_read_end;
};

static void notice(const struct nvt_play_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void notice(const struct nvt_play_opts *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!o->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->notice(msg, o->arg);
}

static uint64_t chunk_len(const struct player *p, uint64_t k)
{
	uint64_t pos = (k % p->per_pass) * p->o->chunk_bytes;
	return p->valid - pos < p->o->chunk_bytes ? p->valid - pos : p->o->chunk_bytes;
}

static int queue_read(struct player *p, uint64_t k, bool retry)
{
	struct nvt_io io = {.dir = NVT_IO_READ,
			    .buf = nvt_ring_chunk(&p->ring, k),
			    .len = (chunk_len(p, k) + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK,
			    .offset =
				    p->res->rec.data_offset + (k % p->per_pass) * p->o->chunk_bytes,
			    .buf_index = (int)(k % p->ring.nchunks),
			    .tag = k,
			    .blocking = retry};
	return p->eng.ops->queue(&p->eng, &io);
}

static void issue_reads(struct player *p)
{
	uint64_t tail = atomic_load(&p->ring.tail);

	while (!p->failed && p->issued < p->total && p->issued - tail < p->ring.nchunks &&
	       p->eng.inflight < p->eng.depth) {
		if (queue_read(p, p->issued, false))
			break;
		p->issued++;
		if (p->eng.inflight > p->res->max_inflight)
			p->res->max_inflight = p->eng.inflight;
	}
}

static void fail(struct player *p, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct player *p, int code, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	if (!p->res->err.code) {
		p->res->err.code = code ? code : EIO;
		va_start(ap, fmt);
		vsnprintf(p->res->err.msg, sizeof(p->res->err.msg), fmt, ap);
		va_end(ap);
	}
	nvt_sink_request_stop(&p->sink);
}

static void fill_stats(struct player *p, struct nvt_play_stats *st, uint64_t now)
{
	uint64_t t0 = atomic_load(&p->sink.t0_mono);

	st->elapsed_ns = t0 && now > t0 ? now - t0 : 0;
	st->bytes_played = atomic_load(&p->sink.consumed_bytes);
	st->reads_inflight = p->eng.inflight;
	st->ring_fill = nvt_ring_fill(&p->ring);
	st->ring_chunks = p->ring.nchunks;
	st->underflow_beats = atomic_load(&p->sink.underflow_beats);
	st->underflow_events = atomic_load(&p->sink.underflow_events);
	st->late_events = atomic_load(&p->sink.late_events);
	st->passes = p->sink.passes;
}

static int open_recording(const struct nvt_play_opts *o, const struct nvt_layout *L,
			  struct nvt_play_result *res, const struct nvt_sink_ops **sops)
{
	struct nvt_recording *rec = &res->rec;
	struct nvt_drop_event *ev = NULL;
	uint64_t nev = 0, after = 0;

	if (nvt_recording_open(L, rec, &res->err))
		return NVT_EXIT_RUNTIME;
	if (rec->complete && nvt_recording_read_index(L, rec, &ev, &nev, &res->err))
		return NVT_EXIT_RUNTIME;
	for (uint64_t i = 0; i < nev; i++)
		if (ev[i].data_offset >= rec->valid_bytes)
			after += ev[i].beats;
	free(ev);
	res->expected_gap_beats =
		rec->drop_count - (after < rec->drop_count ? after : rec->drop_count);
	/* the checker is the default; it only understands the test pattern */
	*sops = nvt_sink_find(o->sink ? o->sink : "checker");
	if (!*sops) {
		nvt_err_set(&res->err, EINVAL, "unknown sink \"%s\" (sinks: checker, stdout, null)",
			    o->sink);
		return NVT_EXIT_USAGE;
	}
	if ((*sops)->needs_pattern && rec->source_kind != NVT_SRC_TPG) {
		nvt_err_set(&res->err, EINVAL,
			    "%s is not a test-pattern recording (source %s): the checker has "
			    "nothing to check; play it with --sink stdout or --sink null",
			    o->path, nvt_source_kind_name(rec->source_kind));
		return NVT_EXIT_USAGE;
	}
	if (rec->valid_bytes < rec->beat_bytes) {
		nvt_err_set(&res->err, ENODATA, "%s holds no data to play", o->path);
		return NVT_EXIT_RUNTIME;
	}
	if (!rec->complete)
		notice(o,
		       "%s is incomplete (its writer died): playing the %llu bytes its last "
		       "checkpoint vouches for; nvtape recover finalizes it",
		       o->path, (unsigned long long)rec->valid_bytes);
	return NVT_EXIT_OK;
}

static void run_loop(struct player *p)
{
	const struct nvt_play_opts *o = p->o;
	struct nvt_io_done d[64];
	uint64_t now = nvt_mono_ns(), t_progress = now, next_stats = 0;
	uint64_t prefill = p->total < p->ring.nchunks ? p->total : p->ring.nchunks;

	p->res->st.ring_low = p->ring.nchunks;
	p->t_read0 = now;
	for (;;) {
		now = nvt_mono_ns();
		if (o->interrupt && *o->interrupt && !p->res->interrupted) {
			p->res->interrupted = true;
			nvt_sink_request_stop(&p->sink);
		}
		if (p->sink_started && atomic_load(&p->ring.aborted))
			break; /* the sink is done (drained, stopped or failed) */
		if (p->res->interrupted && !p->sink_started)
			break;
		if (p->failed && !p->sink_started)
			break;
		issue_reads(p);
		if (p->eng.ops->submit(&p->eng) < 0)
			fail(p, EIO, "io_uring submit failed");
		if (!p->sink_started && p->published >= prefill && !p->failed) {
			struct nvt_sink_params sp = {.rate_bps = o->rate_bps,
						     .beat_bytes = p->res->rec.beat_bytes,
						     .first_seq = p->res->rec.first_seq,
						     .fd = o->out_fd};
			p->sink.on_event = o->on_event;
			p->sink.arg = o->arg;
			if (nvt_sink_start(&p->sink, nvt_sink_find(o->sink), &sp, &p->ring,
					   &p->res->err)) {
				p->failed = true;
				break;
			}
			p->sink_started = true;
			next_stats = now + o->stats_ns;
		}
		if (!p->closed && p->published == p->total) {
			nvt_ring_close(&p->ring);
			p->closed = true;
		}
		uint64_t wake = now + 100000000ull;
		if (o->stats_ns && p->sink_started && next_stats < wake)
			wake = next_stats;
		int n = p->eng.ops->reap(&p->eng, d, 64, wake > now ? (int64_t)(wake - now) : 0);
		if (n < 0)
			fail(p, -n, "waiting for reads: %s", strerror(-n));
		now = nvt_mono_ns();
		for (int i = 0; i < n; i++) {
			uint64_t k = d[i].tag;
			if (k == NVT_TAG_WAKE)
				continue;
			uint64_t need = chunk_len(p, k);
			if (d[i].res == -EAGAIN && !p->failed && queue_read(p, k, true) == 0)
				continue; /* throttled: ask again */
			if (d[i].res < (int64_t)need) {
				fail(p, d[i].res < 0 ? (int)-d[i].res : EIO,
				     "read of %llu bytes at offset %llu of %s%s%s: %s",
				     (unsigned long long)need,
				     (unsigned long long)(p->res->rec.data_offset +
							  (k % p->per_pass) * o->chunk_bytes),
				     o->path, p->eng.fault[0] ? " failed on " : "", p->eng.fault,
				     d[i].res < 0 ? strerror((int)-d[i].res) : "short read");
				continue;
			}
			p->done[k % p->ring.nchunks] = 1;
			t_progress = p->t_read_end = now;
		}
		while (!p->failed && p->published < p->issued &&
		       p->done[p->published % p->ring.nchunks]) {
			uint64_t k = p->published;
			p->done[k % p->ring.nchunks] = 0;
			nvt_ring_publish_flags(&p->ring, (uint32_t)chunk_len(p, k),
					       k % p->per_pass == 0 ? NVT_CHUNK_PASS_START : 0);
			p->published++;
			p->res->st.bytes_read += chunk_len(p, k);
		}
		if (p->sink_started) {
			uint64_t fill = nvt_ring_fill(&p->ring);
			if (!p->closed && fill < p->res->st.ring_low)
				p->res->st.ring_low = fill;
		}
		if (p->eng.inflight && now - t_progress > o->timeout_ns)
			fail(p, ETIMEDOUT,
			     "playback stalled: no read completed for %.1f s (%u reads in flight; "
			     "drive hung?)",
			     o->timeout_ns / 1e9, p->eng.inflight);
		if (!p->eng.inflight)
			t_progress = now;
		if (o->stats_ns && p->sink_started && now >= next_stats && o->progress) {
			struct nvt_play_stats st = p->res->st;
			fill_stats(p, &st, now);
			o->progress(&st, o->arg);
			next_stats += o->stats_ns;
			if (next_stats < now)
				next_stats = now + o->stats_ns;
		}
	}
}

int nvt_play(const struct nvt_play_opts *o, struct nvt_play_result *res)
{
	struct player p;
	struct nvt_engine_params ep = {0};
	const struct nvt_sink_ops *sops = NULL;
	struct nvt_play_opts oo = *o;
	uint64_t c0;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&p, 0, sizeof(p));
	p.ring.prod_efd = p.ring.cons_efd = -1;
	nvt_layout_resolve(&o->layout, o->path, &p.layout);
	rc = open_recording(o, &p.layout, res, &sops);
	if (rc)
		return rc;
	oo.sink = sops->name;
	p.o = &oo;
	p.res = res;
	p.valid = res->rec.valid_bytes - res->rec.valid_bytes % res->rec.beat_bytes;
	p.per_pass = (p.valid + o->chunk_bytes - 1) / o->chunk_bytes;
	p.total = o->loops ? p.per_pass * o->loops : UINT64_MAX;
	if (nvt_ring_create(&p.ring, o->chunks, o->chunk_bytes, &res->err))
		return NVT_EXIT_RUNTIME;
	if (p.ring.notice[0])
		notice(o, "%s", p.ring.notice);
	atomic_store(&p.ring.prod_waiting, 1); /* the reader wants every release */
	ep.path = p.layout.path[0];
	ep.layout = &p.layout;
	ep.qd = o->qd;
	ep.cmd_timeout_ns = o->timeout_ns;
	ep.bufs = p.ring.mem;
	ep.buf_bytes = o->chunk_bytes;
	ep.nbufs = o->chunks;
	ep.buf_phase = p.res->rec.data_offset;
	ep.wake_fd = p.ring.prod_efd;
	p.done = calloc(o->chunks, 1);
	rc = NVT_EXIT_RUNTIME;
	if (!p.done) {
		nvt_err_set(&res->err, ENOMEM, "out of memory");
		goto out;
	}
	if (nvt_engine_open(&p.eng, nvt_engine_for(o->engine, &p.layout), &ep, &res->err))
		goto out;
	prctl(PR_SET_NAME, "nvt-read");
	c0 = nvt_thread_cpu_ns();
	run_loop(&p);
	nvt_sink_request_stop(&p.sink);
	nvt_sink_join(&p.sink);
	res->read_cpu_ns = nvt_thread_cpu_ns() - c0;
	/* reads still in flight land before the ring goes away */
	for (uint64_t deadline = nvt_mono_ns() + o->timeout_ns;
	     p.eng.inflight && nvt_mono_ns() < deadline;) {
		struct nvt_io_done d[64];
		if (p.eng.ops->reap(&p.eng, d, 64, 100000000) < 0)
			break;
	}
	if (p.sink.err.code && !res->err.code)
		res->err = p.sink.err;
	fill_stats(&p, &res->st, p.sink.end_mono ? p.sink.end_mono : nvt_mono_ns());
	res->seconds = res->st.elapsed_ns / 1e9;
	res->read_seconds = p.t_read_end > p.t_read0 ? (p.t_read_end - p.t_read0) / 1e9 : 0;
	res->sink_cpu_ns = p.sink.cpu_ns;
	res->chk = p.sink.chk;
	res->first_underflow_ns = p.sink.first_underflow_ns;
	res->max_late_ns = p.sink.max_late_ns;
	res->checked = sops == &nvt_sink_checker;
	res->complete = p.sink.finished && !p.failed && !res->interrupted && !res->err.code;
	if (res->st.underflow_beats)
		res->problems |= NVT_PP_UNDERFLOW;
	if (res->st.late_events)
		res->problems |= NVT_PP_LATE;
	if (res->checked) {
		uint64_t want = res->expected_gap_beats * res->st.passes;
		if (res->chk.corrupt)
			res->problems |= NVT_PP_ERRORS;
		if (res->chk.backward)
			res->problems |= NVT_PP_BACKWARD;
		if (res->rec.format == NVT_FMT_FDREC ? res->chk.gap_beats > want
						     : res->chk.gap_beats != want)
			res->problems |= NVT_PP_GAPS;
		if (res->chk.seen_good && res->chk.first_seen != res->rec.first_seq &&
		    !res->chk.corrupt)
			res->problems |= NVT_PP_FIRST;
	}
	if (!res->complete) {
		if (res->interrupted && !res->err.code)
			nvt_err_set(&res->err, EINTR, "interrupted: playback incomplete");
		rc = NVT_EXIT_RUNTIME;
	} else {
		rc = res->problems ? NVT_EXIT_DATA : NVT_EXIT_OK;
	}
out:
	nvt_engine_close(&p.eng);
	nvt_ring_destroy(&p.ring);
	free(p.done);
	return rc;
}
