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
/* A sample from a recording's or a playback's stats callback (out of memory: the series stays
 * shorter). */
NVT_API void nvt_series_add_record(struct nvt_series *ser, const struct nvt_record_stats *st);
NVT_API void nvt_series_add_play(struct nvt_series *ser, const struct nvt_play_stats *st);
/* The end of a run, when it came after the last sample and moved no fewer bytes. */
NVT_API void nvt_series_add_end(struct nvt_series *ser, const struct nvt_sample *end);
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
 * usual one merged into their neighbour); see cliff.c for the rule. */
NVT_API void nvt_cliff_analyze(const struct nvt_series *ser, struct nvt_cliff *c);

enum nvt_bench_mode { NVT_BENCH_RECORD = 0, NVT_BENCH_PLAY = 1 };

struct nvt_bench_run {
	uint64_t rate_bps; /* 0 = unthrottled */
	unsigned index;    /* 1..runs at this rate */
	bool pass;
	int rc;          /* 0, or the -errno of the record / play / verify call that failed */
	double mbps;     /* storage side, whole run */
	uint64_t bytes;  /* recorded / played */
	uint64_t drops;  /* dropped beats (record) or underflow beats (play) */
	uint64_t errors; /* corrupt beats + gaps the check found */
	double io_cpu_s; /* the I/O thread */
	char why[160];   /* why it failed */
	struct nvt_series series;
};

/* What a bench will do, before it starts and again once the unthrottled run has given the
 * search range. */
struct nvt_bench_plan {
	bool range_known;  /* from_bps / to_bps and runs_max are final */
	uint64_t from_bps; /* the search range (0 before the unthrottled run set it) */
	uint64_t to_bps;
	unsigned runs_max;  /* runs at most, the unthrottled one (and the recording to play) too */
	unsigned rates_max; /* rates the sweep and the bisection try at most */
	uint64_t run_bytes; /* bytes one writing run writes */
	uint64_t write_bytes; /* bytes written at most (without a budget) */
	uint64_t budget;      /* the write budget, 0 = none */
	double seconds;       /* the rest of the bench at most, once a rate is known (else 0) */
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
	uint64_t max_write_bytes; /* write budget: the search stops before exceeding it (0 none) */
	const volatile sig_atomic_t *interrupt;                   /* as nvt_record_opts.interrupt */
	void (*on_run)(const struct nvt_bench_run *r, void *arg); /* after every run */
	/* before the first run, and with a time estimate once the unthrottled run gave a rate */
	void (*on_plan)(const struct nvt_bench_plan *p, void *arg);
	void (*notice)(const char *msg, void *arg);
	void *arg;
};

struct nvt_bench_result {
	struct nvt_bench_run max; /* the unthrottled run */
	struct nvt_cliff cliff;
	struct nvt_bench_run *runs; /* the sweep, in the order run */
	size_t nruns;
	bool found;          /* a rate passed runs of runs: best_bps */
	uint64_t best_bps;   /* highest rate that passed runs of runs (0: none) */
	uint64_t fail_bps;   /* lowest rate that failed (0: none failed) */
	uint64_t ring_bytes; /* what the ring absorbs */
	bool limited_by_to;  /* the top of the range passed: the drive may do more */
	bool interrupted;
	bool budget_stop;       /* the search stopped before exceeding the write budget */
	uint64_t bytes_written; /* by every run */
	struct nvt_bench_plan plan;
	char engine_desc[384];
	struct nvt_err err;
};

NVT_API void nvt_bench_opts_default(struct nvt_bench_opts *o);
/* Check the options and say what nvt_bench() will do: 0, or -EINVAL with err (NVT_ERR_PARAM)
 * for refused options (a write budget smaller than one run among them). */
NVT_API int nvt_bench_plan(const struct nvt_bench_opts *o, struct nvt_bench_plan *p,
			   struct nvt_err *err);
/* 0 when the search ran to its end or stopped at the write budget (res->found: a rate passed;
 * res->budget_stop); -errno on errors (res->err; NVT_ERR_PARAM for refused options), -EINTR
 * when interrupted (res->interrupted, the results so far in res). */
NVT_API int nvt_bench(const struct nvt_bench_opts *o, struct nvt_bench_result *res);
NVT_API void nvt_bench_result_free(struct nvt_bench_result *res);

#ifdef __cplusplus
}
#endif

#endif
