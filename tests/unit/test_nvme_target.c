/* SPDX-License-Identifier: MIT */
/* Unit tests: the nvme engine's address map (file extents -> volume -> md RAID0 members ->
 * namespace bytes), against hand-computed positions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "storage/nvme/file_map.h"

#define K 1024ull
#define M (1024ull * 1024)

static void expect(const struct nvt_nvme_target *t, uint64_t x, unsigned member, uint64_t off,
		   uint64_t run)
{
	uint64_t o = 0, r = 0;
	unsigned m = nvt_nvme_target_map(t, x, &o, &r);
	assert_int_equal(r, run);
	if (run) {
		assert_int_equal(m, member);
		assert_int_equal(o, off);
	}
}

static void test_raw_stripe(void **state)
{
	struct nvt_nvme_target t = {.n = 2, .stripe = 512 * K};
	(void)state;
	t.m[0].base = t.m[1].base = 5 * M; /* md 1.2 data offset */
	expect(&t, 0, 0, 5 * M, 512 * K);
	expect(&t, 4096, 0, 5 * M + 4096, 512 * K - 4096);
	expect(&t, 512 * K, 1, 5 * M, 512 * K);
	expect(&t, 1 * M + 8192, 0, 5 * M + 512 * K + 8192, 512 * K - 8192);
	expect(&t, 3 * M - 4096, 1, 5 * M + 1536 * K - 4096, 4096);
}

static void test_file_on_md(void **state)
{
	/* a file in three extents on md RAID0 over two namespaces (one of them a partition) */
	struct nvt_extent ext[] = {
		{.logical = 0, .physical = 1 * M, .len = 1 * M},
		{.logical = 1 * M, .physical = 8 * M + 256 * K, .len = 512 * K},
		{.logical = 1536 * K, .physical = 64 * M, .len = 4 * M},
	};
	struct nvt_nvme_target t = {.n = 2, .stripe = 512 * K, .file = true};
	(void)state;
	t.ext = ext;
	t.next = 3;
	t.mapped = 5632 * K;
	t.m[0].base = 5 * M;
	t.m[1].base = 5 * M + 1 * M; /* partition start + data offset */
	/* volume byte 1 MiB = stripe 2 -> member 0, second chunk row */
	expect(&t, 0, 0, 5 * M + 512 * K, 512 * K);
	/* volume 1.5 MiB = stripe 3 -> member 1 */
	expect(&t, 512 * K, 1, 6 * M + 512 * K, 512 * K);
	/* second extent: volume 8.25 MiB = stripe 16 (member 0), 256 KiB into it; the extent
	 * ends first (512 KiB), the chunk after 256 KiB */
	expect(&t, 1 * M, 0, 5 * M + 4 * M + 256 * K, 256 * K);
	expect(&t, 1 * M + 256 * K, 1, 6 * M + 4 * M, 256 * K);
	/* third extent, 4 KiB before its end */
	expect(&t, 5632 * K - 4096, 1, 6 * M + 34 * M - 4096, 4096);
	/* past what was mapped: nothing */
	expect(&t, 5632 * K, 0, 0, 0);
}

static void test_hole(void **state)
{
	struct nvt_extent ext[] = {
		{.logical = 0, .physical = 4096, .len = 64 * K},
		{.logical = 128 * K, .physical = 1 * M, .len = 64 * K},
	};
	struct nvt_nvme_target t = {.n = 1, .file = true};
	(void)state;
	t.ext = ext;
	t.next = 2;
	t.mapped = 192 * K;
	expect(&t, 8192, 0, 4096 + 8192, 56 * K);
	expect(&t, 64 * K, 0, 0, 0); /* a hole inside the mapped length */
	expect(&t, 130 * K, 0, 1 * M + 2 * K, 62 * K);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_raw_stripe),
					   cmocka_unit_test(test_file_on_md),
					   cmocka_unit_test(test_hole)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
