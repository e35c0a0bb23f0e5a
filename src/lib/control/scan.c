/* SPDX-License-Identifier: MIT */
/* Sequential O_DIRECT reading with several reads in flight through the file engine, delivering
 * chunks in order. Reading and checking overlap: while one chunk is checked, qd are read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/engine.h"
#include "nvtape/layout.h"
#include "ring/ring.h"
#include "control/scan.h"
#include "util/sysutil.h"

#define NVT_SCAN_STALL_NS 30000000000ull

struct scanner {
	const struct nvt_scan_opts *o;
	struct nvt_scan_stats *st;
	struct nvt_ring mem;
	struct nvt_engine eng;
	uint64_t nchunks, issued, delivered;
	uint8_t *done;
};

static uint64_t chunk_len(const struct scanner *s, uint64_t k)
{
	uint64_t pos = k * s->o->chunk_bytes;
	return s->o->len - pos < s->o->chunk_bytes ? s->o->len - pos : s->o->chunk_bytes;
}

static int queue_read(struct scanner *s, uint64_t k, bool retry)
{
	struct nvt_io io = {.dir = NVT_IO_READ,
			    .buf = nvt_ring_chunk(&s->mem, k),
			    .len = (chunk_len(s, k) + 4095) / 4096 * 4096,
			    .offset = s->o->offset + k * s->o->chunk_bytes,
			    .buf_index = (int)(k % s->mem.nchunks),
			    .tag = k,
			    .blocking = retry};
	return s->eng.ops->queue(&s->eng, &io);
}

/* Keep qd reads in flight, as far as free buffers allow. */
static void issue_reads(struct scanner *s)
{
	while (s->issued < s->nchunks && s->issued - s->delivered < s->mem.nchunks &&
	       s->eng.inflight < s->eng.depth) {
		if (queue_read(s, s->issued, false))
			break;
		s->issued++;
		if (s->eng.inflight > s->st->max_inflight)
			s->st->max_inflight = s->eng.inflight;
	}
	s->eng.ops->submit(&s->eng);
}

int nvt_scan(const struct nvt_scan_opts *o, struct nvt_scan_stats *st, struct nvt_err *err)
{
	struct scanner s = {.o = o, .st = st};
	struct nvt_engine_params ep = {0};
	uint64_t t0 = nvt_mono_ns(), c0 = nvt_thread_cpu_ns();
	int rc = 0;
	bool stop = false;

	memset(st, 0, sizeof(*st));
	s.nchunks = (o->len + o->chunk_bytes - 1) / o->chunk_bytes;
	if (nvt_ring_create(
		    &s.mem,
		    (unsigned)(s.nchunks < o->chunks ? (s.nchunks < 2 ? 2 : s.nchunks) : o->chunks),
		    o->chunk_bytes, err))
		return -ENOMEM;
	if (s.mem.notice[0] && o->notice)
		o->notice(s.mem.notice, o->user_arg);
	ep.path = o->layout->path[0];
	ep.layout = o->layout;
	ep.qd = o->qd;
	ep.cmd_timeout_ns = NVT_SCAN_STALL_NS / 3;
	ep.bufs = s.mem.mem;
	ep.buf_bytes = o->chunk_bytes;
	ep.nbufs = s.mem.nchunks;
	ep.buf_phase = o->offset;
	ep.wake_fd = -1;
	s.done = calloc(s.mem.nchunks, 1);
	if (!s.done || nvt_engine_open(&s.eng, nvt_engine_for(o->engine, o->layout), &ep, err)) {
		if (!s.done)
			nvt_err_set(err, ENOMEM, "out of memory");
		nvt_engine_close(&s.eng);
		nvt_ring_destroy(&s.mem);
		free(s.done);
		return -EIO;
	}
	issue_reads(&s);
	uint64_t t_progress = nvt_mono_ns();
	while (!stop && !rc && s.delivered < s.nchunks) {
		struct nvt_io_done d[64];
		int n = s.eng.ops->reap(&s.eng, d, 64, 1000000000);
		if (n < 0) {
			nvt_err_set(err, -n, "waiting for reads: %s", strerror(-n));
			rc = n;
		} else if (n > 0) {
			t_progress = nvt_mono_ns();
		} else if (nvt_mono_ns() - t_progress > NVT_SCAN_STALL_NS) {
			nvt_err_set(err, ETIMEDOUT,
				    "reading stalled: no read of %s completed for %.0f s (%u in "
				    "flight; drive hung?)",
				    o->layout->path[0], NVT_SCAN_STALL_NS / 1e9, s.eng.inflight);
			if (s.eng.fault[0])
				nvt_err_set(err, ETIMEDOUT, "reading failed on %s", s.eng.fault);
			rc = -ETIMEDOUT;
		}
		for (int i = 0; i < n && !rc; i++) {
			uint64_t k = d[i].tag, need = chunk_len(&s, k);
			if (d[i].res == -EAGAIN && queue_read(&s, k, true) == 0)
				continue; /* throttled: ask again */
			if (d[i].res < (int64_t)need) {
				nvt_err_set(
					err, d[i].res < 0 ? (int)-d[i].res : EIO,
					"read of %llu bytes at offset %llu%s%s: %s",
					(unsigned long long)need,
					(unsigned long long)(o->offset + k * o->chunk_bytes),
					s.eng.fault[0] ? " failed on " : "", s.eng.fault,
					d[i].res < 0
						? strerror((int)-d[i].res)
						: "short read (file shorter than its header says)");
				rc = -EIO;
				break;
			}
			s.done[k % s.mem.nchunks] = 1;
		}
		/* deliver in order; each delivered buffer goes straight back to the drive */
		while (!rc && !stop && s.delivered < s.issued &&
		       s.done[s.delivered % s.mem.nchunks]) {
			uint64_t len = chunk_len(&s, s.delivered);
			s.done[s.delivered % s.mem.nchunks] = 0;
			if (o->on_chunk(o->arg, nvt_ring_chunk(&s.mem, s.delivered), len,
					o->offset + s.delivered * o->chunk_bytes))
				stop = true;
			st->bytes += len;
			s.delivered++;
			if (o->progress)
				o->progress(st->bytes, o->len, o->user_arg);
			if (!stop)
				issue_reads(&s);
		}
	}
	/* let reads still in flight land before the memory goes away (not after a stall) */
	while (s.eng.inflight && rc != -ETIMEDOUT) {
		struct nvt_io_done d[64];
		if (s.eng.ops->reap(&s.eng, d, 64, 1000000000) < 0)
			break;
	}
	st->seconds = (nvt_mono_ns() - t0) / 1e9;
	st->io_cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_engine_close(&s.eng);
	nvt_ring_destroy(&s.mem);
	free(s.done);
	return rc;
}
