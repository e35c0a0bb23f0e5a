/* SPDX-License-Identifier: MIT */
/* Unit tests: a recording's output file is opened with O_EXCL and O_NOFOLLOW semantics, so a
 * file or link that appears after the checks is never written over or through. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "nvtape/format.h"
#include "sys/devcheck.h"

static char dir[64], path[128], other[128];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/nvt-devcheck.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/out.nvt", dir);
	snprintf(other, sizeof(other), "%s/victim", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	unlink(other);
	return rmdir(dir);
}

static void put(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static off_t size_of(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

/* A file that holds something when the output is opened (it appeared after the checks): left
 * alone unless forced. */
static void test_existing_file(void **state)
{
	struct nvt_err err = {0};
	bool dev = true;
	int fd;

	(void)state;
	put(path, "precious\n");
	fd = nvt_open_output(path, O_WRONLY, false, NULL, &dev, &err);
	assert_int_equal(fd, -EEXIST);
	assert_int_equal(err.code, EEXIST);
	assert_non_null(strstr(err.msg, "holds a file of 9 bytes"));
	assert_int_equal(err.hint, NVT_HINT_FORCE);
	assert_int_equal(size_of(path), 9);
	nvt_err_clear(&err);
	fd = nvt_open_output(path, O_WRONLY, true, NULL, &dev, &err);
	assert_true(fd >= 0);
	assert_false(dev);
	assert_int_equal(size_of(path), 9); /* opened, not truncated: the caller locks first */
	close(fd);
	unlink(path);
}

static void test_new_and_empty(void **state)
{
	struct nvt_err err = {0};
	int fd;

	(void)state;
	fd = nvt_open_output(path, O_WRONLY, false, NULL, NULL, &err);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(size_of(path), 0);
	fd = nvt_open_output(path, O_WRONLY, false, NULL, NULL, &err); /* empty: taken */
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(err.code, 0);
	unlink(path);
}

/* A recording is named with its size and state; the nvme engine says it reuses blocks. */
static void test_recording_named(void **state)
{
	static uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_recording rec = {0};
	struct nvt_err err = {0};
	FILE *f;

	(void)state;
	rec.format = NVT_FMT_NVTAPE;
	rec.beat_bytes = 16;
	rec.data_offset = NVT_HEADER_SIZE;
	rec.data_bytes = rec.durable_bytes = 1 << 20;
	rec.flags = NVT_FLAG_COMPLETE;
	rec.start_ns = 1796384850ull * 1000000000u;
	memset(blk, 0, sizeof(blk));
	nvt_header_block_encode(&rec, blk);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(blk, 1, sizeof(blk), f), sizeof(blk));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(nvt_open_output(path, O_RDWR, false, "nvme", NULL, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "holds a complete nvtape recording (1048576 data bytes, "
					"started 2026-12-04 11:47:30 UTC)"));
	assert_non_null(strstr(err.msg, "the nvme engine reuses the blocks"));
	unlink(path);
}

/* A link at the output path, planted after the checks, is never followed, even forced. */
static void test_symlink(void **state)
{
	struct nvt_err err = {0};

	(void)state;
	put(other, "secret\n");
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(nvt_open_output(path, O_WRONLY, true, NULL, NULL, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "is a symbolic link to"));
	assert_int_equal(size_of(other), 7);
	nvt_err_clear(&err);
	assert_int_equal(nvt_target_check_output(path, 0, true, NULL, &err), -ELOOP);
	unlink(path);
	assert_int_equal(symlink("/nonexistent/nvt-devcheck", path), 0);
	nvt_err_clear(&err);
	assert_int_equal(nvt_open_output(path, O_WRONLY, false, NULL, NULL, &err), -ELOOP);
	assert_int_equal(access("/nonexistent/nvt-devcheck", F_OK), -1);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_existing_file),
		cmocka_unit_test(test_new_and_empty),
		cmocka_unit_test(test_recording_named),
		cmocka_unit_test(test_symlink),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
