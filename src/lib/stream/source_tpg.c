/* SPDX-License-Identifier: MIT */
/* The test-pattern generator: an ADC model emitting 16-byte {seq, ~seq} beats at a programmed
 * rate with smooth pacing (~50 us of data per step). It is never stalled: when no ring chunk is
 * free it drops beats, counts them, records where, and keeps advancing seq. With no rate it
 * runs unpaced, limited only by the ring (a benchmark of the storage, no drops). */
#include <errno.h>

#include "stream/pacer.h"
#include "nvtape/pattern.h"
#include "stream/source.h"
#include "util/sysutil.h"

/* Place up to n beats starting at *seq; beats that find no free chunk are dropped.
 * Stops early only at the size limit. */
static void tpg_emit(struct nvt_source *s, uint64_t *seq, uint64_t n)
{
	uint64_t chunk = s->ring->chunk_bytes;

	while (n) {
		uint64_t room, k;

		if (!nvt_src_take_chunk(s)) {
			nvt_src_drop(s, n);
			*seq += n;
			return;
		}
		room = (chunk - s->cur_fill) / 16;
		if (s->p.limit_bytes) {
			uint64_t left = (s->p.limit_bytes - atomic_load(&s->produced_bytes)) / 16;
			if (left < room)
				room = left;
		}
		k = n < room ? n : room;
		nvt_pattern_fill(s->cur + s->cur_fill, *seq, k);
		s->cur_fill += k * 16;
		*seq += k;
		n -= k;
		atomic_fetch_add(&s->produced_bytes, k * 16);
		if (s->cur_fill == chunk)
			nvt_src_publish(s);
		if (k < room || !room)
			return; /* limit reached */
	}
}

/* Complete the open chunk to a 4 KiB boundary (a few microseconds of beats) and publish it. */
static void tpg_finish(struct nvt_source *s, uint64_t *seq)
{
	if (s->cur && s->cur_fill % 4096) {
		uint64_t k = (4096 - s->cur_fill % 4096) / 16;
		nvt_pattern_fill(s->cur + s->cur_fill, *seq, k);
		s->cur_fill += k * 16;
		*seq += k;
		atomic_fetch_add(&s->produced_bytes, k * 16);
		atomic_fetch_add(&s->emitted, k);
	}
	nvt_src_publish(s);
}

static int tpg_run_unpaced(struct nvt_source *s)
{
	uint64_t seq = s->p.first_seq;

	nvt_src_mark_start(s);
	for (;;) {
		if (atomic_load(&s->stop) || atomic_load(&s->ring->aborted)) {
			s->end = NVT_SRC_END_STOP;
			break;
		}
		if (nvt_src_limit_reached(s, nvt_mono_ns())) {
			s->end = NVT_SRC_END_LIMIT;
			break;
		}
		if (!nvt_src_take_chunk(s)) {
			int rc = nvt_ring_wait_free(s->ring, 100);
			if (rc == -ECANCELED) {
				s->end = NVT_SRC_END_STOP;
				break;
			}
			continue;
		}
		uint64_t before = seq;
		tpg_emit(s, &seq, s->ring->chunk_bytes / 16);
		atomic_fetch_add(&s->emitted, seq - before);
		nvt_src_publish(s);
	}
	tpg_finish(s, &seq);
	return 0;
}

static int tpg_run_paced(struct nvt_source *s)
{
	struct nvt_pacer pc;
	uint64_t seq = s->p.first_seq, emitted = 0, max_due = UINT64_MAX;
	uint64_t long_step =
		(uint64_t)((unsigned __int128)s->p.rate_bps * NVT_PACE_MAX_NS / 1000000000ull / 16);

	nvt_src_mark_start(s);
	nvt_pacer_init(&pc, atomic_load(&s->t0_mono), s->p.rate_bps, 16);
	if (s->p.duration_ns)
		max_due = nvt_pacer_due(&pc, pc.t0_ns + s->p.duration_ns);
	for (;;) {
		uint64_t due = nvt_pacer_due(&pc, nvt_mono_ns());
		if (due > max_due)
			due = max_due;
		if (due > emitted) {
			uint64_t n = due - emitted;
			tpg_emit(s, &seq, n);
			emitted = due;
			atomic_store(&s->emitted, seq - s->p.first_seq);
			s->steps++;
			if (n > long_step)
				s->steps_long++;
			if (n * 16 > s->max_step_bytes)
				s->max_step_bytes = n * 16;
		}
		if ((s->p.limit_bytes && atomic_load(&s->produced_bytes) >= s->p.limit_bytes) ||
		    emitted >= max_due) {
			s->end = NVT_SRC_END_LIMIT;
			break;
		}
		if (atomic_load(&s->stop) || atomic_load(&s->ring->aborted)) {
			s->end = NVT_SRC_END_STOP;
			break;
		}
		nvt_sleep_until(nvt_pacer_time_of(&pc, emitted + pc.quantum));
	}
	tpg_finish(s, &seq);
	return 0;
}

static int tpg_run(struct nvt_source *s)
{
	return s->p.rate_bps ? tpg_run_paced(s) : tpg_run_unpaced(s);
}

const struct nvt_source_ops nvt_source_tpg = {
	.name = "tpg",
	.help = "test pattern {seq, ~seq} at --rate; never stalled: drops are counted and indexed",
	.kind = NVT_SRC_TPG,
	.beat_bytes = NVT_BEAT_BYTES,
	.never_stalls = true,
	.run = tpg_run,
};
