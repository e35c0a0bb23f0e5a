/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the size, rate, duration and integer parsers over arbitrary strings. Besides
 * memory safety: a parsed value printed as a plain number parses back to itself; "/s" on a size
 * changes nothing; a whole number n with a unit gives exactly n times the unit (K = 1024,
 * KB = 1000, Kbps = 1000 / 8 rounded, ms = 10^6 ns); an integer parsed against bounds lies
 * within them. The input's first 16 bytes give the bounds, the rest is the string. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "fuzz.h"
#include "nvtape/units.h"

#define MAX_STR 96

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* s with suffix appended (bounded) */
static const char *with(const char *s, const char *suffix)
{
	static char buf[MAX_STR + 16];
	snprintf(buf, sizeof(buf), "%s%s", s, suffix);
	return buf;
}

static void check_rc(int rc, const char *what, const char *s)
{
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE ||
			   (rc == -EDOM && !strcmp(what, "rate")),
		   "%s \"%s\": rc %d", what, s, rc);
}

static void check_size(const char *s)
{
	uint64_t v = 0, w = 0;
	char num[32];
	int rc = nvt_parse_size(s, &v);

	check_rc(rc, "size", s);
	if (rc)
		return;
	snprintf(num, sizeof(num), "%" PRIu64, v);
	FUZZ_CHECK(nvt_parse_size(num, &w) == 0 && w == v,
		   "size \"%s\" = %" PRIu64 ", printed and parsed: %" PRIu64, s, v, w);
	if (strlen(s) < MAX_STR && (strlen(s) < 2 || strcmp(s + strlen(s) - 2, "/s"))) {
		FUZZ_CHECK(nvt_parse_size(with(s, "/s"), &w) == 0 && w == v,
			   "size \"%s\" and \"%s/s\" differ", s, s);
	}
}

static void check_rate(const char *s)
{
	uint64_t v = 0, w = 0;
	char num[32];
	int rc = nvt_parse_rate(s, &v);

	check_rc(rc, "rate", s);
	if (rc)
		return;
	snprintf(num, sizeof(num), "%" PRIu64, v);
	FUZZ_CHECK(nvt_parse_rate(num, &w) == 0 && w == v,
		   "rate \"%s\" = %" PRIu64 ", printed and parsed: %" PRIu64, s, v, w);
}

static void check_duration(const char *s)
{
	uint64_t v = 0, w = 0;
	int rc = nvt_parse_duration_ns(s, &v);

	check_rc(rc, "duration", s);
	if (rc)
		return;
	FUZZ_CHECK(v < 18000000000000000000ull, "duration \"%s\" = %" PRIu64 " ns", s, v);
	/* a bare number is seconds */
	if (strlen(s) < MAX_STR &&
	    (isdigit((unsigned char)s[strlen(s) - 1]) || s[strlen(s) - 1] == '.') &&
	    nvt_parse_duration_ns(with(s, "s"), &w) == 0)
		FUZZ_CHECK(w == v, "duration \"%s\" and \"%ss\" differ", s, s);
}

/* n with each unit: exact multiples while they fit a double's mantissa */
static void check_units(uint64_t n)
{
	static const struct {
		const char *unit;
		int rate; /* parsed as a rate */
		uint64_t mul, div;
	} u[] = {
		{"", 0, 1, 1},        {"K", 0, 1024, 1},         {"KiB", 0, 1024, 1},
		{"M", 0, 1 << 20, 1}, {"KB", 0, 1000, 1},        {"MB", 0, 1000000, 1},
		{"kbps", 1, 1000, 8}, {"Mbit/s", 1, 1000000, 8}, {"GBps", 1, 1000000000, 1},
	};
	char s[64];

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		uint64_t v = 0, want = (n * u[i].mul + u[i].div / 2) / u[i].div;
		int rc;
		if (n > UINT64_MAX / u[i].mul / 2)
			continue;
		snprintf(s, sizeof(s), "%" PRIu64 "%s", n, u[i].unit);
		rc = u[i].rate ? nvt_parse_rate(s, &v) : nvt_parse_size(s, &v);
		if (n < (1ull << 53) / u[i].mul) /* n * mul exact in a double */
			FUZZ_CHECK(rc == 0 && v == want,
				   "\"%s\" = %" PRIu64 " (rc %d), want %" PRIu64, s, v, rc, want);
	}
	if (n < (1ull << 33)) { /* n * 10^6 exact in a double */
		uint64_t v = 0;
		snprintf(s, sizeof(s), "%" PRIu64 "ms", n);
		FUZZ_CHECK(nvt_parse_duration_ns(s, &v) == 0 && v == n * 1000000ull,
			   "\"%s\" = %" PRIu64 " ns", s, v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t lo = 0, hi = UINT64_MAX, v = 0;
	char s[MAX_STR + 1];
	int rc;

	if (size >= 16) {
		memcpy(&lo, data, 8);
		memcpy(&hi, data + 8, 8);
		data += 16;
		size -= 16;
	}
	if (size > MAX_STR)
		size = MAX_STR;
	memcpy(s, data, size);
	s[size] = 0;

	check_size(s);
	check_rate(s);
	check_duration(s);
	rc = nvt_parse_uint(s, lo, hi, &v);
	check_rc(rc, "uint", s);
	if (rc == 0)
		FUZZ_CHECK(v >= lo && v <= hi, "\"%s\" = %" PRIu64 " outside %" PRIu64 "..%" PRIu64,
			   s, v, lo, hi);
	if (nvt_parse_uint(s, 0, UINT64_MAX, &v) == 0) {
		char num[32];
		snprintf(num, sizeof(num), "%" PRIu64, v);
		FUZZ_CHECK(strcmp(num, s) == 0 || s[0] == '0', "\"%s\" read as %s", s, num);
		check_units(v);
	}
	return 0;
}
