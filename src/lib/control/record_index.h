/* SPDX-License-Identifier: MIT */
/* The drop index written with each checkpoint (record_index.c): where it goes, its writes, the
 * regions data writes must leave alone while a header on the disk may point at them. */
#ifndef NVT_CONTROL_RECORD_INDEX_H
#define NVT_CONTROL_RECORD_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* drop events the recorder keeps in memory; past it, drops join the last event */
#define NVT_REC_EVENTS_MAX (1u << 20)

struct nvt_rec_index {
	bool enabled, urgent, noted, write_failed, margin_fixed;
	uint64_t base, slot; /* two slots of slot bytes from base; slot 0: ahead of the data */
	uint64_t data_end;   /* data must end before it (a device's index slots), else max */
	uint64_t margin_min; /* growing files: the index at least this far ahead of the data */
	unsigned shrink; /* the margin divided by 2^shrink after the filesystem ran out of space */
	void *buf;       /* the encoded index, 4 KiB aligned */
	uint64_t cap, len;  /* buf's size, the padded index length (0: no index) */
	uint64_t off, sent; /* where it goes, bytes queued */
	unsigned pending;   /* writes in flight */
	uint64_t used, drops, nev;
	uint32_t crc;
	uint64_t lo[2], hi[2]; /* [0] the index of the durable header, [1] of the one in flight */
	uint64_t saved_off, saved_bytes, saved_events;
	uint32_t saved_crc;
};

struct nvt_recorder;

/* Bytes to reserve after the data for the index slots (a size was given). */
uint64_t nvt_rec_index_reserve(uint64_t data_bytes, uint32_t chunk_bytes);
/* Where the index can go for this target (after the engine is open). */
int nvt_rec_index_setup(struct nvt_recorder *r);
void nvt_rec_index_free(struct nvt_recorder *r);
/* A data write [off, off+len) would overlap an index a header may point at: it must wait, and
 * a checkpoint moves the index on (urgent). */
bool nvt_rec_index_blocks(struct nvt_recorder *r, uint64_t off, uint64_t len);
/* A checkpoint covering target data bytes: build and place its index (len 0: none). */
int nvt_rec_index_begin(struct nvt_recorder *r, uint64_t target);
/* Queue the index writes with tag; 0 once all are queued and completed, -EAGAIN before. */
int nvt_rec_index_send(struct nvt_recorder *r, uint64_t tag);
void nvt_rec_index_done(struct nvt_recorder *r, int64_t res);
bool nvt_rec_index_ready(const struct nvt_recorder *r);
/* The header about to be written points at the new index (or none); undo if it is not. */
void nvt_rec_index_apply(struct nvt_recorder *r);
void nvt_rec_index_undo(struct nvt_recorder *r);
/* That header is durable: the previous index's place is free. */
void nvt_rec_index_durable(struct nvt_recorder *r);
/* Where the final index of len bytes goes, at or after at. */
uint64_t nvt_rec_index_final_place(const struct nvt_recorder *r, uint64_t at, uint64_t len);
/* The end of the index regions a header may point at (0: none). */
uint64_t nvt_rec_index_live_end(const struct nvt_recorder *r);

#endif
