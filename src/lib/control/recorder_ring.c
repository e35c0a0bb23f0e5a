/* SPDX-License-Identifier: MIT */
/* The recorder's ring seen by a zero-copy source (recorder_ring.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "control/recorder_ring.h"
#include "control/recorder_int.h"
#include "format/lifecycle.h"
#include "nvtape/format.h"

void nvt_recorder_ring_view(struct nvt_recorder *r, struct nvt_ring_view *v)
{
	v->mem = r->ring.mem;
	v->chunk_bytes = r->ring.chunk_bytes;
	v->nchunks = r->ring.nchunks;
	v->mem_fd = r->ring.mem_fd;
	v->map_bytes = r->ring.map_bytes;
	v->limit_bytes = r->limit_bytes;
	v->hugetlb = r->ring.hugetlb;
	v->locked = r->ring.locked;
}

uint64_t nvt_recorder_ring_released(struct nvt_recorder *r)
{
	return nvt_ring_released(&r->ring);
}

void nvt_recorder_say(struct nvt_recorder *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nvt_rec_notice(r, "%s", msg);
}

void nvt_recorder_at_close(struct nvt_recorder *r,
			   void (*fn)(void *arg, int rc, const struct nvt_record_result *res),
			   void *arg)
{
	r->at_close = fn;
	r->at_close_arg = arg;
}

void nvt_recorder_source_stamp(struct nvt_recorder *r, const struct nvt_source_stamp *st)
{
	if (atomic_load_explicit(&r->stamped, memory_order_relaxed))
		return; /* once: the I/O thread may be reading it */
	r->stamp = *st;
	atomic_store_explicit(&r->stamped, 1, memory_order_release);
}

void nvt_rec_encode(struct nvt_recorder *r, void *blk)
{
	const struct nvt_source_stamp *st = &r->stamp;
	bool stamped = atomic_load_explicit(&r->stamped, memory_order_acquire);

	if (stamped) {
		r->rec.first_seq = st->first_seq;
		if (st->start_ns)
			r->rec.start_ns = st->start_ns;
		if (st->rate_bps)
			r->rec.rate_bps = st->rate_bps;
	}
	nvt_recording_encode(&r->rec, blk);
	if (stamped && r->rec.format == NVT_FMT_FDREC) {
		struct fdrec_header *h = blk;
		h->design_version = st->design_version;
		h->src_clk_hz = st->src_clk_hz;
	}
}
