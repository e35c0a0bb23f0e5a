/* SPDX-License-Identifier: MIT */
/* The header's life while recording, in one place: what begin, each checkpoint and the finish
 * set, and the fields every reader derives (complete, valid_bytes); the drive identity strings
 * it stores. */
#ifndef NVT_FORMAT_LIFECYCLE_H
#define NVT_FORMAT_LIFECYCLE_H

#include "nvtape/format.h"

/* An Identify string (space-padded, not terminated) of n bytes, trimmed, into dst. */
void nvt_id_str(char *dst, size_t cap, const char *src, size_t n);
void nvt_drive_from_id(struct nvt_drive *d, const struct nvt_drive_id *id);

/* Version, data offset, host, writer and start time of a recording about to be written. */
void nvt_recording_begin(struct nvt_recording *rec, uint64_t now_real_ns);
/* The 4096-byte header block in the recording's own format (nvtape or fdrec). For nvtape,
 * blk4096 holds the block as last written (any bytes before the first write): a new
 * generation goes into its slot and the other slot stays as it is on disk. */
void nvt_recording_encode(struct nvt_recording *rec, void *blk4096);
/* A checkpoint: durable_bytes of data are durable and drops units were lost so far. */
void nvt_recording_checkpoint(struct nvt_recording *rec, uint64_t durable_bytes, uint64_t drops,
			      uint64_t now_real_ns);
/* Undo the last checkpoint's counts when its header write could not be queued. */
void nvt_recording_checkpoint_undo(struct nvt_recording *rec);
/* The final header: data_bytes written, COMPLETE (and STOP_ERROR when ended by an error). */
void nvt_recording_finish(struct nvt_recording *rec, uint64_t data_bytes, bool stop_error,
			  uint64_t now_real_ns);
/* complete and valid_bytes from flags and lengths. */
void nvt_recording_derive(struct nvt_recording *rec);

#endif
