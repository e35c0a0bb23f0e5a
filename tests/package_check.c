/* SPDX-License-Identifier: MIT */
/* A program built the way a user of libnvtape-dev builds one (cc prog.c $(pkg-config --cflags
 * --libs nvtape)): it checks the installed library's version against the installed header and
 * the packaged version, and a few answers of nvt_parse_size() and the error carrier. Written
 * in the common subset of C and C++, so tests/package.sh also builds it with c++. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nvtape/nvtape.h>
#include <nvtape/units.h>

#ifndef EXPECTED_VERSION
#error "build with -DEXPECTED_VERSION=\"X.Y.Z\" (the packaged version)"
#endif

static int failures;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "package_check: %s\n", what);
		failures++;
	}
}

static void size_is(const char *s, int want_rc, uint64_t want)
{
	uint64_t v = 0;
	int rc = nvt_parse_size(s, &v);
	char what[128];

	snprintf(what, sizeof(what), "nvt_parse_size(\"%s\") = %d, %llu", s, rc,
		 (unsigned long long)v);
	check(rc == want_rc && (rc != 0 || v == want), what);
}

int main(void)
{
	struct nvt_err err;

	check(strcmp(nvt_version(), EXPECTED_VERSION) == 0, "nvt_version() is not the package's");
	check(strcmp(nvt_version(), NVT_VERSION) == 0, "nvt_version() differs from NVT_VERSION");
	size_is("8M", 0, 8ull << 20);
	size_is("1500MB", 0, 1500000000ull);
	size_is("1.5G", 0, 3ull << 29);
	size_is("4096", 0, 4096);
	size_is("bogus", -EINVAL, 0);
	size_is("99999999999T", -ERANGE, 0);
	memset(&err, 0, sizeof(err));
	nvt_err_param(&err, "chunk %d is not a multiple of 4096", 1000);
	check(err.code == EINVAL && (err.flags & NVT_ERR_PARAM) && strstr(err.msg, "1000"),
	      "nvt_err_param() did not leave EINVAL, NVT_ERR_PARAM and the message");
	nvt_err_clear(&err);
	check(err.code == 0, "nvt_err_clear() left a code");
	if (failures)
		return 1;
	printf("package_check: libnvtape %s good\n", nvt_version());
	return 0;
}
