/* SPDX-License-Identifier: MIT */
/* The sink thread's frame: consume the player's chunks in order at the programmed rate with the
 * test-pattern source's pacing rules (exact long-term rate, ~20-50 us steps). Data due with
 * none there is an underflow: counted in units and events, timed, and the schedule goes on. */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "stream/pacer.h"
#include "stream/sink_frame.h"
#include "util/sysutil.h"

struct cursor {
	struct nvt_chunk c;
	uint64_t off; /* bytes of c consumed */
	bool have;
	bool over; /* the player has no more */
	uint64_t pass;
};

/* Ask the player for the next chunk (flags as nvt_player_next); true when it is current. */
static bool next_chunk(struct nvt_sink_frame *f, struct cursor *c, unsigned flags, int *rc)
{
	int r = nvt_player_next(f->pl, &c->c, flags);

	if (r == -EAGAIN)
		return false;
	if (r) {
		c->over = true;
		if (r != -ENODATA && r != -ECANCELED)
			*rc = r;
		return false;
	}
	c->have = true;
	c->off = 0;
	if (c->c.pass != c->pass) {
		c->pass = c->c.pass;
		atomic_fetch_add(&f->passes, 1);
		if (f->ops->pass_start)
			f->ops->pass_start(f->state);
	}
	return true;
}

/* Make the oldest unread chunk current; false when none is there yet or the stream is over. */
static bool take(struct nvt_sink_frame *f, struct cursor *c, int *rc)
{
	if (c->have)
		return true;
	return !c->over && next_chunk(f, c, NVT_NEXT_NOWAIT, rc);
}

/* Consume up to `units`; returns how many were there. */
static uint64_t consume(struct nvt_sink_frame *f, struct cursor *c, uint64_t units, int *rc)
{
	uint64_t got = 0, unit = f->unit;

	while (units && !*rc && take(f, c, rc)) {
		uint64_t k = (c->c.bytes - c->off) / unit;
		if (k > units)
			k = units;
		*rc = f->ops->consume(f->state, c->c.data + c->off, k * unit, c->c.offset + c->off,
				      &f->err);
		c->off += k * unit;
		atomic_fetch_add(&f->consumed_bytes, k * unit);
		got += k;
		units -= k;
		if (c->c.bytes - c->off < unit) { /* done with this chunk: back to the reader */
			c->have = false;
			nvt_player_release(f->pl);
		}
	}
	return got;
}

static _Thread_local uint64_t data_came;

uint64_t nvt_sink_frame_data_came(void)
{
	return data_came;
}

/* The ring is empty: wait for the next chunk. */
static void wait_data(struct nvt_sink_frame *f, struct cursor *c, int *rc)
{
	if (!c->have && !c->over && next_chunk(f, c, 0, rc))
		data_came = nvt_mono_ns();
}

static int run_unpaced(struct nvt_sink_frame *f, struct cursor *c)
{
	int rc = 0;

	while (!rc && !atomic_load(&f->stop)) {
		if (!consume(f, c, UINT64_MAX, &rc)) {
			if (c->over) {
				f->finished = !rc;
				break;
			}
			wait_data(f, c, &rc);
		}
	}
	return rc;
}

static void underflow(struct nvt_sink_frame *f, uint64_t units, uint64_t now, uint64_t t0,
		      bool *dry)
{
	atomic_fetch_add(&f->underflow_beats, units);
	if (!*dry) {
		if (!atomic_load(&f->underflow_events))
			f->first_underflow_ns = now - t0;
		atomic_fetch_add(&f->underflow_events, 1);
		*dry = true;
	}
}

/* A sink that was held back (a slow pipe reader) is late, not slower. */
static void lateness(struct nvt_sink_frame *f, const struct nvt_pacer *pc, uint64_t emitted,
		     bool *late)
{
	uint64_t after = nvt_mono_ns(), on_time = nvt_pacer_time_of(pc, emitted);

	if ((f->ops->caps & NVT_SINK_CAN_BLOCK) && after > on_time + 1000000) {
		if (after - on_time > f->max_late_ns)
			f->max_late_ns = after - on_time;
		if (!*late)
			atomic_fetch_add(&f->late_events, 1);
		*late = true;
	} else {
		*late = false;
	}
}

static int run_paced(struct nvt_sink_frame *f, struct cursor *c)
{
	struct nvt_pacer pc;
	uint64_t emitted = 0, t0 = atomic_load(&f->t0_mono);
	bool dry = false, late = false;
	int rc = 0;

	nvt_pacer_init(&pc, t0, f->rate_bps, f->unit);
	while (!rc && !atomic_load(&f->stop)) {
		uint64_t now = nvt_mono_ns(), due = nvt_pacer_due(&pc, now);
		if (due > emitted) {
			uint64_t want = due - emitted, got = consume(f, c, want, &rc);
			emitted += got;
			if (got)
				dry = false;
			if (got < want) {
				if (c->over) {
					f->finished = !rc;
					break;
				}
				underflow(f, want - got, now, t0, &dry);
				emitted += want - got; /* lost to the schedule */
			}
			lateness(f, &pc, emitted, &late);
		} else if (c->over) {
			f->finished = !rc;
			break;
		}
		nvt_sleep_until(nvt_pacer_time_of(&pc, emitted + pc.quantum));
	}
	return rc;
}

static void *sink_thread(void *arg)
{
	struct nvt_sink_frame *f = arg;
	struct cursor c = {.pass = UINT64_MAX};
	uint64_t c0;
	int rc;

	prctl(PR_SET_NAME, "nvt-sink");
	prctl(PR_SET_TIMERSLACK, 1000UL);
	c0 = nvt_thread_cpu_ns();
	atomic_store(&f->t0_mono, nvt_mono_ns());
	rc = f->rate_bps ? run_paced(f, &c) : run_unpaced(f, &c);
	if (rc && !f->err.code)
		nvt_err_set(&f->err, -rc, "sink %s: %s", f->ops->name, strerror(-rc));
	f->end_mono = nvt_mono_ns();
	f->cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_player_stop(f->pl); /* the reader must not wait for a sink that is gone */
	atomic_store(&f->done, 1);
	return NULL;
}

int nvt_sink_frame_start(struct nvt_sink_frame *f, struct nvt_err *err)
{
	int rc = pthread_create(&f->thread, NULL, sink_thread, f);

	if (rc) {
		nvt_err_set(err, rc, "cannot start the sink thread: %s", strerror(rc));
		return -rc;
	}
	f->started = true;
	return 0;
}

void nvt_sink_frame_stop(struct nvt_sink_frame *f)
{
	atomic_store(&f->stop, 1);
}

void nvt_sink_frame_join(struct nvt_sink_frame *f)
{
	if (f->started)
		pthread_join(f->thread, NULL);
	f->started = false;
}
