/* SPDX-License-Identifier: MIT */
/* The sink thread's frame: pulls chunks through the player and feeds a sink at the programmed
 * rate with the test-pattern source's pacing rules. Data due with none there is an underflow:
 * counted in units and events, timed, and the schedule goes on. */
#ifndef NVT_STREAM_SINK_FRAME_H
#define NVT_STREAM_SINK_FRAME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "nvtape/player.h"
#include "nvtape/sink.h"

struct nvt_sink_frame {
	const struct nvt_sink_ops *ops;
	void *state;
	struct nvt_player *pl;
	uint64_t rate_bps; /* 0 = as fast as the reads go */
	uint32_t unit;
	_Atomic int stop;
	/* live counters */
	_Atomic uint64_t consumed_bytes;
	_Atomic uint64_t underflow_beats;  /* units due with no data there */
	_Atomic uint64_t underflow_events; /* times the stream ran dry */
	_Atomic uint64_t late_events;      /* a blocking sink was held back > 1 ms */
	_Atomic uint64_t passes;
	_Atomic uint64_t t0_mono;
	uint64_t first_underflow_ns; /* since t0 */
	uint64_t max_late_ns;
	uint64_t end_mono;
	/* results, valid after join */
	uint64_t cpu_ns;
	bool finished;    /* consumed everything the player read */
	_Atomic int done; /* the sink thread has ended */
	struct nvt_err err;
	pthread_t thread;
	bool started;
};

/* On the sink thread, for its sink: when the frame last got data after waiting for it (the
 * ring was empty), on CLOCK_MONOTONIC; 0 before any wait. Data due before then was late because
 * it was not there. */
uint64_t nvt_sink_frame_data_came(void);

int nvt_sink_frame_start(struct nvt_sink_frame *f, struct nvt_err *err);
void nvt_sink_frame_stop(struct nvt_sink_frame *f);
void nvt_sink_frame_join(struct nvt_sink_frame *f);

#endif
