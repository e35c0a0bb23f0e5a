/* SPDX-License-Identifier: MIT */
/* Stream sinks: a thread that consumes ring chunks at a programmed rate, like a DAC or a
 * transmitter that cannot wait. When it is due to take data and none is there, that is an
 * underflow: counted, timed, never hidden; the sink keeps its schedule. */
#ifndef NVTAPE_SINK_H
#define NVTAPE_SINK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nvtape/nvtape.h"
#include "nvtape/pattern.h"
#include "ring/ring.h"

/* ring chunk flags (nvt_ring.flags) used by playback */
#define NVT_CHUNK_PASS_START (1u << 0) /* first chunk of a --loop pass: the sequence restarts */

struct nvt_sink_params {
	uint64_t rate_bps;   /* 0 = unpaced: as fast as data arrives (no underflows) */
	uint32_t beat_bytes; /* pacing unit */
	uint64_t first_seq;  /* checker: the first beat of every pass */
	int fd;              /* stdout sink */
};

struct nvt_sink;

struct nvt_sink_ops {
	const char *name;
	const char *help;
	bool needs_pattern; /* refuses recordings that are not test pattern */
	bool can_block;     /* consume() can be held back by its reader: count lateness */
	/* consume `bytes` of data (whole beats) that sit at data offset `offset` */
	int (*consume)(struct nvt_sink *s, const uint8_t *buf, uint64_t bytes, uint64_t offset);
	void (*pass_start)(struct nvt_sink *s); /* the recording starts again (--loop) */
};

struct nvt_sink {
	const struct nvt_sink_ops *ops;
	struct nvt_sink_params p;
	struct nvt_ring *ring;
	_Atomic int stop;
	/* live counters */
	_Atomic uint64_t consumed_bytes;
	_Atomic uint64_t underflow_beats;  /* beats due with no data there */
	_Atomic uint64_t underflow_events; /* times the stream ran dry */
	_Atomic uint64_t late_events;      /* stdout: the reader held the sink back > 1 ms */
	_Atomic uint64_t t0_mono;
	uint64_t first_underflow_ns; /* since t0 */
	uint64_t max_late_ns;
	uint64_t end_mono;
	/* checker sink state (valid after join) */
	struct nvt_checker chk;
	uint64_t passes;
	uint64_t pass_offset;
	/* results */
	uint64_t cpu_ns;
	bool finished; /* consumed everything the reader published */
	struct nvt_err err;
	pthread_t thread;
	bool started;
	void (*on_event)(const struct nvt_check_event *ev, void *arg);
	void *arg;
};

const struct nvt_sink_ops *nvt_sink_find(const char *name);
int nvt_sink_start(struct nvt_sink *s, const struct nvt_sink_ops *ops,
		   const struct nvt_sink_params *p, struct nvt_ring *ring, struct nvt_err *err);
void nvt_sink_request_stop(struct nvt_sink *s);
void nvt_sink_join(struct nvt_sink *s);

extern const struct nvt_sink_ops nvt_sink_checker;
extern const struct nvt_sink_ops nvt_sink_stdout;
extern const struct nvt_sink_ops nvt_sink_null;

#endif
