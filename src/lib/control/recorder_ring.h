/* SPDX-License-Identifier: MIT */
/* An internal view of a recorder's ring for zero-copy sources whose device DMAs into several
 * ring chunks at once (the fdrec source registers every chunk with its driver): where the
 * chunks are, and how many the I/O thread has written and released, so the source hands a
 * chunk back to its device only once the storage is done with it. The data still goes through
 * nvt_recorder_acquire()/commit() on the producer thread: acquire() returns the chunk the
 * device filled, in ring order, and commit() publishes it without a copy. */
#ifndef NVTAPE_RECORDER_RING_H
#define NVTAPE_RECORDER_RING_H

#include <stdbool.h>
#include <stdint.h>

struct nvt_recorder;
struct nvt_record_result;

struct nvt_ring_view {
	uint8_t *mem;         /* chunk i at mem + i * chunk_bytes */
	uint64_t chunk_bytes; /* a multiple of 4096 */
	unsigned nchunks;
	int mem_fd;           /* nvt_record_opts.shared_ring: the memfd behind mem, else -1 */
	size_t map_bytes;     /* the mapping's length (>= nchunks * chunk_bytes) */
	uint64_t limit_bytes; /* the recording's size limit, 0 = none */
	bool hugetlb, locked; /* the ring's pages stay where they are (hugepages, or mlock) */
};

void nvt_recorder_ring_view(struct nvt_recorder *r, struct nvt_ring_view *v);
/* chunks the I/O thread has released since the start (chunk k is k % nchunks) */
uint64_t nvt_recorder_ring_released(struct nvt_recorder *r);
/* A one-time note for the user (nvt_record_opts.notice), from the source thread. */
void nvt_recorder_say(struct nvt_recorder *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What a device reports as it starts (the fdrec driver's START and GET_INFO), for the header:
 * the source gives it once, before its first commit; every header written from then on carries
 * it (an fdrec-format header its design version and source clock too). 0 leaves a field as
 * the options had it (first_seq is taken as it is). */
struct nvt_source_stamp {
	uint64_t first_seq;      /* the first beat's seq */
	uint64_t start_ns;       /* CLOCK_REALTIME when the device started */
	uint64_t rate_bps;       /* the rate the device was programmed with */
	uint64_t src_clk_hz;     /* the source clock */
	uint32_t design_version; /* the design's VERSION register, major << 16 | minor */
};
void nvt_recorder_source_stamp(struct nvt_recorder *r, const struct nvt_source_stamp *st);

/* fn(arg, rc, res) once the recording is final, from nvt_recorder_close() (rc: what it returns):
 * the shm source tells its producer how the recording ended. One; a later call replaces it. */
void nvt_recorder_at_close(struct nvt_recorder *r,
			   void (*fn)(void *arg, int rc, const struct nvt_record_result *res),
			   void *arg);

#endif
