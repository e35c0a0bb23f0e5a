/* SPDX-License-Identifier: MIT */
/* The in-order I/O pump between the ring and a storage engine (see pump.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ring/pump.h"

int nvt_pump_init(struct nvt_pump *p, struct nvt_ring *r, struct nvt_engine *e, enum nvt_io_dir dir,
		  struct nvt_err *err)
{
	memset(p, 0, sizeof(*p));
	p->ring = r;
	p->eng = e;
	p->dir = dir;
	p->off = calloc(r->nchunks, sizeof(*p->off));
	p->len = calloc(r->nchunks, sizeof(*p->len));
	p->skip = calloc(r->nchunks, sizeof(*p->skip));
	p->done = calloc(r->nchunks, 1);
	if (!p->off || !p->len || !p->skip || !p->done) {
		nvt_pump_free(p);
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void nvt_pump_free(struct nvt_pump *p)
{
	free(p->off);
	free(p->len);
	free(p->skip);
	free(p->done);
	p->off = p->len = p->skip = NULL;
	p->done = NULL;
}

bool nvt_pump_can_queue(const struct nvt_pump *p)
{
	if (p->eng->inflight >= p->eng->depth)
		return false;
	if (p->dir == NVT_IO_WRITE)
		return p->queued < nvt_ring_published(p->ring);
	return p->queued - nvt_ring_released(p->ring) < p->ring->nchunks;
}

uint64_t nvt_pump_next_len(const struct nvt_pump *p)
{
	return nvt_ring_len(p->ring, p->queued);
}

static int submit_io(struct nvt_pump *p, uint64_t k, bool blocking)
{
	unsigned slot = (unsigned)(k % p->ring->nchunks);
	uint64_t skip = p->skip[slot];
	struct nvt_io io = {.dir = p->dir,
			    .buf = nvt_ring_chunk(p->ring, k) + skip,
			    .len = (p->len[slot] + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK - skip,
			    .offset = p->off[slot] + skip,
			    .buf_index = (int)slot,
			    .tag = k,
			    .blocking = blocking};

	return p->eng->ops->queue(p->eng, &io);
}

int nvt_pump_queue(struct nvt_pump *p, uint64_t off, uint64_t len)
{
	return nvt_pump_queue_rest(p, off, len, 0);
}

int nvt_pump_queue_rest(struct nvt_pump *p, uint64_t off, uint64_t len, uint64_t skip)
{
	unsigned slot = (unsigned)(p->queued % p->ring->nchunks);
	int rc;

	p->off[slot] = off;
	p->len[slot] = len;
	p->skip[slot] = skip;
	p->done[slot] = 0;
	rc = submit_io(p, p->queued, false);
	if (rc)
		return rc;
	p->queued++;
	if (p->eng->inflight > p->max_inflight)
		p->max_inflight = p->eng->inflight;
	return 0;
}

int nvt_pump_complete(struct nvt_pump *p, const struct nvt_io_done *d, uint64_t *k, uint64_t *want)
{
	unsigned slot;

	if (d->tag >= p->queued || d->tag < p->retired)
		return 0; /* a wake-up, or a tag that is not an I/O of this pump */
	*k = d->tag;
	slot = (unsigned)(d->tag % p->ring->nchunks);
	*want = p->len[slot];
	/* a throttled block layer may answer a non-blocking attempt with EAGAIN: ask again */
	if (d->res == -EAGAIN && submit_io(p, d->tag, true) == 0) {
		p->eagain_retries++;
		return 0;
	}
	/* a write must land whole blocks; a read needs at least the bytes that count */
	uint64_t need = p->dir == NVT_IO_WRITE
				? (*want + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK - p->skip[slot]
				: *want;
	if (d->res < 0 || (uint64_t)d->res < need)
		return -1;
	p->done[slot] = 1;
	return 1;
}

bool nvt_pump_ready(const struct nvt_pump *p, uint64_t *k, uint64_t *off, uint64_t *len)
{
	unsigned slot = (unsigned)(p->retired % p->ring->nchunks);

	if (p->retired == p->queued || !p->done[slot])
		return false;
	*k = p->retired;
	*off = p->off[slot];
	*len = p->len[slot];
	return true;
}

void nvt_pump_retire(struct nvt_pump *p, uint32_t flags)
{
	unsigned slot = (unsigned)(p->retired % p->ring->nchunks);

	p->done[slot] = 0;
	if (p->dir == NVT_IO_WRITE)
		nvt_ring_release(p->ring);
	else
		nvt_ring_publish_flags(p->ring, (uint32_t)p->len[slot], flags);
	p->retired++;
}
