/* SPDX-License-Identifier: MIT */
/* Chunk checksums (sums.c): the writer's list of CRC32C spans, bounded in memory, and the
 * reader's check of data streamed in order against them. */
#ifndef NVT_FORMAT_SUMS_H
#define NVT_FORMAT_SUMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape/format.h"

/* spans the writer keeps; past it, neighbours merge pairwise (nvt_crc32c_combine) */
#define NVT_SUMS_MAX (1u << 20)

struct nvt_sums {
	struct nvt_chunk_crc *e;
	struct nvt_chunk_time *t; /* the capture time of each span's first byte (0: unknown) */
	uint64_t n, cap, max;
	uint32_t granule; /* chunks per span now (doubles at each merge) */
	uint64_t end;     /* data bytes covered */
	bool oom;         /* out of memory: the list stopped growing */
};

void nvt_sums_init(struct nvt_sums *s, uint64_t max);
void nvt_sums_free(struct nvt_sums *s);
/* The next chunk of the data: len bytes with this CRC32C, its first byte captured at time_ns
 * (CLOCK_REALTIME; 0 unknown). */
void nvt_sums_add(struct nvt_sums *s, uint64_t len, uint32_t crc, uint64_t time_ns);
/* Place a span of len bytes after the last one without counting it (e[n], t[n]): a prefix of
 * the chunk being filled that a checkpoint made durable, for that checkpoint's index only.
 * false when there is no memory for it. */
bool nvt_sums_stage(struct nvt_sums *s, uint64_t len, uint32_t crc, uint64_t time_ns);

/* The reader's side: spans checked as the data passes, in order. */
struct nvt_sums_check {
	const struct nvt_chunk_crc *e;
	uint64_t n, i;    /* spans, the next one */
	uint64_t limit;   /* data bytes to check (spans ending beyond are not) */
	uint64_t pos;     /* data bytes seen */
	uint32_t crc;     /* of span i so far */
	bool broken;      /* the spans do not follow each other: the index is damaged */
	uint64_t skipped; /* spans inside limit the data jumped over */
	uint64_t good, bad, bad_bytes, checked_bytes;
	/* a span whose data does not match (optional) */
	void (*on_bad)(void *arg, const struct nvt_chunk_crc *span, uint32_t found);
	void *arg;
};

void nvt_sums_check_init(struct nvt_sums_check *c, const struct nvt_chunk_crc *e, uint64_t n,
			 uint64_t limit);
/* len bytes of data from data offset off (the scan's order; a jump ends the span it is in
 * unchecked) */
void nvt_sums_check_feed(struct nvt_sums_check *c, const void *buf, uint64_t len, uint64_t off);
/* Spans that lie inside limit: every one of them must have been fed. true when they were. */
bool nvt_sums_check_complete(const struct nvt_sums_check *c);

#endif
