/* SPDX-License-Identifier: MIT */
/* The sink thread's frame: consume published chunks in order at the programmed rate with the
 * test-pattern source's pacing rules (exact long-term rate, ~20-50 us steps). Data due with
 * none there is an underflow: counted in beats and events, timed, and the schedule goes on. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "stream/pacer.h"
#include "stream/sink.h"
#include "util/sysutil.h"

static const struct nvt_sink_ops *const sinks[] = {&nvt_sink_checker, &nvt_sink_stdout,
						   &nvt_sink_null};

const struct nvt_sink_ops *nvt_sink_find(const char *name)
{
	for (size_t i = 0; i < sizeof(sinks) / sizeof(sinks[0]); i++)
		if (strcmp(sinks[i]->name, name) == 0)
			return sinks[i];
	return NULL;
}

struct cursor {
	uint64_t seq; /* ring chunk being consumed */
	uint64_t off; /* bytes of it consumed */
	bool have;
};

/* Make the oldest published chunk current; false when none is published. */
static bool take(struct nvt_sink *s, struct cursor *c)
{
	if (c->have)
		return true;
	if (c->seq >= nvt_ring_published(s->ring))
		return false;
	c->have = true;
	c->off = 0;
	if ((s->ring->flags[c->seq % s->ring->nchunks] & NVT_CHUNK_PASS_START)) {
		s->passes++;
		s->pass_offset = 0;
		if (s->ops->pass_start)
			s->ops->pass_start(s);
	}
	return true;
}

/* Consume up to `units` beats; returns how many were there. */
static uint64_t consume(struct nvt_sink *s, struct cursor *c, uint64_t units, int *rc)
{
	uint64_t got = 0, unit = s->p.beat_bytes;

	while (units && !*rc && take(s, c)) {
		uint64_t len = s->ring->fill[c->seq % s->ring->nchunks];
		uint64_t k = (len - c->off) / unit;
		if (k > units)
			k = units;
		*rc = s->ops->consume(s, nvt_ring_chunk(s->ring, c->seq) + c->off, k * unit,
				      s->pass_offset);
		c->off += k * unit;
		s->pass_offset += k * unit;
		atomic_fetch_add(&s->consumed_bytes, k * unit);
		got += k;
		units -= k;
		if (len - c->off < unit) { /* done with this chunk: back to the reader */
			c->have = false;
			c->seq++;
			nvt_ring_release(s->ring);
		}
	}
	return got;
}

static bool drained(struct nvt_sink *s, const struct cursor *c)
{
	return !c->have && atomic_load(&s->ring->closed) && c->seq == nvt_ring_published(s->ring);
}

static void wait_data(struct nvt_sink *s, int timeout_ms)
{
	struct pollfd pfd = {.fd = s->ring->cons_efd, .events = POLLIN};
	uint64_t v;

	if (poll(&pfd, 1, timeout_ms) > 0 && read(s->ring->cons_efd, &v, sizeof(v)) < 0)
		return;
}

static int run_unpaced(struct nvt_sink *s, struct cursor *c)
{
	int rc = 0;

	while (!rc && !atomic_load(&s->stop)) {
		if (!consume(s, c, UINT64_MAX, &rc)) {
			if (drained(s, c)) {
				s->finished = true;
				break;
			}
			wait_data(s, 100);
		}
	}
	return rc;
}

static int run_paced(struct nvt_sink *s, struct cursor *c)
{
	struct nvt_pacer pc;
	uint64_t emitted = 0, t0 = atomic_load(&s->t0_mono);
	bool dry = false, late = false;
	int rc = 0;

	nvt_pacer_init(&pc, t0, s->p.rate_bps, s->p.beat_bytes);
	while (!rc && !atomic_load(&s->stop)) {
		uint64_t now = nvt_mono_ns(), due = nvt_pacer_due(&pc, now);
		if (due > emitted) {
			uint64_t want = due - emitted, got = consume(s, c, want, &rc);
			emitted += got;
			if (got)
				dry = false;
			if (got < want) {
				if (drained(s, c)) {
					s->finished = true;
					break;
				}
				/* the stream ran dry: these beats are lost to the schedule */
				atomic_fetch_add(&s->underflow_beats, want - got);
				emitted += want - got;
				if (!dry) {
					if (!atomic_load(&s->underflow_events))
						s->first_underflow_ns = now - t0;
					atomic_fetch_add(&s->underflow_events, 1);
					dry = true;
				}
			}
			/* a sink that was held back (a slow pipe reader) is late, not slower */
			uint64_t after = nvt_mono_ns(), on_time = nvt_pacer_time_of(&pc, emitted);
			if (s->ops->can_block && after > on_time + 1000000) {
				if (after - on_time > s->max_late_ns)
					s->max_late_ns = after - on_time;
				if (!late)
					atomic_fetch_add(&s->late_events, 1);
				late = true;
			} else {
				late = false;
			}
		} else if (drained(s, c)) {
			s->finished = true;
			break;
		}
		nvt_sleep_until(nvt_pacer_time_of(&pc, emitted + pc.quantum));
	}
	return rc;
}

static void *sink_thread(void *arg)
{
	struct nvt_sink *s = arg;
	struct cursor c = {0};
	uint64_t c0;
	int rc;

	prctl(PR_SET_NAME, "nvt-sink");
	prctl(PR_SET_TIMERSLACK, 1000UL);
	c0 = nvt_thread_cpu_ns();
	atomic_store(&s->t0_mono, nvt_mono_ns());
	rc = s->p.rate_bps ? run_paced(s, &c) : run_unpaced(s, &c);
	if (rc && !s->err.code)
		nvt_err_set(&s->err, -rc, "sink %s: %s", s->ops->name, strerror(-rc));
	s->end_mono = nvt_mono_ns();
	s->cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_ring_abort(s->ring); /* the reader must not wait for a sink that is gone */
	return NULL;
}

static void sink_event(void *arg, const struct nvt_check_event *ev)
{
	struct nvt_sink *s = arg;

	if (s->on_event)
		s->on_event(ev, s->arg);
}

int nvt_sink_start(struct nvt_sink *s, const struct nvt_sink_ops *ops,
		   const struct nvt_sink_params *p, struct nvt_ring *ring, struct nvt_err *err)
{
	int rc;

	s->ops = ops;
	s->p = *p;
	s->ring = ring;
	s->chk.on_event = sink_event;
	s->chk.arg = s;
	nvt_checker_init(&s->chk, p->first_seq);
	rc = pthread_create(&s->thread, NULL, sink_thread, s);
	if (rc) {
		nvt_err_set(err, rc, "cannot start the sink thread: %s", strerror(rc));
		return -rc;
	}
	s->started = true;
	return 0;
}

void nvt_sink_request_stop(struct nvt_sink *s)
{
	atomic_store(&s->stop, 1);
}

void nvt_sink_join(struct nvt_sink *s)
{
	if (s->started)
		pthread_join(s->thread, NULL);
	s->started = false;
}
