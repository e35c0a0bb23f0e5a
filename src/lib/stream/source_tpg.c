/* SPDX-License-Identifier: MIT */
/* The test-pattern generator: an ADC model emitting 16-byte {seq, ~seq} beats at a programmed
 * rate with smooth pacing (~50 us of data per step), written through the push API like any
 * producer. It is never stalled: when no ring chunk is free it reports the beats as dropped
 * (the recorder counts and indexes them) and keeps advancing seq. With no rate it runs
 * unpaced, limited only by the storage (a benchmark of the storage, no drops). */
#include <errno.h>

#include "nvtape/format.h"
#include "nvtape/pattern.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"
#include "stream/pacer.h"
#include "util/sysutil.h"

/* Place n beats starting at *seq; beats that find no free chunk are dropped. False once the
 * recording is stopping (the rest is not due any more). */
static bool tpg_emit(struct nvt_recorder *r, uint64_t *seq, uint64_t n, unsigned flags)
{
	while (n) {
		size_t room;
		void *p = nvt_recorder_acquire(r, &room, flags);
		if (!p) {
			if (errno != EAGAIN)
				return false;
			nvt_recorder_drop(r, n);
			*seq += n;
			return true;
		}
		uint64_t k = room / NVT_BEAT_BYTES < n ? room / NVT_BEAT_BYTES : n;
		nvt_pattern_fill(p, *seq, k);
		nvt_recorder_commit(r, k * NVT_BEAT_BYTES);
		*seq += k;
		n -= k;
	}
	return true;
}

static int tpg_run_unpaced(struct nvt_recorder *r, uint64_t seq)
{
	size_t room;

	for (;;) {
		void *p = nvt_recorder_acquire(r, &room, 0);
		if (!p)
			return 0;
		nvt_pattern_fill(p, seq, room / NVT_BEAT_BYTES);
		nvt_recorder_commit(r, room - room % NVT_BEAT_BYTES);
		seq += room / NVT_BEAT_BYTES;
	}
}

static int tpg_run_paced(struct nvt_recorder *r, const struct nvt_source_args *a,
			 struct nvt_source_report *rep)
{
	struct nvt_pacer pc;
	uint64_t seq = a->first_seq, emitted = 0, max_due = UINT64_MAX;
	uint64_t long_step = (uint64_t)((unsigned __int128)a->rate_bps * NVT_PACE_MAX_NS /
					1000000000ull / NVT_BEAT_BYTES);

	nvt_pacer_init(&pc, nvt_mono_ns(), a->rate_bps, NVT_BEAT_BYTES);
	if (a->duration_ns)
		max_due = nvt_pacer_due(&pc, pc.t0_ns + a->duration_ns);
	for (;;) {
		uint64_t due = nvt_pacer_due(&pc, nvt_mono_ns());
		if (due > max_due)
			due = max_due;
		if (due > emitted) {
			uint64_t n = due - emitted;
			if (!tpg_emit(r, &seq, n, NVT_ACQUIRE_NOWAIT))
				return 0;
			emitted = due;
			rep->pace_steps++;
			if (n > long_step)
				rep->pace_steps_long++;
			if (n * NVT_BEAT_BYTES > rep->pace_max_step_bytes)
				rep->pace_max_step_bytes = n * NVT_BEAT_BYTES;
		}
		if (emitted >= max_due)
			return NVT_SOURCE_AT_LIMIT;
		if (nvt_recorder_stopping(r))
			return 0;
		nvt_sleep_until(nvt_pacer_time_of(&pc, emitted + pc.quantum));
	}
}

static int tpg_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		   struct nvt_source_report *rep, struct nvt_err *err)
{
	(void)err;
	return a->rate_bps ? tpg_run_paced(r, a, rep) : tpg_run_unpaced(r, a->first_seq);
}

const struct nvt_source_ops nvt_source_tpg = {
	.name = "tpg",
	.help = "test pattern {seq, ~seq} at a programmed rate; never stalled: drops are counted "
		"and indexed",
	.kind = NVT_SRC_TPG,
	.unit_bytes = NVT_BEAT_BYTES,
	.caps = NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_PACED | NVT_SOURCE_PATTERN,
	.run = tpg_run,
};
