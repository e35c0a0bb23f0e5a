/* SPDX-License-Identifier: MIT */
/* The push API: a producer that owns its thread (a DMA loop, a driver's completion handler, an
 * application) writes straight into the ring chunk that the drive then DMAs, in the manner of
 * liburing's get_sqe/submit:
 *
 *     struct nvt_record_opts o;
 *     struct nvt_recorder *r;
 *     nvt_record_opts_init(&o);
 *     o.path = "run1.nvt";
 *     if (nvt_recorder_open(&o, &r, &err) < 0) ...
 *     for (;;) {
 *             size_t room;
 *             void *p = nvt_recorder_acquire(r, &room, NVT_ACQUIRE_NOWAIT);
 *             if (!p && errno == EAGAIN) { nvt_recorder_drop(r, lost); continue; }
 *             if (!p) break;                      // stopping: limit, stop(), storage error
 *             size_t n = fill(p, room);           // the DMA or the producer writes here
 *             nvt_recorder_commit(r, n);
 *     }
 *     nvt_recorder_close(r, &result);
 *
 * The recorder runs its own I/O thread: full chunks are written in order through the storage
 * engine, the durable length is checkpointed, and close() finalizes header and drop index.
 *
 * Thread rules: acquire, commit, drop and close belong to one producer thread. stop() may be
 * called from any thread and from a signal handler. stats() may be called from any thread. */
#ifndef NVTAPE_RECORDER_H
#define NVTAPE_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "nvtape.h"
#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_recorder;

/* nvt_recorder_acquire() flags */
#define NVT_ACQUIRE_NOWAIT (1u << 0) /* return NULL with errno EAGAIN when the ring is full */
/* after stop(): the producer still holds data that its device already wrote into the ring (a
 * DMA into registered chunks); acquire keeps giving room for it until the recording fails or
 * reaches its size or duration, so a stop loses nothing that was captured */
#define NVT_ACQUIRE_DRAIN (1u << 1)

/* Open the recording described by o (storage, ring, limits; the source fields are ignored:
 * the caller is the source) and start its I/O thread. 0 or -errno; *out is NULL on error. */
NVT_API int nvt_recorder_open(const struct nvt_record_opts *o, struct nvt_recorder **out,
			      struct nvt_err *err);

/* Free space in the current ring chunk: *room bytes (a whole number of units) at the returned
 * address. Without NVT_ACQUIRE_NOWAIT it waits for the storage to free a chunk. NULL with
 * errno EAGAIN: no chunk free (NOWAIT); ECANCELED: the recording is stopping (size or duration
 * reached, stop(), storage failed) and the producer should finish and close. */
NVT_API void *nvt_recorder_acquire(struct nvt_recorder *r, size_t *room, unsigned flags);

/* bytes (<= room, a whole number of units) were written at the acquired address. A full chunk
 * goes to the storage at once. 0 or -EINVAL. */
NVT_API int nvt_recorder_commit(struct nvt_recorder *r, size_t bytes);

/* units (of o->unit_bytes) were lost upstream (a FIFO overflow, no chunk free): counted and
 * recorded in the drop index at the current data position with the time of the first loss. */
NVT_API int nvt_recorder_drop(struct nvt_recorder *r, uint64_t units);

/* The producer's own buffer ahead of the ring (a device's FIFO, in units of its choosing): its
 * level now, its high-water mark and its depth, shown with the live stats and kept in the
 * result (nvt_record_stats.src_fifo_*). Any thread, as often as it likes. */
NVT_API void nvt_recorder_source_fifo(struct nvt_recorder *r, uint64_t level, uint64_t hwm,
				      uint64_t depth);

/* The producer's count of records (packets) received so far, shown with the live stats
 * (nvt_record_input.records). Any thread, as often as it likes. */
NVT_API void nvt_recorder_source_records(struct nvt_recorder *r, uint64_t records);

/* A producer that checks its stream itself (a packet source's sequence check): its counts so
 * far (records checked, gaps, records missing, backward jumps, bad values), shown as the
 * recording's check stats (nvt_record_stats.check_*). Any thread. */
NVT_API void nvt_recorder_check_counts(struct nvt_recorder *r, const struct nvt_checker *k);

/* Ask the recording to stop: acquire() returns NULL from now on (but see NVT_ACQUIRE_DRAIN).
 * Async-signal-safe. */
NVT_API void nvt_recorder_stop(struct nvt_recorder *r);

/* The producer failed: the recording stops with this error (kept as the result's err), and
 * what was committed is written and finalized. Producer thread. */
NVT_API void nvt_recorder_fail(struct nvt_recorder *r, const struct nvt_err *why);

/* Nonzero once the recording is stopping (see acquire). */
NVT_API int nvt_recorder_stopping(struct nvt_recorder *r);

/* Live counters; any thread. */
NVT_API void nvt_recorder_stats(struct nvt_recorder *r, struct nvt_record_stats *st);

/* The producer is done: the partial chunk is written, the I/O thread drains, header and drop
 * index are finalized, r is freed. res (may be NULL) gets what was kept and why it ended.
 * 0 when the recording ended on its own terms (limit, end of input, stop), else -errno with
 * res->err saying why; data problems (drops) are in res, not in the return code. */
NVT_API int nvt_recorder_close(struct nvt_recorder *r, struct nvt_record_result *res);

#ifdef __cplusplus
}
#endif

#endif
