/* SPDX-License-Identifier: MIT */
/* The recorder's ring seen by a zero-copy source (recorder_ring.h). */
#include <stdarg.h>
#include <stdio.h>

#include "control/recorder_ring.h"
#include "control/recorder_int.h"

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
