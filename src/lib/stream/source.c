/* SPDX-License-Identifier: MIT */
/* The source thread's frame and the producer bookkeeping every source shares: taking free
 * chunks, publishing them in order, and recording where and how many beats were dropped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "stream/source.h"
#include "util/sysutil.h"

static const struct nvt_source_ops *const sources[] = {&nvt_source_tpg, &nvt_source_stdin};

const struct nvt_source_ops *nvt_source_find(const char *name)
{
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (strcmp(sources[i]->name, name) == 0)
			return sources[i];
	return NULL;
}

void nvt_src_mark_start(struct nvt_source *s)
{
	if (!atomic_load(&s->t0_mono)) {
		s->t0_real = nvt_real_ns();
		atomic_store(&s->t0_mono, nvt_mono_ns());
	}
}

bool nvt_src_limit_reached(const struct nvt_source *s, uint64_t now_mono)
{
	uint64_t t0 = atomic_load(&s->t0_mono);

	if (s->p.limit_bytes && atomic_load(&s->produced_bytes) >= s->p.limit_bytes)
		return true;
	return s->p.duration_ns && t0 && now_mono - t0 >= s->p.duration_ns;
}

static void add_event(struct nvt_source *s, uint64_t offset, uint64_t beats)
{
	uint64_t t0 = atomic_load(&s->t0_mono);
	struct nvt_drop_event ev = {
		.data_offset = offset, .beats = beats, .time_ns = t0 ? nvt_mono_ns() - t0 : 0};

	pthread_mutex_lock(&s->ev_lock);
	if (s->nev == s->ev_cap) {
		uint64_t cap = s->ev_cap ? s->ev_cap * 2 : 256;
		struct nvt_drop_event *n = realloc(s->ev, cap * sizeof(*n));
		if (!n) {
			/* the count stays exact in drops; only the position list is cut short */
			pthread_mutex_unlock(&s->ev_lock);
			return;
		}
		s->ev = n;
		s->ev_cap = cap;
	}
	s->ev[s->nev++] = ev;
	pthread_mutex_unlock(&s->ev_lock);
}

bool nvt_src_take_chunk(struct nvt_source *s)
{
	if (s->cur)
		return true;
	if (!nvt_ring_can_produce(s->ring))
		return false;
	s->cur =
		nvt_ring_chunk(s->ring, atomic_load_explicit(&s->ring->head, memory_order_relaxed));
	s->cur_fill = 0;
	if (s->pending_drop) {
		add_event(s, atomic_load(&s->published_bytes), s->pending_drop);
		s->pending_drop = 0;
	}
	return true;
}

void nvt_src_publish(struct nvt_source *s)
{
	if (!s->cur)
		return;
	if (s->cur_fill) {
		atomic_fetch_add(&s->published_bytes, s->cur_fill);
		nvt_ring_publish(s->ring, (uint32_t)s->cur_fill);
	}
	s->cur = NULL;
	s->cur_fill = 0;
}

void nvt_src_drop(struct nvt_source *s, uint64_t beats)
{
	s->pending_drop += beats;
	atomic_fetch_add(&s->drops, beats);
}

static void *source_thread(void *arg)
{
	struct nvt_source *s = arg;
	uint64_t c0;

	prctl(PR_SET_NAME, "nvt-source");
	prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: pacing sleeps must be short and precise */
	c0 = nvt_thread_cpu_ns();
	if (s->ops->run(s) && !s->err.code)
		nvt_err_set(&s->err, EIO, "source %s failed", s->ops->name);
	if (s->pending_drop) { /* beats dropped after the last recorded beat */
		add_event(s, atomic_load(&s->published_bytes), s->pending_drop);
		s->pending_drop = 0;
	}
	s->end_mono = nvt_mono_ns();
	s->cpu_ns = nvt_thread_cpu_ns() - c0;
	nvt_ring_close(s->ring);
	return NULL;
}

int nvt_source_start(struct nvt_source *s, const struct nvt_source_ops *ops,
		     const struct nvt_source_params *p, struct nvt_ring *ring, struct nvt_err *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->ops = ops;
	s->p = *p;
	s->ring = ring;
	pthread_mutex_init(&s->ev_lock, NULL);
	rc = pthread_create(&s->thread, NULL, source_thread, s);
	if (rc) {
		nvt_err_set(err, rc, "cannot start the source thread: %s", strerror(rc));
		return -rc;
	}
	s->started = true;
	return 0;
}

void nvt_source_request_stop(struct nvt_source *s)
{
	atomic_store(&s->stop, 1);
}

void nvt_source_join(struct nvt_source *s)
{
	if (s->started)
		pthread_join(s->thread, NULL);
	s->started = false;
}

void nvt_source_free(struct nvt_source *s)
{
	free(s->ev);
	s->ev = NULL;
	pthread_mutex_destroy(&s->ev_lock);
}

struct nvt_drop_event *nvt_source_drop_events(struct nvt_source *s, uint64_t *n)
{
	struct nvt_drop_event *copy;

	pthread_mutex_lock(&s->ev_lock);
	*n = s->nev;
	copy = malloc((s->nev ? s->nev : 1) * sizeof(*copy));
	if (copy && s->nev)
		memcpy(copy, s->ev, s->nev * sizeof(*copy));
	if (!copy)
		*n = 0;
	pthread_mutex_unlock(&s->ev_lock);
	return copy;
}
