/* SPDX-License-Identifier: MIT */
/* Latency histogram: fixed memory, log-linear buckets (8 per power of two of microseconds,
 * so a percentile is exact to within 12.5 %), the maximum kept exactly. Used for the
 * checkpoint latency of a recording, which may run for days. */
#ifndef NVT_HIST_H
#define NVT_HIST_H

#include <stdint.h>

#define NVT_HIST_BUCKETS 512

struct nvt_hist {
	uint32_t b[NVT_HIST_BUCKETS];
	uint64_t n, max_ns;
};

void nvt_hist_add(struct nvt_hist *h, uint64_t ns);
/* The smallest bucket bound at or above the p-th percentile (0 < p <= 100), in ns; the exact
 * maximum for p = 100; 0 when empty. */
uint64_t nvt_hist_pct(const struct nvt_hist *h, double p);

#endif
