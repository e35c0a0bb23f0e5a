/* SPDX-License-Identifier: MIT */
/* Unit tests: the test-pattern source keeps its long-term rate, paces in small steps, and
 * accounts for every beat it drops (count and position). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "nvtape/pattern.h"
#include "stream/source.h"
#include "util/sysutil.h"

struct drain {
	struct nvt_ring *r;
	_Atomic int stop;
	struct nvt_checker chk;
	uint64_t offset;
};

/* A consumer that checks and releases every chunk at once: a storage that is never slow. */
static void *drain_thread(void *arg)
{
	struct drain *d = arg;
	uint64_t next = 0;

	for (;;) {
		if (next < nvt_ring_published(d->r)) {
			uint32_t len = d->r->fill[next % d->r->nchunks];
			nvt_checker_feed(&d->chk, nvt_ring_chunk(d->r, next), len, d->offset);
			d->offset += len;
			next++;
			nvt_ring_release(d->r);
		} else if (atomic_load(&d->r->closed) && next == nvt_ring_published(d->r)) {
			break;
		} else {
			usleep(50);
		}
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void test_rate_accuracy_and_pacing(void **state)
{
	const uint64_t rate = 400000000ull; /* 400 MB/s */
	struct nvt_ring r;
	struct nvt_err err = {0};
	struct nvt_source s;
	struct nvt_source_params p = {.rate_bps = rate, .duration_ns = 1200000000ull};
	struct drain d = {.r = &r};
	pthread_t t;
	double ratio[9];
	(void)state;

	assert_int_equal(nvt_ring_create(&r, 16, 1u << 20, &err), 0);
	nvt_checker_init(&d.chk, 0);
	pthread_create(&t, NULL, drain_thread, &d);
	assert_int_equal(nvt_source_start(&s, &nvt_source_tpg, &p, &r, &err), 0);
	while (!atomic_load(&s.t0_mono))
		usleep(100);
	/* sample the emitted count against the clock between 0.2 s and 1.0 s */
	for (int i = 0; i < 9; i++) {
		uint64_t t0 = atomic_load(&s.t0_mono);
		nvt_sleep_until(t0 + 200000000ull + (uint64_t)i * 100000000ull);
		uint64_t now = nvt_mono_ns(), beats = atomic_load(&s.emitted);
		ratio[i] = (double)beats * 16 / ((now - t0) / 1e9) / (double)rate;
	}
	nvt_source_join(&s);
	pthread_join(t, NULL);
	qsort(ratio, 9, sizeof(ratio[0]), cmp_double);
	print_message("rate ratio median %.5f (min %.5f max %.5f)\n", ratio[4], ratio[0], ratio[8]);
	assert_true(ratio[4] > 0.995 && ratio[4] < 1.005);
	/* exact total: rate x duration, plus at most one 4 KiB completion block */
	uint64_t want = rate * 12 / 10 / 16;
	assert_true(s.emitted >= want && s.emitted < want + 256);
	assert_int_equal(s.drops, 0);
	assert_int_equal(d.chk.beats, s.published_bytes / 16);
	assert_int_equal(d.chk.gaps + d.chk.corrupt + d.chk.backward, 0);
	/* pacing: ~20-50 us steps, rarely more than 100 us of data at once */
	print_message("steps %llu, over 100 us: %llu, largest %llu bytes\n",
		      (unsigned long long)s.steps, (unsigned long long)s.steps_long,
		      (unsigned long long)s.max_step_bytes);
	/* a chunk-burst generator would make ~500 steps here, all of them long; on a shared
	 * 2-vCPU machine preemption stretches a few percent of the steps (6 % seen under CI load)
	 */
	assert_true(s.steps >= 8000);
	assert_true(s.steps_long * 100 <= s.steps * 15);
	nvt_source_free(&s);
	nvt_ring_destroy(&r);
}

static void test_drop_accounting(void **state)
{
	const uint64_t chunk = 64 << 10;
	struct nvt_ring r;
	struct nvt_err err = {0};
	struct nvt_source s;
	struct nvt_source_params p = {.rate_bps = 200000000ull, .duration_ns = 300000000ull};
	struct nvt_drop_event *ev;
	uint64_t nev, sum = 0, released = 0;
	struct nvt_checker chk;
	(void)state;

	assert_int_equal(nvt_ring_create(&r, 4, chunk, &err), 0);
	nvt_checker_init(&chk, 0);
	assert_int_equal(nvt_source_start(&s, &nvt_source_tpg, &p, &r, &err), 0);
	/* a storage that stalls: release two chunks at 100 ms, then everything at the end */
	usleep(100000);
	for (; released < 2; released++) {
		nvt_checker_feed(&chk, nvt_ring_chunk(&r, released), chunk, released * chunk);
		nvt_ring_release(&r);
	}
	nvt_source_join(&s);
	for (; released < nvt_ring_published(&r); released++) {
		uint32_t len = r.fill[released % 4];
		nvt_checker_feed(&chk, nvt_ring_chunk(&r, released), len, released * chunk);
	}
	ev = nvt_source_drop_events(&s, &nev);
	for (uint64_t i = 0; i < nev; i++) {
		sum += ev[i].beats;
		assert_int_equal(ev[i].data_offset % chunk, 0);
	}
	print_message("published %llu bytes, drops %llu in %llu events\n",
		      (unsigned long long)s.published_bytes, (unsigned long long)s.drops,
		      (unsigned long long)nev);
	assert_true(s.drops > 0);
	assert_int_equal(sum, s.drops);
	assert_int_equal(s.published_bytes / 16 + s.drops, s.emitted);
	assert_int_equal(nev, 2);
	assert_int_equal(ev[0].data_offset, 4 * chunk);
	assert_int_equal(ev[1].data_offset, s.published_bytes); /* after the last beat */
	/* the gap in the data is exactly the first event */
	assert_int_equal(chk.gaps, 1);
	assert_int_equal(chk.gap_beats, ev[0].beats);
	assert_int_equal(chk.corrupt, 0);
	free(ev);
	nvt_source_free(&s);
	nvt_ring_destroy(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_accuracy_and_pacing),
		cmocka_unit_test(test_drop_accounting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
