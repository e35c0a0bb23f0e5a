/* SPDX-License-Identifier: MIT */
/* The in-order I/O pump between the ring and a storage engine, shared by recording (writes of
 * published chunks), playback and scanning (reads into free chunks). It owns the rules every
 * one of them needs: I/O number k uses ring slot k % n, whose memory is the engine's registered
 * buffer of the same index; a throttled block layer's EAGAIN is asked again as a blocking I/O;
 * and I/Os are handed on strictly in order, however they complete. */
#ifndef NVT_RING_PUMP_H
#define NVT_RING_PUMP_H

#include "ring/ring.h"
#include "storage/engine.h"

struct nvt_pump {
	struct nvt_ring *ring;
	struct nvt_engine *eng;
	enum nvt_io_dir dir;
	uint64_t *off, *len; /* per slot: byte offset on the target and bytes of its I/O */
	uint64_t *skip;      /* per slot (writes): leading bytes already on the target */
	uint8_t *done;       /* per slot: landed in full, not yet handed on */
	uint64_t queued;     /* I/Os queued so far: the next one is number `queued` */
	uint64_t retired;    /* I/Os handed on in order */
	unsigned max_inflight;
	uint64_t eagain_retries;
};

int nvt_pump_init(struct nvt_pump *p, struct nvt_ring *r, struct nvt_engine *e, enum nvt_io_dir dir,
		  struct nvt_err *err);
void nvt_pump_free(struct nvt_pump *p);

/* Writes: a published chunk waits for its write; reads: a ring slot is free for the next
 * read. Either way the engine has room in its queue. */
bool nvt_pump_can_queue(const struct nvt_pump *p);
/* Writes: bytes of the next published chunk. */
uint64_t nvt_pump_next_len(const struct nvt_pump *p);
/* Queue I/O number `queued` at byte offset off for len bytes (the I/O is rounded up to whole
 * 4 KiB blocks). 0, or -EBUSY when the engine's queue is full. */
int nvt_pump_queue(struct nvt_pump *p, uint64_t off, uint64_t len);
/* A write of which the first skip bytes (a multiple of 4096) are on the target already: only
 * the rest is written. */
int nvt_pump_queue_rest(struct nvt_pump *p, uint64_t off, uint64_t len, uint64_t skip);

/* One completion. 1: I/O *k landed in full; 0: nothing to do (asked again after EAGAIN, or a
 * wake-up); -1: I/O *k failed or came short (d->res says how; *want the bytes it needed). */
int nvt_pump_complete(struct nvt_pump *p, const struct nvt_io_done *d, uint64_t *k, uint64_t *want);

/* The oldest I/O not yet handed on, when it has landed: its number, offset and length. */
bool nvt_pump_ready(const struct nvt_pump *p, uint64_t *k, uint64_t *off, uint64_t *len);
/* Hand the oldest landed I/O on: a write's chunk goes back to the producer, a read's chunk is
 * published to the consumer (with flags). */
void nvt_pump_retire(struct nvt_pump *p, uint32_t flags);

/* I/Os queued and not yet handed on. */
static inline uint64_t nvt_pump_pending(const struct nvt_pump *p)
{
	return p->queued - p->retired;
}

#endif
