/* SPDX-License-Identifier: MIT */
/* Counter checks (nvtape/counter.h): the counter of each record read wherever it falls (a
 * counter may straddle two buffers), compared with the one expected. A jump forward by less
 * than half the counter's range, in whole steps, is a gap of that many records; anything else
 * (back, or out of step) is a backward jump; a value at or above wrap is bad. */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/counter.h"

static const struct {
	const char *name;
	unsigned width;
	bool be;
} types[] = {
	{"u8", 1, false},   {"u16le", 2, false}, {"u16be", 2, true}, {"u32le", 4, false},
	{"u32be", 4, true}, {"u64le", 8, false}, {"u64be", 8, true},
};

/* a decimal or 0x hex number up to max, advancing *p */
static bool number(const char **p, uint64_t max, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	unsigned long long n = strtoull(*p, &end, 0);
	if (errno || n > max)
		return false;
	*p = end;
	*v = n;
	return true;
}

int nvt_counter_parse(const char *text, struct nvt_counter_spec *s, struct nvt_err *err)
{
	const char *p;
	uint64_t v;
	size_t i, n;

	memset(s, 0, sizeof(*s));
	if (strncmp(text, "counter:", 8)) {
		nvt_err_param(err,
			      "unknown check \"%s\": the one check is "
			      "counter:TYPE[@OFFSET][/STRIDE][+INC][%%WRAP]",
			      text);
		return -EINVAL;
	}
	p = text + 8;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		n = strlen(types[i].name);
		if (!strncmp(p, types[i].name, n) && !(p[n] >= 'a' && p[n] <= 'z') &&
		    !(p[n] >= '0' && p[n] <= '9'))
			break;
	}
	if (i == sizeof(types) / sizeof(types[0])) {
		nvt_err_param(err,
			      "check \"%s\": the counter's type is u8, u16le, u16be, u32le, u32be, "
			      "u64le or u64be",
			      text);
		return -EINVAL;
	}
	s->width = types[i].width;
	s->big_endian = types[i].be;
	s->stride = s->width;
	s->inc = 1;
	s->wrap = s->width == 8 ? 0 : 1ull << (8 * s->width);
	p += strlen(types[i].name);
	if (*p == '@') {
		p++;
		if (!number(&p, 1u << 30, &v))
			goto bad;
		s->offset = (uint32_t)v;
		s->stride = s->offset + s->width;
	}
	if (*p == '/') {
		p++;
		if (!number(&p, 1u << 30, &v) || v == 0)
			goto bad;
		s->stride = (uint32_t)v;
	}
	if (*p == '+') {
		p++;
		if (!number(&p, UINT64_MAX, &v) || v == 0)
			goto bad;
		s->inc = v;
	}
	if (*p == '%') {
		uint64_t max = s->width == 8 ? UINT64_MAX : 1ull << (8 * s->width);
		p++;
		if (!number(&p, max, &v) || v < 2)
			goto bad;
		s->wrap = v;
	}
	if (*p)
		goto bad;
	if ((uint64_t)s->offset + s->width > s->stride) {
		nvt_err_param(err,
			      "check \"%s\": the counter (%u bytes at offset %u) does not fit its "
			      "%u-byte record",
			      text, s->width, s->offset, s->stride);
		return -EINVAL;
	}
	if (s->wrap && s->inc >= s->wrap) {
		nvt_err_param(err, "check \"%s\": the step must be less than the wrap value", text);
		return -EINVAL;
	}
	return 0;
bad:
	nvt_err_param(err,
		      "check \"%s\" is not counter:TYPE[@OFFSET][/STRIDE][+INC][%%WRAP] (OFFSET "
		      "and STRIDE up to 1 GiB, STRIDE and INC at least 1, WRAP at least 2 and "
		      "within the type; e.g. counter:u32le@0/4096)",
		      text);
	return -EINVAL;
}

void nvt_counter_format(const struct nvt_counter_spec *s, char *buf, size_t cap)
{
	size_t i = 0;
	int n;

	while (i + 1 < sizeof(types) / sizeof(types[0]) &&
	       !(types[i].width == s->width && types[i].be == s->big_endian))
		i++;
	n = snprintf(buf, cap, "counter:%s@%" PRIu32 "/%" PRIu32, types[i].name, s->offset,
		     s->stride);
	if (n > 0 && (size_t)n < cap && s->inc != 1)
		n += snprintf(buf + n, cap - (size_t)n, "+%" PRIu64, s->inc);
	if (n > 0 && (size_t)n < cap && s->wrap &&
	    (s->width == 8 || s->wrap != 1ull << (8 * s->width)))
		snprintf(buf + n, cap - (size_t)n, "%%%" PRIu64, s->wrap);
}

void nvt_counter_check_init(struct nvt_counter_check *c, const struct nvt_counter_spec *s)
{
	struct nvt_checker k = c->counts;

	memset(c, 0, sizeof(*c));
	c->spec = *s;
	c->counts.on_event = k.on_event;
	c->counts.arg = k.arg;
}

static uint64_t decode(const struct nvt_counter_spec *s, const uint8_t *p)
{
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (s->width) {
	case 1:
		return p[0];
	case 2:
		memcpy(&v16, p, 2);
		return s->big_endian ? be16toh(v16) : le16toh(v16);
	case 4:
		memcpy(&v32, p, 4);
		return s->big_endian ? be32toh(v32) : le32toh(v32);
	default:
		memcpy(&v64, p, 8);
		return s->big_endian ? be64toh(v64) : le64toh(v64);
	}
}

/* the value after v: v + inc, modulo wrap (both below it) */
static inline uint64_t after(const struct nvt_counter_spec *s, uint64_t v)
{
	return s->wrap && v >= s->wrap - s->inc ? v - (s->wrap - s->inc) : v + s->inc;
}

/* (a - b) mod the counter's range, both in range */
static uint64_t ahead(const struct nvt_counter_spec *s, uint64_t a, uint64_t b)
{
	if (!s->wrap || a >= b)
		return a - b;
	return s->wrap - b + a;
}

static void report(struct nvt_counter_check *c, enum nvt_check_kind kind, uint64_t offset,
		   uint64_t v, uint64_t missing)
{
	struct nvt_check_event ev = {.kind = kind,
				     .beat = c->counts.beats,
				     .offset = offset,
				     .expected = c->counts.expected,
				     .lo = v,
				     .missing = missing};
	if (c->counts.on_event)
		c->counts.on_event(c->counts.arg, &ev);
}

static void check(struct nvt_counter_check *c, uint64_t v, uint64_t offset)
{
	const struct nvt_counter_spec *s = &c->spec;
	struct nvt_checker *k = &c->counts;
	uint64_t half = s->wrap ? s->wrap / 2 : 1ull << 63;

	if (s->wrap && v >= s->wrap) {
		k->corrupt++;
		report(c, NVT_CHK_CORRUPT, offset, v, 0);
		k->expected = k->seen_good ? after(s, k->expected) : k->expected;
		k->beats++;
		return;
	}
	if (k->seen_good && v != k->expected) {
		uint64_t d = ahead(s, v, k->expected);
		if (d < half && d % s->inc == 0) {
			k->gaps++;
			k->gap_beats += d / s->inc;
			report(c, NVT_CHK_GAP, offset, v, d / s->inc);
		} else {
			k->backward++;
			report(c, NVT_CHK_BACKWARD, offset, v, 0);
		}
	}
	if (!k->seen_good) {
		k->seen_good = true;
		k->first_seen = v;
	}
	k->last_seen = v;
	k->expected = after(s, v);
	k->beats++;
}

void nvt_counter_check_feed(struct nvt_counter_check *c, const void *buf, uint64_t bytes,
			    uint64_t offset)
{
	const uint8_t *p = buf;
	const struct nvt_counter_spec *s = &c->spec;
	struct nvt_checker *k = &c->counts;
	uint64_t end = c->pos + bytes, base = offset - c->pos;

	for (;;) {
		uint64_t at = c->next * s->stride + s->offset;
		if (at + c->have >= end)
			break;
		if (!c->have && at + s->width <= end) {
			/* the counter whole in this buffer: the common case, in step, kept short */
			uint64_t v = decode(s, p + (at - c->pos));
			if (v == k->expected && k->seen_good) {
				k->last_seen = v;
				k->expected = after(s, v);
				k->beats++;
			} else {
				check(c, v, base + c->next * s->stride);
			}
			c->next++;
			continue;
		}
		while (c->have < s->width && at + c->have < end) {
			c->part[c->have] = p[at + c->have - c->pos];
			c->have++;
		}
		if (c->have < s->width)
			break;
		c->have = 0;
		check(c, decode(s, c->part), base + c->next * s->stride);
		c->next++;
	}
	c->pos = end;
}
