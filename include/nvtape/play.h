/* SPDX-License-Identifier: MIT */
/* Playback: the calling thread reads the recording with O_DIRECT, several reads in flight, into
 * the ring strictly in file order; a sink thread consumes it at the programmed rate. The whole
 * ring is filled before the sink starts. */
#ifndef NVTAPE_PLAY_H
#define NVTAPE_PLAY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "counter.h"
#include "format.h"
#include "layout.h"
#include "nvtape.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_play_stats {
	uint64_t elapsed_ns;   /* since the sink started */
	uint64_t bytes_played; /* consumed by the sink */
	uint64_t bytes_read;
	unsigned reads_inflight;
	uint64_t ring_fill, ring_low, ring_chunks; /* fill now, lowest since the sink started */
	uint64_t underflow_beats, underflow_events, late_events;
	uint64_t passes;
};

/* Options of a playback. Initialize with nvt_play_opts_init() (sets struct_size). */
struct nvt_play_opts {
	size_t struct_size;
	const char *path;
	struct nvt_layout layout; /* several members when n > 0 */
	const char *sink;         /* a registered sink: checker (default), stdout, null */
	void *sink_ctx;           /* handed to the sink (out-of-tree sinks) */
	uint64_t rate_bps;        /* 0 = max */
	uint64_t chunk_bytes;     /* default 8 MiB */
	unsigned chunks;          /* default 32 */
	unsigned qd;              /* default 8 (nvme engine: commands per drive) */
	const char *engine;       /* "file" (default, the stripe engine for several) or "nvme" */
	uint64_t loops;           /* passes over the file, 0 = until interrupted; default 1 */
	uint64_t timeout_ns;      /* stall watchdog */
	uint64_t stats_ns;
	int out_fd; /* stdout sink */
	/* as nvt_record_opts.interrupt */
	const volatile sig_atomic_t *interrupt;
	void (*progress)(const struct nvt_play_stats *st, void *arg);
	void (*notice)(const char *msg, void *arg);
	void (*on_event)(const struct nvt_check_event *ev, void *arg);
	void *arg;
	/* the checker sink on data that is not the test pattern: the counter check to run
	 * (nvtape/counter.h) instead of the one the header names; NULL or "": the header's */
	const char *check;
	/* packet sinks (udp, packet) on a packet recording: NVT_TIMING_ORIGINAL (default: each
	 * packet at its capture time, divided by speed) or NVT_TIMING_FAST (rate_bps, pps or as
	 * fast as it goes); a packet sent more than late_ns after its deadline counts as an
	 * underflow (default 200 us) */
	unsigned timing;
	double speed; /* default 1 */
	uint64_t pps; /* FAST: packets a second */
	uint64_t late_ns;
	/* called once the recording and the sink are open, before the first byte is played, so
	 * that a caller's "playing ..." line follows every refusal of the options. NULL: none. */
	void (*opened)(void *arg);
};

enum nvt_play_problem {
	NVT_PP_ERRORS = 1u << 0,    /* corrupt beats */
	NVT_PP_UNDERFLOW = 1u << 1, /* the stream ran dry */
	NVT_PP_GAPS = 1u << 2,      /* gap beats != the recording's drop count */
	NVT_PP_FIRST = 1u << 3,     /* first beat != header first_seq */
	NVT_PP_BACKWARD = 1u << 4,
	NVT_PP_LATE = 1u << 5,       /* stdout: the reader held the stream back */
	NVT_PP_INCOMPLETE = 1u << 6, /* not finalized: only its last checkpoint was played */
	NVT_PP_CHECKSUM = 1u << 7,   /* chunks read that do not match their CRC32C */
};

struct nvt_play_result {
	struct nvt_recording rec;
	struct nvt_play_stats st;
	struct nvt_checker chk;      /* checker sink: beats, errors, gaps, gap beats, ... */
	uint64_t expected_gap_beats; /* per pass: drop count less the drops after the end */
	uint64_t first_underflow_ns;
	uint64_t max_late_ns;
	double seconds;      /* sink start to end */
	double read_seconds; /* first read issued to last read completed */
	uint64_t read_cpu_ns, sink_cpu_ns;
	unsigned max_inflight;
	bool complete; /* every pass played to the end */
	bool interrupted;
	bool checked;      /* the checker sink ran */
	unsigned problems; /* enum nvt_play_problem */
	struct nvt_err err;
	/* the checker sink checked the data's counter (chk counts records, gap_beats records
	 * missing) */
	bool counter_checked;
	struct nvt_counter_spec counter;
	/* the chunk checksums, checked as the chunks were read (every pass) */
	bool sums_checked;
	uint64_t sums_good, sums_bad;
	uint64_t first_bad_offset; /* data offset of the first bad chunk */
	/* packet sinks: packets sent, skipped (not sendable there), late (underflows: counted in
	 * st.underflow_beats too) and the latest one */
	uint64_t packets, packets_skipped, packets_late, late_max_ns;
	/* of packets_late: due before their data was read (the stream ran dry); the rest went out
	 * late with their data in the ring (the sender was held back: a busy CPU) */
	uint64_t packets_late_dry;
};

NVT_API void nvt_play_opts_init(struct nvt_play_opts *o);
/* Play the recording into the registered sink o->sink, paced at o->rate_bps, on a sink thread
 * that pulls through the player (player.h); the caller waits. 0 when every pass played to the
 * end (res->problems then lists what the checks found), -errno otherwise (res->err says why;
 * refused options have NVT_ERR_PARAM; an interruption is -EINTR). */
NVT_API int nvt_play(const struct nvt_play_opts *o, struct nvt_play_result *res);

#ifdef __cplusplus
}
#endif

#endif
