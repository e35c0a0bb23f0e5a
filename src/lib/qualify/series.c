/* SPDX-License-Identifier: MIT */
/* The time series of a bench or speedtest run: samples of bytes moved, ring fill and drops,
 * taken from the record / play progress callbacks at the sampling interval. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/bench.h"

int nvt_series_add(struct nvt_series *ser, const struct nvt_sample *smp)
{
	if (ser->n == ser->cap) {
		size_t cap = ser->cap ? ser->cap * 2 : 256;
		struct nvt_sample *s;
		if (cap > SIZE_MAX / sizeof(*s))
			return -ENOMEM;
		s = realloc(ser->s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		ser->s = s;
		ser->cap = cap;
	}
	ser->s[ser->n++] = *smp;
	return 0;
}

void nvt_series_add_record(struct nvt_series *ser, const struct nvt_record_stats *st)
{
	struct nvt_sample smp = {.t_ns = st->elapsed_ns,
				 .bytes = st->bytes_written,
				 .ring_fill = st->ring_fill,
				 .drops = st->drops};
	ser->ring_chunks = st->ring_chunks;
	if (nvt_series_add(ser, &smp)) {
		/* out of memory: the series stays shorter, the run itself goes on */
	}
}

void nvt_series_add_play(struct nvt_series *ser, const struct nvt_play_stats *st)
{
	struct nvt_sample smp = {.t_ns = st->elapsed_ns,
				 .bytes = st->bytes_read,
				 .ring_fill = st->ring_fill,
				 .drops = st->underflow_beats};
	ser->ring_chunks = st->ring_chunks;
	if (nvt_series_add(ser, &smp)) {
		/* out of memory: the series stays shorter, the run itself goes on */
	}
}

void nvt_series_add_end(struct nvt_series *ser, const struct nvt_sample *end)
{
	if (ser->n && end->t_ns > ser->s[ser->n - 1].t_ns &&
	    end->bytes >= ser->s[ser->n - 1].bytes && nvt_series_add(ser, end)) {
		/* out of memory: the series ends at its last sample */
	}
}

void nvt_series_free(struct nvt_series *ser)
{
	free(ser->s);
	memset(ser, 0, sizeof(*ser));
}
