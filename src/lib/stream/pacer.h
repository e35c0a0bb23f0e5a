/* SPDX-License-Identifier: MIT */
/* Pacing at a programmed rate: how many units are due at a time, and when a count is due.
 * Exact in the long term (computed from the start time, never accumulated). */
#ifndef NVTAPE_PACER_H
#define NVTAPE_PACER_H

#include <stdint.h>

struct nvt_pacer {
	uint64_t t0_ns;    /* CLOCK_MONOTONIC start */
	uint64_t rate_bps; /* bytes per second, > 0 */
	uint64_t unit;     /* bytes per unit (a beat) */
	uint64_t quantum;  /* units per pacing step */
};

#define NVT_PACE_STEP_NS 20000ull  /* a step is due every ~20 us; wake-up latency adds to it */
#define NVT_PACE_MAX_NS  100000ull /* never more than ~100 us at once when on time */

void nvt_pacer_init(struct nvt_pacer *p, uint64_t t0_ns, uint64_t rate_bps, uint64_t unit);
uint64_t nvt_pacer_due(const struct nvt_pacer *p, uint64_t now_ns);
uint64_t nvt_pacer_time_of(const struct nvt_pacer *p, uint64_t units);

#endif
