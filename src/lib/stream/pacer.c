/* SPDX-License-Identifier: MIT */
/* Pacing arithmetic in 128-bit integers: due(t) = floor((t - t0) * rate / (1e9 * unit)). */
#include "stream/pacer.h"

void nvt_pacer_init(struct nvt_pacer *p, uint64_t t0_ns, uint64_t rate_bps, uint64_t unit)
{
	unsigned __int128 q =
		(unsigned __int128)rate_bps * NVT_PACE_STEP_NS / (1000000000ull * unit);

	p->t0_ns = t0_ns;
	p->rate_bps = rate_bps;
	p->unit = unit;
	p->quantum = q ? (uint64_t)q : 1;
}

uint64_t nvt_pacer_due(const struct nvt_pacer *p, uint64_t now_ns)
{
	if (now_ns <= p->t0_ns)
		return 0;
	return (uint64_t)((unsigned __int128)(now_ns - p->t0_ns) * p->rate_bps /
			  ((unsigned __int128)1000000000ull * p->unit));
}

uint64_t nvt_pacer_time_of(const struct nvt_pacer *p, uint64_t units)
{
	unsigned __int128 num = (unsigned __int128)units * p->unit * 1000000000ull;
	return p->t0_ns + (uint64_t)((num + p->rate_bps - 1) / p->rate_bps);
}
