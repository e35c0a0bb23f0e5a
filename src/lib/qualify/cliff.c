/* SPDX-License-Identifier: MIT */
/* The cache cliff: one step (two levels) fitted to the per-interval rates of an unthrottled
 * run. A cliff is a split into two levels, each at least 3 intervals long, where the first level
 * is >= 1.3x the second and the split explains at least half of the variance: a cache that
 * fills, not jitter. Without one, the last third of the run is its sustained rate. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/bench.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* in, with every interval shorter than half the usual sampling interval merged into the one
 * before it: the last sample of a run comes when the run ends, often milliseconds after the
 * one before, and the bytes that completed in between would read as a huge rate. */
static int regular(const struct nvt_series *in, struct nvt_series *out)
{
	uint64_t *dt = in->n > 1 ? malloc((in->n - 1) * sizeof(*dt)) : NULL, min;

	memset(out, 0, sizeof(*out));
	if (in->n < 2 || !dt) {
		free(dt);
		return in->n < 2 ? 0 : -ENOMEM;
	}
	for (size_t i = 1; i < in->n; i++)
		dt[i - 1] = in->s[i].t_ns - in->s[i - 1].t_ns;
	qsort(dt, in->n - 1, sizeof(*dt), cmp_u64);
	min = dt[(in->n - 1) / 2] / 2;
	free(dt);
	for (size_t i = 0; i < in->n; i++) {
		bool last = i == in->n - 1;
		if (out->n && in->s[i].t_ns - out->s[out->n - 1].t_ns < min) {
			if (!last)
				continue;
			if (out->n > 1) {
				out->s[out->n - 1] =
					in->s[i]; /* the run's end closes the interval */
				continue;
			}
		}
		if (nvt_series_add(out, &in->s[i]))
			return -ENOMEM;
	}
	return 0;
}

/* The rate of each of the m intervals of s; returns their variance sum around the mean. */
static double interval_rates(const struct nvt_sample *s, size_t m, double *r)
{
	double mean = 0, sse = 0;

	for (size_t i = 0; i < m; i++) {
		double dt = (s[i + 1].t_ns - s[i].t_ns) / 1e9;
		r[i] = dt > 0 ? (s[i + 1].bytes - s[i].bytes) / dt : 0;
		mean += r[i] / m;
	}
	for (size_t i = 0; i < m; i++)
		sse += (r[i] - mean) * (r[i] - mean);
	return sse;
}

/* The split k (3 <= k <= m - 3) with the first level >= 1.3x the second and the least squared
 * error; 0 when none. */
static size_t best_split(const double *r, size_t m, double *best_sse)
{
	size_t k_best = 0;

	*best_sse = INFINITY;
	for (size_t k = 3; k + 3 <= m; k++) {
		double m1 = 0, m2 = 0, sse = 0;
		for (size_t i = 0; i < k; i++)
			m1 += r[i] / k;
		for (size_t i = k; i < m; i++)
			m2 += r[i] / (m - k);
		for (size_t i = 0; i < m; i++) {
			double d = r[i] - (i < k ? m1 : m2);
			sse += d * d;
		}
		if (m1 >= 1.3 * m2 && sse < *best_sse) {
			*best_sse = sse;
			k_best = k;
		}
	}
	return k_best;
}

/* Burst and sustained rates around the cliff at interval k; steady when enough of the run came
 * after it and the rate there held within 35 %. */
static void with_cliff(struct nvt_cliff *c, const struct nvt_series *ser, const double *r, size_t m,
		       size_t k, double total_s)
{
	const struct nvt_sample *a = &ser->s[0], *b = &ser->s[k], *e = &ser->s[ser->n - 1];
	double before = (b->t_ns - a->t_ns) / 1e9, after = (e->t_ns - b->t_ns) / 1e9;
	double m2 = 0, v2 = 0;

	c->found = true;
	c->cliff_bytes = b->bytes - a->bytes;
	c->cliff_s = before;
	c->burst_bps = before > 0 ? c->cliff_bytes / before : 0;
	c->sustained_bps = after > 0 ? (e->bytes - b->bytes) / after : 0;
	for (size_t i = k; i < m; i++)
		m2 += r[i] / (m - k);
	for (size_t i = k; i < m; i++)
		v2 += (r[i] - m2) * (r[i] - m2) / (m - k);
	c->steady = after >= 2.0 && after >= 0.2 * total_s && sqrt(v2) <= 0.35 * m2;
	if (!c->steady)
		snprintf(c->warning, sizeof(c->warning),
			 "the run ended %.1f s after the cache cliff: the sustained rate rests on "
			 "little data; run longer (more bytes per run)",
			 after);
}

/* No cliff: the last third is the sustained rate, steady when it matches the middle third. */
static void without_cliff(struct nvt_cliff *c, const double *r, size_t m)
{
	size_t third = m / 3;
	double mid = 0, last = 0;

	for (size_t i = third; i < 2 * third; i++)
		mid += r[i] / third;
	for (size_t i = m - third; i < m; i++)
		last += r[i] / third;
	c->sustained_bps = last;
	c->steady = fabs(last - mid) <= 0.15 * (c->avg_bps > 0 ? c->avg_bps : 1);
	if (!c->steady)
		snprintf(
			c->warning, sizeof(c->warning),
			"the rate was still changing when the run ended (%.0f MB/s in the middle "
			"third, %.0f MB/s in the last): not a steady state; run longer (more bytes "
			"per run)",
			mid / 1e6, last / 1e6);
}

void nvt_cliff_analyze(const struct nvt_series *in, struct nvt_cliff *c)
{
	struct nvt_series ser;
	int oom = regular(in, &ser);
	size_t m = ser.n > 1 ? ser.n - 1 : 0, k;
	double *r = m ? calloc(m, sizeof(*r)) : NULL;
	double total_s, sse_all, sse_best;

	memset(c, 0, sizeof(*c));
	if (ser.n < 2 || !r || oom) {
		snprintf(c->warning, sizeof(c->warning),
			 "too few samples to see how the rate develops: run longer (more bytes per "
			 "run)");
		goto out;
	}
	total_s = (ser.s[ser.n - 1].t_ns - ser.s[0].t_ns) / 1e9;
	c->avg_bps = total_s > 0 ? (ser.s[ser.n - 1].bytes - ser.s[0].bytes) / total_s : 0;
	c->burst_bps = c->sustained_bps = c->avg_bps;
	sse_all = interval_rates(ser.s, m, r);
	if (m < 9) {
		snprintf(c->warning, sizeof(c->warning),
			 "only %zu intervals of %.2f s: too short to see a cache cliff or a steady "
			 "rate; run longer (more bytes per run)",
			 m, total_s / m);
		goto out;
	}
	k = best_split(r, m, &sse_best);
	if (k && sse_best <= 0.5 * sse_all)
		with_cliff(c, &ser, r, m, k, total_s);
	else
		without_cliff(c, r, m);
out:
	free(r);
	nvt_series_free(&ser);
}
