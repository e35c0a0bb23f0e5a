/* SPDX-License-Identifier: MIT */
/* An internal view of a recorder's ring for zero-copy sources whose device DMAs into several
 * ring chunks at once (the fdrec source registers every chunk with its driver): where the
 * chunks are, and how many the I/O thread has written and released, so the source hands a
 * chunk back to its device only once the storage is done with it. The data still goes through
 * nvt_recorder_acquire()/commit() on the producer thread: acquire() returns the chunk the
 * device filled, in ring order, and commit() publishes it without a copy. */
#ifndef NVTAPE_RECORDER_RING_H
#define NVTAPE_RECORDER_RING_H

#include <stdint.h>

struct nvt_recorder;

struct nvt_ring_view {
	uint8_t *mem;         /* chunk i at mem + i * chunk_bytes */
	uint64_t chunk_bytes; /* a multiple of 4096 */
	unsigned nchunks;
};

void nvt_recorder_ring_view(struct nvt_recorder *r, struct nvt_ring_view *v);
/* chunks the I/O thread has released since the start (chunk k is k % nchunks) */
uint64_t nvt_recorder_ring_released(struct nvt_recorder *r);

#endif
