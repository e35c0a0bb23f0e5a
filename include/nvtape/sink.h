/* SPDX-License-Identifier: MIT */
/* Sinks: what playback does with the data (check it, write it to a pipe, discard it). The
 * paced frame that feeds a sink is an ordinary client of the pull API (player.h); a program
 * registers its own sink with nvt_sink_register() and plays into it by name. */
#ifndef NVTAPE_SINK_H
#define NVTAPE_SINK_H

#include <stdint.h>

#include "nvtape.h"
#include "counter.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nvt_sink_ops.caps */
#define NVT_SINK_NEEDS_PATTERN (1u << 0) /* refuses recordings that are not test pattern */
#define NVT_SINK_CAN_BLOCK     (1u << 1) /* consume() can be held back by its reader */
/* takes a packet recording's pcapng data and sends packet by packet on its own schedule
 * (nvt_sink_args.timing...): the playback feeds it unpaced */
#define NVT_SINK_PACKETS (1u << 2)

/* nvt_sink_args.timing, packet sinks */
#define NVT_TIMING_ORIGINAL 0 /* each packet at its capture time relative to the first */
#define NVT_TIMING_FAST     1 /* as fast as it goes, or at rate_bps / pps when given */

/* What a packet sink did (nvt_sink_ops.report). */
struct nvt_sink_report {
	uint64_t packets;     /* sent */
	uint64_t skipped;     /* not sendable through this sink (not UDP, another link type) */
	uint64_t late;        /* sent later than their deadline by more than late_ns */
	uint64_t late_events; /* runs of late packets (a stall makes one) */
	uint64_t late_max_ns; /* the latest one */
	/* of late: due before their data reached the sink (the ring was empty: the reads fell
	 * behind); the rest were sent late with their data there (the sender was held back) */
	uint64_t late_dry;
	/* a failure the sink met after its last consume() (a device's last buffers or its stop):
	 * the playback fails with it (code 0: none) */
	struct nvt_err err;
};

struct nvt_sink_args {
	uint64_t first_seq;  /* test pattern: seq of the first beat of every pass */
	uint32_t unit_bytes; /* the recording's unit (16 = test-pattern beat) */
	int fd;              /* output descriptor (stdout sink) */
	const char *arg;     /* text after "NAME:", "" when none */
	void *ctx;           /* nvt_play_opts.sink_ctx */
	void (*on_event)(const struct nvt_check_event *ev, void *arg); /* checking sinks */
	void *event_arg;
	const struct nvt_counter_spec *counter; /* checking sinks: the data's counter, if any */
	/* packet sinks (NVT_SINK_PACKETS): the schedule */
	unsigned timing;        /* NVT_TIMING_* */
	double speed;           /* ORIGINAL: times divided by it (2 = twice as fast); > 0 */
	uint64_t rate_bps, pps; /* FAST: bytes (of packets) or packets a second, 0 = none */
	uint64_t late_ns;       /* a packet sent later than this after its deadline is late */
};

struct nvt_sink_ops {
	const char *name;
	const char *help;
	unsigned caps; /* NVT_SINK_* */
	/* optional: set up per-playback state (*state; NULL when not needed) */
	int (*open)(void **state, const struct nvt_sink_args *a, struct nvt_err *err);
	/* bytes (whole units) that sit at data offset `offset` of the current pass; 0 or -errno
	 * with err set (the playback then stops) */
	int (*consume)(void *state, const uint8_t *buf, uint64_t bytes, uint64_t offset,
		       struct nvt_err *err);
	void (*pass_start)(void *state); /* optional: the recording starts again (loops) */
	/* optional: the checker's counts, for sinks that check the test pattern */
	const struct nvt_checker *(*checker)(void *state);
	void (*close)(void *state); /* optional */
	/* optional: beats a device sink was ready for and had no data (a hardware sink's
	 * underflows), known once the playback ended; added to the playback's underflows */
	uint64_t (*underflows)(void *state);
	/* optional: packet sinks' counts, known once the playback ended */
	void (*report)(void *state, struct nvt_sink_report *rep);
};

/* Add a sink to the registry (ops must stay valid). -EEXIST, -ENOSPC or -EINVAL. */
NVT_API int nvt_sink_register(const struct nvt_sink_ops *ops, struct nvt_err *err);
/* The sink named by name or "name:arg"; NULL when unknown. */
NVT_API const struct nvt_sink_ops *nvt_sink_find(const char *name);
/* The i-th registered sink (built-in first); NULL past the end. */
NVT_API const struct nvt_sink_ops *nvt_sink_at(unsigned i);
/* "checker, stdout, null" for messages. */
NVT_API const char *nvt_sink_names(void);

#ifdef __cplusplus
}
#endif

#endif
