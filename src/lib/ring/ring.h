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
	int mem_fd;   /* NVT_RING_SHARED: the sealed memfd behind mem, else -1 */
};

/* nvt_ring_create() flags */
#define NVT_RING_SHARED (1u << 0) /* in a memfd another process can map (mem_fd) */

/* An empty ring (destroy is safe on it). */
void nvt_ring_init(struct nvt_ring *r);
/* Allocate n x chunk_bytes (chunk a multiple of 4096). Hugepages when reserved, otherwise
 * THP-advised, locked, pre-faulted memory and ring->notice says how to reserve hugepages. */
int nvt_ring_create(struct nvt_ring *r, unsigned n, uint64_t chunk_bytes, unsigned flags,
		    struct nvt_err *err);
void nvt_ring_destroy(struct nvt_ring *r);

static inline uint8_t *nvt_ring_chunk(const struct nvt_ring *r, uint64_t seq)
{
	return r->mem + (seq % r->nchunks) * r->chunk_bytes;
}
static inline uint64_t nvt_ring_fill(struct nvt_ring *r)
{
	/* tail first: read from a third thread, head can only have grown since */
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	return atomic_load_explicit(&r->head, memory_order_acquire) - tail;
}

/* Producer side. */
bool nvt_ring_can_produce(struct nvt_ring *r);              /* chunk `head` is free */
int nvt_ring_wait_free(struct nvt_ring *r, int timeout_ms); /* 0 free, -ETIME, -ECANCELED */
void nvt_ring_publish(struct nvt_ring *r, uint32_t bytes);
void nvt_ring_publish_flags(struct nvt_ring *r, uint32_t bytes, uint32_t flags);
void nvt_ring_close(struct nvt_ring *r);

/* Consumer side. */
static inline uint64_t nvt_ring_published(const struct nvt_ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire);
}
static inline uint64_t nvt_ring_released(const struct nvt_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire);
}
/* Bytes the producer put into published chunk seq. */
static inline uint64_t nvt_ring_len(const struct nvt_ring *r, uint64_t seq)
{
	return r->fill[seq % r->nchunks];
}
static inline bool nvt_ring_closed(const struct nvt_ring *r)
{
	return atomic_load(&r->closed) != 0;
}
static inline bool nvt_ring_aborted(const struct nvt_ring *r)
{
	return atomic_load(&r->aborted) != 0;
}
static inline uint64_t nvt_ring_hwm(const struct nvt_ring *r)
{
	return atomic_load(&r->hwm);
}
/* The chunk the producer fills next (valid while nvt_ring_can_produce()). */
static inline uint8_t *nvt_ring_next_free(const struct nvt_ring *r)
{
	return nvt_ring_chunk(r, atomic_load_explicit(&r->head, memory_order_relaxed));
}
void nvt_ring_release(struct nvt_ring *r); /* oldest chunk back to the producer */
/* Sleep until a chunk is published or the ring closes, timeout_ms at most. */
void nvt_ring_wait_published(struct nvt_ring *r, int timeout_ms);
/* The descriptors an engine can watch beside its completions: readable on publish / close
 * (the consumer's) and on release / abort (the producer's). */
static inline int nvt_ring_consumer_fd(const struct nvt_ring *r)
{
	return r->cons_efd;
}
static inline int nvt_ring_producer_fd(const struct nvt_ring *r)
{
	return r->prod_efd;
}
void nvt_ring_abort(struct nvt_ring *r);
/* The producer watches prod_efd itself (an engine's wake fd): signal every release. */
static inline void nvt_ring_wake_on_release(struct nvt_ring *r)
{
	atomic_store(&r->prod_waiting, 1);
}
/* Wake a producer waiting for a free chunk (async-signal-safe). */
void nvt_ring_wake_producer(struct nvt_ring *r);

#endif
