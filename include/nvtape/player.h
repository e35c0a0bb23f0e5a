/* SPDX-License-Identifier: MIT */
/* The pull API: read a recording in order, chunk by chunk, straight from the ring the drive
 * DMAs into. The player runs its own read thread (O_DIRECT, several reads in flight, strictly
 * in order, looping when asked) and open() returns once the ring holds its depth of headroom.
 *
 *     struct nvt_play_opts o;
 *     struct nvt_player *p;
 *     struct nvt_chunk c;
 *     nvt_play_opts_init(&o);
 *     o.path = "run1.nvt";
 *     if (nvt_player_open(&o, &p, &err) < 0) ...
 *     while (nvt_player_next(p, &c, 0) == 0) {
 *             use(c.data, c.bytes, c.offset);
 *             nvt_player_release(p);
 *     }
 *     nvt_player_close(p, &result);
 *
 * Thread rules: next and release belong to one consumer thread; stop() may be called from any
 * thread and from a signal handler; close() after the consumer is done. */
#ifndef NVTAPE_PLAYER_H
#define NVTAPE_PLAYER_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "nvtape.h"
#include "play.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_player;

/* nvt_player_next() flags */
#define NVT_NEXT_NOWAIT (1u << 0) /* -EAGAIN instead of waiting for the read */

struct nvt_chunk {
	const uint8_t *data;
	uint64_t bytes;  /* whole units; the last chunk of a pass may be short */
	uint64_t offset; /* data offset of data[0] within the recording */
	uint64_t pass;   /* loop pass, from 0 */
};

/* Open the recording o->path (or o->layout) for reading and start the read thread; the sink
 * fields of o are ignored. 0 or -errno; *out is NULL on error. */
NVT_API int nvt_player_open(const struct nvt_play_opts *o, struct nvt_player **out,
			    struct nvt_err *err);

/* The recording's header as read. */
NVT_API const struct nvt_recording *nvt_player_recording(const struct nvt_player *p);

/* The recording's drop index (the player owns the array): 0, *n = 0 when there is none. */
NVT_API int nvt_player_drops(const struct nvt_player *p, const struct nvt_drop_event **ev,
			     uint64_t *n);

/* The next chunk in order, kept until release(). 0; -EAGAIN: not read yet (NOWAIT);
 * -ENODATA: the playback is over; -ECANCELED: stopped; another -errno: a read failed (the
 * message is in the result at close). */
NVT_API int nvt_player_next(struct nvt_player *p, struct nvt_chunk *c, unsigned flags);

/* Hand the oldest chunk taken with next() back to the read thread. */
NVT_API void nvt_player_release(struct nvt_player *p);

/* Stop reading: next() returns -ECANCELED once the chunks already read are taken. Any thread,
 * async-signal-safe. */
NVT_API void nvt_player_stop(struct nvt_player *p);

/* Live counters; any thread. Fills bytes_read, reads_inflight and the ring fields. */
NVT_API void nvt_player_stats(struct nvt_player *p, struct nvt_play_stats *st);

/* Stop the read thread, wait for reads in flight, free p. res (may be NULL) gets rec,
 * bytes_read, read_seconds, read CPU and the error of a failed read. 0 or that -errno. */
NVT_API int nvt_player_close(struct nvt_player *p, struct nvt_play_result *res);

#ifdef __cplusplus
}
#endif

#endif
