/* SPDX-License-Identifier: MIT */
/* Log-linear latency histogram (hist.h). */
#include "hist.h"

static unsigned bucket_of(uint64_t us)
{
	unsigned e;

	if (us < 8)
		return (unsigned)us;
	e = 63u - (unsigned)__builtin_clzll(us);
	return 8u * (e - 2u) + (unsigned)((us >> (e - 3u)) & 7u);
}

/* The largest microsecond value that falls in bucket i. */
static uint64_t bucket_top_us(unsigned i)
{
	unsigned e, m;

	if (i < 8)
		return i;
	e = i / 8u + 2u;
	m = i % 8u;
	if (e >= 63u)
		return UINT64_MAX / 1000u;
	return ((8ull + m + 1ull) << (e - 3u)) - 1ull;
}

void nvt_hist_add(struct nvt_hist *h, uint64_t ns)
{
	unsigned i = bucket_of(ns / 1000u);

	if (h->b[i] < UINT32_MAX)
		h->b[i]++;
	h->n++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

uint64_t nvt_hist_pct(const struct nvt_hist *h, double p)
{
	uint64_t total = 0, want, seen = 0;

	for (unsigned i = 0; i < NVT_HIST_BUCKETS; i++)
		total += h->b[i];
	if (!total)
		return 0;
	if (p >= 100.0)
		return h->max_ns;
	want = (uint64_t)(p / 100.0 * (double)total + 0.999999);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < NVT_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t top = (bucket_top_us(i) + 1u) * 1000u - 1u;
			return top < h->max_ns ? top : h->max_ns;
		}
	}
	return h->max_ns;
}
