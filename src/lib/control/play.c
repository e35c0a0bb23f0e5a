/* SPDX-License-Identifier: MIT */
/* Playback into a registered sink: the player (pull API) reads the recording into the ring, a
 * paced sink thread pulls from it, and the calling thread watches: live stats, the ring's
 * low-water, interruption, and the verdict of the checks once every pass has played. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/counter_pick.h"
#include "nvtape/player.h"
#include "nvtape/sink.h"
#include "stream/sink_frame.h"
#include "util/mul.h"
#include "util/opts.h"
#include "util/sysutil.h"

void nvt_play_opts_init(struct nvt_play_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->loops = 1;
	o->timeout_ns = 10000000000ull;
	o->stats_ns = 1000000000ull;
	o->out_fd = 1;
	o->speed = 1;
	o->late_ns = 200000;
}

static void fill_stats(struct nvt_sink_frame *f, struct nvt_play_stats *st, uint64_t now)
{
	uint64_t t0 = atomic_load(&f->t0_mono);

	nvt_player_stats(f->pl, st);
	st->elapsed_ns = t0 && now > t0 ? now - t0 : 0;
	st->bytes_played = atomic_load(&f->consumed_bytes);
	st->underflow_beats = atomic_load(&f->underflow_beats);
	st->underflow_events = atomic_load(&f->underflow_events);
	st->late_events = atomic_load(&f->late_events);
	st->passes = atomic_load(&f->passes);
}

/* The calling thread while the sink plays: stats, low-water, interruption. */
static void watch(const struct nvt_play_opts *o, struct nvt_sink_frame *f,
		  struct nvt_play_result *res)
{
	uint64_t next_stats = nvt_mono_ns() + o->stats_ns;
	struct nvt_play_stats st;

	res->st.ring_low = o->chunks;
	while (!atomic_load(&f->done)) {
		uint64_t now = nvt_mono_ns();
		if (nvt_interrupted(o->interrupt) && !res->interrupted) {
			res->interrupted = true;
			nvt_sink_frame_stop(f);
			nvt_player_stop(f->pl);
		}
		memset(&st, 0, sizeof(st));
		fill_stats(f, &st, now);
		if (st.bytes_read < res->rec.valid_bytes * (o->loops ? o->loops : 1) || !o->loops)
			if (st.ring_fill < res->st.ring_low)
				res->st.ring_low = st.ring_fill;
		if (o->stats_ns && now >= next_stats && o->progress) {
			st.ring_low = res->st.ring_low;
			o->progress(&st, o->arg);
			next_stats += o->stats_ns;
			if (next_stats < now)
				next_stats = now + o->stats_ns;
		}
		nvt_sleep_until(now + 1000000);
	}
}

static void judge(const struct nvt_sink_frame *f, struct nvt_play_result *res,
		  const struct nvt_drop_event *ev, uint64_t nev)
{
	uint64_t after = 0, want;
	int cmp;

	for (uint64_t i = 0; i < nev; i++)
		if (ev[i].data_offset >= res->rec.valid_bytes)
			after += ev[i].beats;
	res->expected_gap_beats =
		res->rec.drop_count - (after < res->rec.drop_count ? after : res->rec.drop_count);
	if (f->ops->underflows) /* a device sink's own underflows */
		res->st.underflow_beats += f->ops->underflows(f->state);
	if (f->ops->report) {
		struct nvt_sink_report rep = {0};
		f->ops->report(f->state, &rep);
		res->packets = rep.packets;
		res->packets_skipped = rep.skipped;
		res->packets_late = rep.late;
		res->packets_late_dry = rep.late_dry;
		res->late_max_ns = rep.late_max_ns;
		res->st.underflow_beats += rep.late;
		res->st.underflow_events += rep.late_events;
		if (rep.err.code && !res->err.code)
			res->err = rep.err;
	}
	if (res->st.underflow_beats)
		res->problems |= NVT_PP_UNDERFLOW;
	if (res->st.late_events)
		res->problems |= NVT_PP_LATE;
	if (!res->rec.complete)
		res->problems |= NVT_PP_INCOMPLETE;
	if (!f->ops->checker)
		return;
	res->checked = true;
	res->chk = *f->ops->checker(f->state);
	want = res->expected_gap_beats * res->st.passes;
	if (res->chk.corrupt)
		res->problems |= NVT_PP_ERRORS;
	if (res->chk.backward)
		res->problems |= NVT_PP_BACKWARD;
	/* in bytes: the gaps' beats or records against the drops' units */
	cmp = nvt_mul_cmp(res->chk.gap_beats,
			  res->counter_checked ? res->counter.stride : res->rec.beat_bytes, want,
			  res->rec.beat_bytes);
	if (res->rec.format == NVT_FMT_FDREC ? cmp > 0 : cmp != 0)
		res->problems |= NVT_PP_GAPS;
	if (!res->counter_checked && res->chk.seen_good &&
	    res->chk.first_seen != res->rec.first_seq && !res->chk.corrupt)
		res->problems |= NVT_PP_FIRST;
}

static int open_sink(const struct nvt_play_opts *o, struct nvt_sink_frame *f,
		     struct nvt_play_result *res)
{
	const struct nvt_recording *rec = &res->rec;
	struct nvt_err *err = &res->err;
	const char *name = o->sink ? o->sink : "checker", *colon = strchr(name, ':');
	struct nvt_sink_args a = {.first_seq = rec->first_seq,
				  .unit_bytes = rec->beat_bytes,
				  .fd = o->out_fd,
				  .arg = colon ? colon + 1 : "",
				  .ctx = o->sink_ctx,
				  .on_event = o->on_event,
				  .event_arg = o->arg,
				  .counter = res->counter_checked ? &res->counter : NULL,
				  .timing = o->timing,
				  .speed = o->speed,
				  .rate_bps = o->rate_bps,
				  .pps = o->pps,
				  .late_ns = o->late_ns};

	f->ops = nvt_sink_find(name);
	if (!f->ops) {
		nvt_err_param(err, "unknown sink \"%s\" (sinks: %s)", name, nvt_sink_names());
		return -EINVAL;
	}
	if ((f->ops->caps & NVT_SINK_NEEDS_PATTERN) &&
	    !nvt_source_kind_is_pattern(rec->source_kind) && !res->counter_checked) {
		nvt_err_param(err,
			      "the recording is not test pattern (source %s) and names no counter "
			      "to check: the %s sink has nothing to check; give --check, or play "
			      "it into the stdout or null sink",
			      nvt_source_kind_name(rec->source_kind), f->ops->name);
		nvt_err_set_hint(err, NVT_HINT_OTHER_SINK, 0, 0, 0);
		return -EINVAL;
	}
	if (!!(f->ops->caps & NVT_SINK_PACKETS) != !!nvt_source_kind_is_packets(rec->source_kind)) {
		nvt_err_param(
			err,
			(f->ops->caps & NVT_SINK_PACKETS)
				? "the %s sink sends packets: this recording holds none (its "
				  "source is %s)"
				: "the %s sink takes a stream, and this recording holds packets "
				  "(its source is %s): play it into the udp or packet sink",
			f->ops->name, nvt_source_kind_name(rec->source_kind));
		return -EINVAL;
	}
	if ((o->timing != NVT_TIMING_ORIGINAL && o->timing != NVT_TIMING_FAST) ||
	    !(o->speed > 0 && o->speed < 1e9)) {
		nvt_err_param(err, "timing is original or fast, and the speed a factor above 0");
		return -EINVAL;
	}
	/* a packet sink keeps its own schedule: the frame feeds it as fast as it takes */
	f->rate_bps = (f->ops->caps & NVT_SINK_PACKETS) ? 0 : o->rate_bps;
	f->unit = rec->beat_bytes;
	return f->ops->open ? f->ops->open(&f->state, &a, err) : 0;
}

static void collect(struct nvt_sink_frame *f, struct nvt_play_result *res, uint64_t t_start)
{
	uint64_t end = f->end_mono ? f->end_mono : nvt_mono_ns();

	fill_stats(f, &res->st, end);
	/* the sink's interval; when the ring held (nearly) everything before the sink started,
	 * the data moved from the first read on */
	res->seconds = res->st.elapsed_ns / 1e9;
	if (res->st.elapsed_ns < end - t_start - res->st.elapsed_ns)
		res->seconds = (end - t_start) / 1e9;
	res->sink_cpu_ns = f->cpu_ns;
	res->first_underflow_ns = f->first_underflow_ns;
	res->max_late_ns = f->max_late_ns;
	if (f->err.code && !res->err.code)
		res->err = f->err;
}

int nvt_play(const struct nvt_play_opts *given, struct nvt_play_result *res)
{
	struct nvt_play_opts oo, *o = &oo;
	struct nvt_sink_frame f;
	const struct nvt_drop_event *ev;
	uint64_t nev, t_start = nvt_mono_ns(), ring_low;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&f, 0, sizeof(f));
	nvt_play_opts_init(o);
	rc = nvt_opts_merge(o, sizeof(*o), given, "nvt_play_opts_init", &res->err);
	if (!rc)
		rc = nvt_player_open(o, &f.pl, &res->err);
	if (rc)
		return rc;
	res->rec = *nvt_player_recording(f.pl);
	rc = nvt_counter_pick(o->check, &res->rec, o->notice, o->arg, &res->counter, &res->err);
	res->counter_checked = rc > 0;
	rc = rc < 0 ? rc : open_sink(o, &f, res);
	if (!rc && o->opened)
		o->opened(o->arg);
	if (!rc)
		rc = nvt_sink_frame_start(&f, &res->err);
	if (!rc) {
		watch(o, &f, res);
		nvt_sink_frame_join(&f);
	}
	ring_low = res->st.ring_low;
	collect(&f, res, t_start);
	res->st.ring_low = ring_low;
	nvt_player_drops(f.pl, &ev, &nev);
	if (!rc)
		judge(&f, res, ev, nev);
	if (f.ops && f.ops->close && f.state)
		f.ops->close(f.state);
	if (nvt_player_close(f.pl, res) && !rc)
		rc = -(res->err.code ? res->err.code : EIO);
	if (res->sums_bad)
		res->problems |= NVT_PP_CHECKSUM;
	if (rc)
		return rc;
	res->complete = f.finished && !res->interrupted && !res->err.code;
	if (!res->complete) {
		if (res->interrupted && !res->err.code)
			nvt_err_set(&res->err, EINTR, "interrupted: playback incomplete");
		return -(res->err.code ? res->err.code : EIO);
	}
	return 0;
}
