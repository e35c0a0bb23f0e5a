/* SPDX-License-Identifier: MIT */
/* The ring: N equal chunks in one hugepage mapping, passed from one producer to one consumer
 * and released strictly in order. The chunk a source fills is the chunk the engine DMAs. */
#ifndef NVTAPE_RING_H
#define NVTAPE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape/nvtape.h"

#define NVT_HUGEPAGE (2u << 20)

struct nvt_ring {
	uint8_t *mem;
	size_t map_bytes;
	uint64_t chunk_bytes;
	unsigned nchunks;
	bool hugetlb;          /* 2 MiB hugepages from the reserved pool */
	bool locked;           /* fallback memory is mlock()ed */
	char notice[256];      /* said once when the fallback was used ("" otherwise) */
	uint32_t *fill;        /* valid bytes per chunk, written before publish */
	uint32_t *flags;       /* per-chunk flags for the consumer, written before publish */
	_Atomic uint64_t head; /* chunks published by the producer */
	_Atomic uint64_t tail; /* chunks released by the consumer */
	_Atomic uint64_t hwm;  /* highest head - tail observed */
	_Atomic int closed;    /* the producer has published its last chunk */
	_Atomic int aborted;   /* the consumer gave up: the producer must stop */
	_Atomic int prod_waiting;
	int prod_efd; /* eventfd: producer sleeps here until a chunk is released */
	int cons_efd; /* eventfd: consumer is woken here on publish / close */
};

/* Allocate n x chunk_bytes (chunk a multiple of 4096). Hugepages when reserved, otherwise
 * THP-advised, locked, pre-faulted memory and ring->notice says how to reserve hugepages. */
int nvt_ring_create(struct nvt_ring *r, unsigned n, uint64_t chunk_bytes, struct nvt_err *err);
void nvt_ring_destroy(struct nvt_ring *r);

static inline uint8_t *nvt_ring_chunk(const struct nvt_ring *r, uint64_t seq)
{
	return r->mem + (seq % r->nchunks) * r->chunk_bytes;
}
static inline uint64_t nvt_ring_fill(struct nvt_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) -
	       atomic_load_explicit(&r->tail, memory_order_acquire);
}

/* Producer side. */
bool nvt_ring_can_produce(struct nvt_ring *r);              /* chunk `head` is free */
int nvt_ring_wait_free(struct nvt_ring *r, int timeout_ms); /* 0 free, -ETIME, -ECANCELED */
void nvt_ring_publish(struct nvt_ring *r, uint32_t bytes);
void nvt_ring_publish_flags(struct nvt_ring *r, uint32_t bytes, uint32_t flags);
void nvt_ring_close(struct nvt_ring *r);

/* Consumer side. */
static inline uint64_t nvt_ring_published(struct nvt_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire);
}
void nvt_ring_release(struct nvt_ring *r); /* oldest chunk back to the producer */
void nvt_ring_abort(struct nvt_ring *r);
/* Wake a producer waiting for a free chunk (async-signal-safe). */
void nvt_ring_wake_producer(struct nvt_ring *r);

#endif
