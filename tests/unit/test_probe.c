/* SPDX-License-Identifier: MIT */
/* Unit tests: the signature probe recognizes what a drive carries, at both ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sys/probe.h"

#define SIZE (64ull << 20)

static uint8_t head[NVT_PROBE_HEAD], tail[NVT_PROBE_TAIL];

static const char *probe(void)
{
	static char what[128];
	return nvt_probe_buffers(head, sizeof(head), tail, sizeof(tail), SIZE, what, sizeof(what))
		       ? what
		       : NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void test_signatures(void **state)
{
	(void)state;
	memset(head, 0, sizeof(head));
	memset(tail, 0, sizeof(tail));
	assert_null(probe());
	memcpy(head, "XFSB", 4);
	assert_string_equal(probe(), "an XFS filesystem");
	memset(head, 0, 4);
	head[1080] = 0x53, head[1081] = 0xef;
	assert_string_equal(probe(), "an ext2/3/4 filesystem");
	head[1080] = head[1081] = 0;
	memcpy(head + 3, "EXFAT   ", 8);
	assert_string_equal(probe(), "an exFAT filesystem");
	memset(head + 3, 0, 8);
	memcpy(head, "NVTAPE\0\0", 8);
	assert_string_equal(probe(), "an nvtape recording");
	memset(head, 0, 8);
	put32(head + 4096, 0xa92b4efc);
	assert_string_equal(probe(), "an md RAID superblock (metadata 1.2)");
	put32(head + 4096, 0);
	assert_null(probe());
}

static void test_md_at_the_end(void **state)
{
	uint64_t base = SIZE - NVT_PROBE_TAIL;
	uint64_t off10 = (((SIZE >> 9) - 16) & ~7ull) << 9;
	uint64_t off090 = ((SIZE >> 16) << 16) - 65536;
	(void)state;
	memset(head, 0, sizeof(head));
	memset(tail, 0, sizeof(tail));
	put32(tail + (off10 - base), 0xa92b4efc);
	assert_string_equal(probe(), "an md RAID superblock (metadata 1.0)");
	memset(tail, 0, sizeof(tail));
	put32(tail + (off090 - base), 0xa92b4efc);
	assert_string_equal(probe(), "an md RAID superblock (metadata 0.90)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_md_at_the_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
