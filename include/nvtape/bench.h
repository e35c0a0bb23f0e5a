/* SPDX-License-Identifier: MIT */
/* Drive qualification: the highest recording (or playback) rate a target sustains with zero
 * drops (underflows) and a clean check, K runs of K; the burst rate, cache size and sustained
 * rate seen by an unthrottled run; the time series behind each run. */
#ifndef NVTAPE_BENCH_H
#define NVTAPE_BENCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape.h"
#include "play.h"
#include "record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One point of a run's time series: cumulative bytes moved to (record) or from (play) storage,
 * ring fill, cumulative drops (record) or underflow beats (play). */
struct nvt_sample {
	uint64_t t_ns;
	uint64_t bytes;
	uint64_t ring_fill;
	uint64_t drops;
};

struct nvt_series {
	struct nvt_sample *s;
	size_t n, cap;
	uint64_t ring_chunks;
};

NVT_API int nvt_series_add(struct nvt_series *ser, const struct nvt_sample *smp);
/* A sample from a recording's stats callback (out of memory: the series stays shorter). */
NVT_API void nvt_series_add_record(struct nvt_series *ser, const struct nvt_record_stats *st);
NVT_API void nvt_series_free(struct nvt_series *ser);

/* Burst vs sustained, from the time series of an unthrottled run. */
struct nvt_cliff {
	bool found;           /* the rate fell and stayed lower: a cache cliff */
	bool steady;          /* the run reached a steady rate (else: run longer) */
	double avg_bps;       /* the whole run */
	double burst_bps;     /* before the cliff (the whole run when none) */
	double sustained_bps; /* after the cliff (the last third when none) */
	uint64_t cliff_bytes; /* bytes written before the rate fell: the cache */
	double cliff_s;       /* when */
	char warning[320];    /* why the figures may not be the drive's steady state */
};

/* Fit one step (two levels) to the per-interval rates of ser (intervals shorter than half the
 * usual one merged into their neighbour); see bench.c for the rule. */
NVT_API void nvt_cliff_analyze(const struct nvt_series *ser, struct nvt_cliff *c);

enum nvt_bench_mode { NVT_BENCH_RECORD = 0, NVT_BENCH_PLAY = 1 };

struct nvt_bench_run {
	uint64_t rate_bps; /* 0 = unthrottled */
	unsigned index;    /* 1..runs at this rate */
	bool pass;
	int exit_code;   /* of the record / play run (then of the verify) */
	double mbps;     /* storage side, whole run */
	uint64_t bytes;  /* recorded / played */
	uint64_t drops;  /* dropped beats (record) or underflow beats (play) */
	uint64_t errors; /* corrupt beats + gaps the check found */
	double io_cpu_s; /* the I/O thread */
	char why[160];   /* why it failed */
	struct nvt_series series;
};

struct nvt_bench_opts {
	enum nvt_bench_mode mode;
	struct nvt_record_opts rec; /* target, engine, ring, qd, size; rate is set per run */
	struct nvt_play_opts play;  /* bench play: ring, qd, engine (target from rec) */
	uint64_t from_bps, to_bps;  /* search range; 0 = from the unthrottled run */
	unsigned runs;              /* runs that must all pass at a rate (default 3) */
	double tolerance;           /* stop bisecting when (fail - pass) <= tolerance * pass */
	bool no_sweep;              /* only the unthrottled run and its cliff analysis */
	uint64_t sample_ns;         /* time series interval (default 100 ms) */
	const volatile sig_atomic_t *interrupt;
	void (*on_run)(const struct nvt_bench_run *r, void *arg); /* after every run */
	void (*notice)(const char *msg, void *arg);
	void *arg;
};

struct nvt_bench_result {
	struct nvt_bench_run max; /* the unthrottled run */
	struct nvt_cliff cliff;
	struct nvt_bench_run *runs; /* the sweep, in the order run */
	size_t nruns;
	uint64_t best_bps;   /* highest rate that passed runs of runs (0: none) */
	uint64_t fail_bps;   /* lowest rate that failed (0: none failed) */
	uint64_t ring_bytes; /* what the ring absorbs */
	bool limited_by_to;  /* the top of the range passed: the drive may do more */
	bool interrupted;
	char engine_desc[384];
	struct nvt_err err;
};

NVT_API void nvt_bench_opts_default(struct nvt_bench_opts *o);
/* NVT_EXIT_OK when a rate was found, NVT_EXIT_DATA when none passed, NVT_EXIT_RUNTIME on
 * errors (res->err), NVT_EXIT_USAGE for bad options. */
NVT_API int nvt_bench(const struct nvt_bench_opts *o, struct nvt_bench_result *res);
NVT_API void nvt_bench_result_free(struct nvt_bench_result *res);

#ifdef __cplusplus
}
#endif

#endif
