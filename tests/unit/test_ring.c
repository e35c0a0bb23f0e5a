/* SPDX-License-Identifier: MIT */
/* Unit tests: the ring's single-producer / single-consumer protocol keeps chunk order, blocks
 * the producer when full, and tracks fill and high-water. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ring/ring.h"

#define CHUNKS 4
#define TOTAL  20000

static void test_full_and_release(void **state)
{
	struct nvt_ring r;
	struct nvt_err err = {0};
	(void)state;
	assert_int_equal(nvt_ring_create(&r, CHUNKS, 4096, 0, &err), 0);
	for (int i = 0; i < CHUNKS; i++) {
		assert_true(nvt_ring_can_produce(&r));
		nvt_ring_publish(&r, 4096);
	}
	assert_false(nvt_ring_can_produce(&r));
	assert_int_equal(nvt_ring_fill(&r), CHUNKS);
	assert_int_equal(atomic_load(&r.hwm), CHUNKS);
	assert_int_equal(nvt_ring_wait_free(&r, 10), -ETIME);
	nvt_ring_release(&r);
	assert_true(nvt_ring_can_produce(&r));
	assert_int_equal(nvt_ring_wait_free(&r, 10), 0);
	nvt_ring_abort(&r);
	assert_int_equal(nvt_ring_wait_free(&r, 10), -ECANCELED);
	nvt_ring_destroy(&r);
}

static void test_bad_geometry(void **state)
{
	struct nvt_ring r;
	struct nvt_err err = {0};
	(void)state;
	assert_int_equal(nvt_ring_create(&r, 1, 4096, 0, &err), -EINVAL);
	nvt_err_clear(&err);
	assert_int_equal(nvt_ring_create(&r, 4, 1000, 0, &err), -EINVAL);
}

static void *producer(void *arg)
{
	struct nvt_ring *r = arg;
	for (uint64_t i = 0; i < TOTAL; i++) {
		while (nvt_ring_wait_free(r, 1000) != 0)
			;
		uint64_t *p = (uint64_t *)nvt_ring_chunk(r, i);
		p[0] = i;
		nvt_ring_publish(r, (uint32_t)(8 + i % 100));
	}
	nvt_ring_close(r);
	return NULL;
}

static void test_order_across_threads(void **state)
{
	struct nvt_ring r;
	struct nvt_err err = {0};
	pthread_t t;
	uint64_t next = 0;
	(void)state;
	assert_int_equal(nvt_ring_create(&r, CHUNKS, 4096, 0, &err), 0);
	pthread_create(&t, NULL, producer, &r);
	while (next < TOTAL) {
		if (nvt_ring_published(&r) == next)
			continue;
		const uint64_t *p = (const uint64_t *)nvt_ring_chunk(&r, next);
		assert_int_equal(p[0], next);
		assert_int_equal(r.fill[next % CHUNKS], 8 + next % 100);
		assert_true(nvt_ring_fill(&r) <= CHUNKS);
		next++;
		nvt_ring_release(&r);
	}
	pthread_join(t, NULL);
	assert_true(atomic_load(&r.closed));
	assert_true(atomic_load(&r.hwm) >= 1 && atomic_load(&r.hwm) <= CHUNKS);
	nvt_ring_destroy(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_and_release),
		cmocka_unit_test(test_bad_geometry),
		cmocka_unit_test(test_order_across_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
