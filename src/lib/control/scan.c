/* SPDX-License-Identifier: MIT */
/* Sequential O_DIRECT reading with several reads in flight through the file engine, delivering
 * chunks in order. Reading and checking overlap: while one chunk is checked, qd are read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/engine.h"
#include "nvtape/layout.h"
#include "ring/pump.h"
#include "ring/ring.h"
#include "control/scan.h"
#include "util/sysutil.h"

#define NVT_SCAN_STALL_NS 30000000000ull

struct scanner {
	const struct nvt_scan_opts *o;
	struct nvt_scan_stats *st;
	struct nvt_ring mem;
	struct nvt_engine eng;
	struct nvt_pump pump;
	uint64_t nchunks;
};

static uint64_t chunk_len(const struct scanner *s, uint64_t k)
{
	uint64_t pos = k * s->o->chunk_bytes;
	return s->o->len - pos < s->o->chunk_bytes ? s->o->len - pos : s->o->chunk_bytes;
}

/* Keep qd reads in flight, as far as free buffers allow. */
static void issue_reads(struct scanner *s)
{
	while (s->pump.queued < s->nchunks && nvt_pump_can_queue(&s->pump)) {
		uint64_t k = s->pump.queued;
		if (nvt_pump_queue(&s->pump, s->o->offset + k * s->o->chunk_bytes, chunk_len(s, k)))
			break;
	}
	s->st->max_inflight = s->pump.max_inflight;
	s->eng.ops->submit(&s->eng);
}

static int open_io(struct scanner *s, struct nvt_err *err)
{
	const struct nvt_scan_opts *o = s->o;
	struct nvt_engine_params ep = {0};
	unsigned n =
		(unsigned)(s->nchunks < o->chunks ? (s->nchunks < 2 ? 2 : s->nchunks) : o->chunks);

	if (nvt_ring_create(&s->mem, n, o->chunk_bytes, 0, err))
		return -ENOMEM;
	if (s->mem.notice[0] && o->notice)
		o->notice(s->mem.notice, o->user_arg);
	ep.path = o->layout->path[0];
	ep.layout = o->layout;
	ep.qd = o->qd;
	ep.cmd_timeout_ns = NVT_SCAN_STALL_NS / 3;
	ep.bufs = s->mem.mem;
	ep.buf_bytes = o->chunk_bytes;
	ep.nbufs = s->mem.nchunks;
	ep.buf_phase = o->offset;
	ep.wake_fd = -1;
	if (nvt_pump_init(&s->pump, &s->mem, &s->eng, NVT_IO_READ, err))
		return -ENOMEM;
	if (nvt_engine_open(&s->eng, nvt_engine_for(o->engine, o->layout), &ep, err))
		return -EIO;
	return 0;
}

static int stalled(struct scanner *s, struct nvt_err *err)
{
	char who[256];

	nvt_engine_stuck(&s->eng, who, sizeof(who));
	nvt_err_set(err, ETIMEDOUT,
		    "reading stalled: no read of %s completed for %.0f s (%u in flight; drive "
		    "hung?)%s",
		    s->o->layout->path[0], NVT_SCAN_STALL_NS / 1e9, s->eng.inflight, who);
	if (s->eng.fault[0])
		nvt_err_set(err, ETIMEDOUT, "reading failed on %s", s->eng.fault);
	return -ETIMEDOUT;
}

static int read_failed(struct scanner *s, const struct nvt_io_done *d, uint64_t k, uint64_t need,
		       struct nvt_err *err)
{
	nvt_err_set(err, d->res < 0 ? (int)-d->res : EIO,
		    "read of %llu bytes at offset %llu %s%s: %s", (unsigned long long)need,
		    (unsigned long long)(s->o->offset + k * s->o->chunk_bytes),
		    s->eng.fault[0] ? "failed on " : "of ",
		    s->eng.fault[0] ? s->eng.fault : s->o->layout->path[0],
		    d->res < 0 ? strerror((int)-d->res)
			       : "short read (file shorter than its header says)");
	return -EIO;
}

/* Deliver landed chunks in order; each delivered buffer goes straight back to the drive. */
static bool deliver(struct scanner *s)
{
	uint64_t k, off, len;

	while (nvt_pump_ready(&s->pump, &k, &off, &len)) {
		nvt_pump_retire(&s->pump, 0);
		bool stop = s->o->on_chunk(s->o->arg, nvt_ring_chunk(&s->mem, k), len, off);
		nvt_ring_release(&s->mem);
		s->st->bytes += len;
		if (s->o->progress)
			s->o->progress(s->st->bytes, s->o->len, s->o->user_arg);
		if (stop)
			return true;
		issue_reads(s);
	}
	return false;
}

static int scan_loop(struct scanner *s, struct nvt_err *err)
{
	uint64_t t_progress = nvt_mono_ns();
	bool stop = false;
	int rc = 0;

	issue_reads(s);
	while (!stop && !rc && s->pump.retired < s->nchunks) {
		struct nvt_io_done d[64];
		int n = s->eng.ops->reap(&s->eng, d, 64, 1000000000);
		if (n < 0) {
			nvt_err_set(err, -n, "waiting for reads: %s", strerror(-n));
			rc = n;
		} else if (n > 0) {
			t_progress = nvt_mono_ns();
		} else if (nvt_mono_ns() - t_progress > NVT_SCAN_STALL_NS) {
			rc = stalled(s, err);
		}
		for (int i = 0; i < n && !rc; i++) {
			uint64_t k, need;
			if (nvt_pump_complete(&s->pump, &d[i], &k, &need) < 0)
				rc = read_failed(s, &d[i], k, need, err);
		}
		if (!rc)
			stop = deliver(s);
		if (!rc && !stop && nvt_interrupted(s->o->interrupt)) {
			nvt_err_set(err, EINTR, "interrupted after %llu of %llu bytes",
				    (unsigned long long)s->st->bytes,
				    (unsigned long long)s->o->len);
			rc = -EINTR;
		}
	}
	return rc;
}

int nvt_scan(const struct nvt_scan_opts *o, struct nvt_scan_stats *st, struct nvt_err *err)
{
	struct scanner s = {.o = o, .st = st};
	uint64_t t0 = nvt_mono_ns(), c0 = nvt_thread_cpu_ns();
	int rc;

	memset(st, 0, sizeof(*st));
	nvt_ring_init(&s.mem);
	s.nchunks = (o->len + o->chunk_bytes - 1) / o->chunk_bytes;
	rc = open_io(&s, err);
	if (!rc)
		rc = scan_loop(&s, err);
	/* let reads still in flight land before the memory goes away (not after a stall) */
	while (s.eng.ops && s.eng.inflight && rc != -ETIMEDOUT) {
		struct nvt_io_done d[64];
		if (s.eng.ops->reap(&s.eng, d, 64, 1000000000) < 0)
			break;
	}
	st->seconds = (nvt_mono_ns() - t0) / 1e9;
	st->io_cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_engine_close(&s.eng);
	nvt_pump_free(&s.pump);
	nvt_ring_destroy(&s.mem);
	return rc;
}
