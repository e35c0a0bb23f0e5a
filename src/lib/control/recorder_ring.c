/* SPDX-License-Identifier: MIT */
/* The recorder's ring seen by a zero-copy source (recorder_ring.h). */
#include "control/recorder_ring.h"
#include "control/recorder_int.h"

void nvt_recorder_ring_view(struct nvt_recorder *r, struct nvt_ring_view *v)
{
	v->mem = r->ring.mem;
	v->chunk_bytes = r->ring.chunk_bytes;
	v->nchunks = r->ring.nchunks;
}

uint64_t nvt_recorder_ring_released(struct nvt_recorder *r)
{
	return nvt_ring_released(&r->ring);
}
