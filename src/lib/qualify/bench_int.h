/* SPDX-License-Identifier: MIT */
/* Inside the bench: the driver's state (bench.c runs record / play / verify passes) shared with
 * the rate search (search.c: sweep, bisection and the plan's worst case). */
#ifndef NVT_QUALIFY_BENCH_INT_H
#define NVT_QUALIFY_BENCH_INT_H

#include "nvtape/bench.h"

struct bench {
	const struct nvt_bench_opts *o;
	struct nvt_bench_result *res;
	struct nvt_record_opts rec;
	struct nvt_play_opts play;
	struct nvt_bench_run *cur;
	double verify_s; /* the last verify, for the time estimate */
};

/* One run at run->rate_bps (0 = unthrottled) in the bench's mode, then on_run. 0 (run->pass
 * says how it went) or -errno (b->res->err). */
int bench_run(struct bench *b, struct nvt_bench_run *run);
/* Whether one more writing run stays within the write budget; when not, the search stops
 * (res->budget_stop, a notice). */
bool bench_may_write(struct bench *b);
bool bench_interrupted(const struct bench *b);
void bench_notice(struct bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The plan before the unthrottled run (the range from the options alone). */
void bench_plan_initial(const struct nvt_bench_opts *o, struct nvt_bench_plan *p);
/* The sweep from the top of the range down and the bisection, after the unthrottled run (res->max):
 * 0 (res->best_bps, fail_bps, found), -EINTR, or -errno. */
int bench_search(struct bench *b);

#endif
