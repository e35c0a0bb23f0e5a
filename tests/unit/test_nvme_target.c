/* SPDX-License-Identifier: MIT */
/* Unit tests: the nvme engine's address map (file extents -> volume -> md RAID0 members ->
 * namespace bytes), against hand-computed positions; the sysfs reader that finds the
 * namespaces and controllers under a volume, on a sysfs tree built in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/nvme/file_map.h"
#include "sys/sysfs.h"

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

static char root[PATH_MAX];

static void mkdirs(const char *rel)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

#define PCI "devices/pci0000:00/0000:00:04.0/nvme"

/* Two drives: namespace nvme0n1 whose path is controller nvme3 (multipath: the name's number is
 * the subsystem's), partitioned; nvme1n1 with no device link. md0 over nvme0n1p2 and nvme1n1,
 * dm-0 over md0. */
static int tree_setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s", "nvt-sysfs.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	mkdirs(PCI "/nvme3/nvme0n1/nvme0n1p2");
	mkdirs(PCI "/nvme1/nvme1n1");
	mkdirs("devices/virtual/block/md0/slaves");
	mkdirs("devices/virtual/block/md0/md");
	mkdirs("devices/virtual/block/dm-0/slaves");
	mkdirs("class/block");
	mkdirs("dev/block");
	put(PCI "/nvme3/nvme0n1/nvme0n1p2/partition", "2\n");
	put(PCI "/nvme3/nvme0n1/nvme0n1p2/start", "2048\n");
	put(PCI "/nvme3/nvme0n1/ro", "0\n");
	ln("../../nvme3", PCI "/nvme3/nvme0n1/device");
	put("devices/virtual/block/md0/md/level", "raid0\n");
	put("devices/virtual/block/md0/md/chunk_size", "524288 \n");
	put("devices/virtual/block/md0/md/raid_disks", "two\n");
	ln("dev-nvme1n1", "devices/virtual/block/md0/md/rd1");
	ln("../../../../pci0000:00/x", "devices/virtual/block/md0/slaves/nvme0n1p2");
	ln("../../../../pci0000:00/y", "devices/virtual/block/md0/slaves/nvme1n1");
	ln("../../../../virtual/block/md0", "devices/virtual/block/dm-0/slaves/md0");
	ln("../../" PCI "/nvme3/nvme0n1", "class/block/nvme0n1");
	ln("../../" PCI "/nvme3/nvme0n1/nvme0n1p2", "class/block/nvme0n1p2");
	ln("../../" PCI "/nvme1/nvme1n1", "class/block/nvme1n1");
	ln("../../devices/virtual/block/md0", "class/block/md0");
	ln("../../devices/virtual/block/dm-0", "class/block/dm-0");
	ln("../../" PCI "/nvme3/nvme0n1/nvme0n1p2", "dev/block/259:2");
	mkdirs("block");
	ln("../devices/virtual/block/md0", "block/md0");
	nvt_sysfs_set_root(root);
	return 0;
}

static int tree_teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	(void)state;
	nvt_sysfs_set_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_sysfs_attrs(void **state)
{
	char buf[64];
	uint64_t v = 0;
	(void)state;
	assert_int_equal(nvt_sysfs_blk_u64("nvme0n1p2", "start", &v), 0);
	assert_int_equal(v, 2048);
	assert_int_equal(nvt_sysfs_blk_u64("nvme0n1", "ro", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(nvt_sysfs_str(buf, sizeof(buf), "block/%s/md/level", "md0"), 0);
	assert_string_equal(buf, "raid0");
	assert_int_equal(nvt_sysfs_u64(&v, "block/md0/md/chunk_size"), 0);
	assert_int_equal(v, 524288);
	assert_int_equal(nvt_sysfs_u64(&v, "block/md0/md/raid_disks"), -EINVAL);
	assert_int_equal(nvt_sysfs_u64(&v, "block/md0/md/nothing"), -ENOENT);
	assert_int_equal(nvt_sysfs_link_name(buf, sizeof(buf), "block/md0/md/rd%u", 1u), 0);
	assert_string_equal(buf, "dev-nvme1n1");
	assert_int_equal(nvt_sysfs_blk_name(259, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "nvme0n1p2");
	assert_int_not_equal(nvt_sysfs_blk_name(259, 9, buf, sizeof(buf)), 0);
}

static void count_entry(const char *name, void *arg)
{
	(void)name;
	(*(int *)arg)++;
}

static void test_sysfs_walk(void **state)
{
	char ctrl[4][NVT_SYSFS_NAME], buf[64];
	int seen = 0;
	(void)state;
	assert_true(nvt_sysfs_blk_disk("nvme0n1p2", buf, sizeof(buf)));
	assert_string_equal(buf, "nvme0n1");
	assert_false(nvt_sysfs_blk_disk("nvme0n1", buf, sizeof(buf)));
	assert_int_equal(nvt_sysfs_blk_each("md0", "slaves", count_entry, &seen), 2);
	assert_int_equal(seen, 2);
	assert_true(nvt_sysfs_blk_each("nvme1n1", "slaves", count_entry, &seen) < 0);
	/* a partition: its disk's controller, through the device link */
	assert_int_equal(nvt_sysfs_nvme_ctrls("nvme0n1p2", ctrl, 4), 1);
	assert_string_equal(ctrl[0], "nvme3");
	/* dm over md over both: both controllers, the second from its name */
	assert_int_equal(nvt_sysfs_nvme_ctrls("dm-0", ctrl, 4), 2);
	assert_true((!strcmp(ctrl[0], "nvme3") && !strcmp(ctrl[1], "nvme1")) ||
		    (!strcmp(ctrl[0], "nvme1") && !strcmp(ctrl[1], "nvme3")));
	assert_int_equal(nvt_sysfs_nvme_ctrls("dm-0", ctrl, 1), 1);
	assert_int_equal(nvt_sysfs_nvme_ctrls("loop0", ctrl, 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_stripe), cmocka_unit_test(test_file_on_md),
		cmocka_unit_test(test_hole),
		cmocka_unit_test_setup_teardown(test_sysfs_attrs, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_sysfs_walk, tree_setup, tree_teardown)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
