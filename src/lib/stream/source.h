/* SPDX-License-Identifier: MIT */
/* Stream sources: a thread that produces into ring chunks. A source that cannot be stalled
 * (the test-pattern generator) drops and counts beats when no chunk is free; a source that can
 * wait (a pipe) is back-pressured instead. */
#ifndef NVTAPE_SOURCE_H
#define NVTAPE_SOURCE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nvtape/format.h"
#include "nvtape/nvtape.h"
#include "ring/ring.h"

struct nvt_source_params {
	uint64_t rate_bps;    /* 0 = unpaced: as fast as the ring is drained (no drops) */
	uint64_t limit_bytes; /* stop after this many data bytes (0 = no limit) */
	uint64_t duration_ns; /* stop after this long (0 = no limit) */
	uint64_t first_seq;   /* test pattern: seq of the first beat */
	int fd;               /* stdin source: descriptor to read */
};

enum nvt_source_end {
	NVT_SRC_END_RUNNING = 0,
	NVT_SRC_END_LIMIT, /* --size or --duration reached */
	NVT_SRC_END_STOP,  /* stop requested (signal, watchdog, storage error) */
	NVT_SRC_END_EOF,   /* input ended */
	NVT_SRC_END_ERROR, /* the source failed (err says why) */
};

struct nvt_source;

struct nvt_source_ops {
	const char *name;
	const char *help;
	uint32_t kind;       /* enum nvt_source_kind, stored in the header */
	uint32_t beat_bytes; /* unit of the stream (16 = test-pattern beat, 1 = bytes) */
	bool never_stalls;   /* drops (and counts) instead of waiting when the ring is full */
	int (*run)(struct nvt_source *s); /* thread body; publishes chunks, closes the ring */
};

struct nvt_source {
	const struct nvt_source_ops *ops;
	struct nvt_source_params p;
	struct nvt_ring *ring;
	_Atomic int stop; /* set by the controller */
	/* producer state (source thread only) */
	uint8_t *cur;
	uint64_t cur_fill;
	uint64_t pending_drop;
	/* live counters (read by the controller while running) */
	_Atomic uint64_t produced_bytes;  /* bytes placed into chunks, published or not */
	_Atomic uint64_t published_bytes; /* bytes in published chunks */
	_Atomic uint64_t drops;           /* beats dropped */
	_Atomic uint64_t emitted;         /* units the source emitted (kept + dropped) */
	_Atomic uint64_t t0_mono;         /* first unit, CLOCK_MONOTONIC (0 until started) */
	uint64_t t0_real;
	uint64_t end_mono;
	/* drop events, appended by the source thread under ev_lock */
	pthread_mutex_t ev_lock;
	struct nvt_drop_event *ev;
	uint64_t nev, ev_cap;
	/* pacing statistics */
	uint64_t steps, steps_long, max_step_bytes;
	/* results, valid after join */
	enum nvt_source_end end;
	uint64_t cpu_ns;
	struct nvt_err err;
	pthread_t thread;
	bool started;
};

const struct nvt_source_ops *nvt_source_find(const char *name);
int nvt_source_start(struct nvt_source *s, const struct nvt_source_ops *ops,
		     const struct nvt_source_params *p, struct nvt_ring *ring, struct nvt_err *err);
void nvt_source_request_stop(struct nvt_source *s);
void nvt_source_join(struct nvt_source *s);
void nvt_source_free(struct nvt_source *s);
/* Copy of the drop events so far (malloc'ed; caller frees). */
struct nvt_drop_event *nvt_source_drop_events(struct nvt_source *s, uint64_t *n);

/* Producer helpers for source implementations. */
bool nvt_src_take_chunk(struct nvt_source *s); /* make s->cur a free chunk, no wait */
void nvt_src_publish(struct nvt_source *s);    /* publish s->cur (s->cur_fill bytes) */
void nvt_src_drop(struct nvt_source *s, uint64_t beats);
void nvt_src_mark_start(struct nvt_source *s);
bool nvt_src_limit_reached(const struct nvt_source *s, uint64_t now_mono);

extern const struct nvt_source_ops nvt_source_tpg;
extern const struct nvt_source_ops nvt_source_stdin;

#endif
