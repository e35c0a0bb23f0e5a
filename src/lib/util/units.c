/* SPDX-License-Identifier: MIT */
/* Size, rate and duration parsing: K/M/G/T are powers of 1024, KB/MB/GB/TB powers of 1000;
 * rates also in bits per second (Gbps, Mbit/s: powers of 1000). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvtape/units.h"

struct suffix {
	const char *name;
	double mult;
};

static const struct suffix size_suffixes[] = {
	{"", 1},
	{"b", 1},
	{"k", 1024.0},
	{"ki", 1024.0},
	{"kib", 1024.0},
	{"m", 1048576.0},
	{"mi", 1048576.0},
	{"mib", 1048576.0},
	{"g", 1073741824.0},
	{"gi", 1073741824.0},
	{"gib", 1073741824.0},
	{"t", 1099511627776.0},
	{"ti", 1099511627776.0},
	{"tib", 1099511627776.0},
	{"kb", 1e3},
	{"mb", 1e6},
	{"gb", 1e9},
	{"tb", 1e12},
};

static int parse_number(const char *s, double *val, const char **rest)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -EINVAL; /* no sign, no inf/nan */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -EINVAL; /* no hex: strtod would read 0x10 as 16 */
	errno = 0;
	*val = strtod(s, &end);
	if (end == s || errno || !isfinite(*val) || *val < 0)
		return -EINVAL;
	*rest = end;
	return 0;
}

int nvt_parse_size(const char *s, uint64_t *out)
{
	double v;
	const char *rest;
	char suf[8];
	size_t n;

	if (!s || parse_number(s, &v, &rest))
		return -EINVAL;
	n = strlen(rest);
	if (n >= 2 && strcmp(rest + n - 2, "/s") == 0)
		n -= 2;
	if (n >= sizeof(suf))
		return -EINVAL;
	memcpy(suf, rest, n);
	suf[n] = 0;
	for (size_t i = 0; i < sizeof(size_suffixes) / sizeof(size_suffixes[0]); i++) {
		if (strcasecmp(suf, size_suffixes[i].name) == 0) {
			double r = v * size_suffixes[i].mult;
			if (r >= 18446744073709549568.0)
				return -ERANGE;
			*out = (uint64_t)round(r); /* r + 0.5 is inexact from 2^52 */
			return 0;
		}
	}
	return -EINVAL;
}

/* k, m, g, t (either case) as powers of 1000; the length of the prefix (0 or 1) */
static size_t si_prefix(const char *s, double *mult)
{
	static const char p[] = "kmgt";
	const char *at = *s ? strchr(p, tolower((unsigned char)*s)) : NULL;

	*mult = 1;
	if (!at)
		return 0;
	for (const char *q = p; q <= at; q++)
		*mult *= 1e3;
	return 1;
}

int nvt_parse_rate(const char *s, uint64_t *out)
{
	double v, mult, r;
	const char *rest, *unit;
	char suf[16];
	size_t n;
	bool per_s = false;

	if (!s || parse_number(s, &v, &rest))
		return -EINVAL;
	n = strlen(rest);
	if (n >= 2 && strcmp(rest + n - 2, "/s") == 0) {
		n -= 2;
		per_s = true;
	}
	if (n >= sizeof(suf))
		return -EINVAL;
	memcpy(suf, rest, n);
	suf[n] = 0;
	unit = suf + si_prefix(suf, &mult);
	if ((!per_s && strcmp(unit, "bps") == 0) || strcasecmp(unit, "bit") == 0)
		r = v * mult / 8; /* bits per second, to the nearest byte per second */
	else if (!per_s && strcmp(unit, "Bps") == 0)
		r = v * mult;
	else if (n && suf[n - 1] == 'b')
		return -EDOM; /* 12Gb: bytes or bits? */
	else
		return nvt_parse_size(s, out);
	if (r >= 18446744073709549568.0)
		return -ERANGE;
	*out = (uint64_t)round(r);
	return 0;
}

int nvt_parse_duration_ns(const char *s, uint64_t *out_ns)
{
	double v, mult = 1e9;
	const char *rest;

	if (!s || parse_number(s, &v, &rest))
		return -EINVAL;
	if (*rest == 0 || strcmp(rest, "s") == 0)
		mult = 1e9;
	else if (strcmp(rest, "ms") == 0)
		mult = 1e6;
	else if (strcmp(rest, "us") == 0)
		mult = 1e3;
	else if (strcmp(rest, "m") == 0 || strcmp(rest, "min") == 0)
		mult = 60e9;
	else if (strcmp(rest, "h") == 0)
		mult = 3600e9;
	else
		return -EINVAL;
	if (v * mult >= 1.8e19)
		return -ERANGE;
	*out_ns = (uint64_t)round(v * mult);
	return 0;
}

int nvt_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
