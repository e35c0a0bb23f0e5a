/* SPDX-License-Identifier: MIT */
/* Chunk checksums: the recorder computes the CRC32C of every chunk it queues for writing (the
 * bytes the drive is handed), keeps them as spans from data offset 0, and writes them in the
 * index with every checkpoint and at the end. A days-long recording must not grow this list
 * without bound: when it is full, neighbouring spans merge (their CRCs combine without reading
 * the data again) and later spans cover as many chunks as the merged ones. verify, play and
 * recover check the data against them as it streams past. */
#include <stdlib.h>
#include <string.h>

#include "format/sums.h"
#include "util/crc32c.h"

void nvt_sums_init(struct nvt_sums *s, uint64_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max < 2 ? 2 : max;
	s->granule = 1;
}

void nvt_sums_free(struct nvt_sums *s)
{
	free(s->e);
	free(s->t);
	s->e = NULL;
	s->t = NULL;
	s->n = s->cap = 0;
}

static void merge_pairs(struct nvt_sums *s)
{
	uint64_t k = 0;

	for (uint64_t i = 0; i + 1 < s->n; i += 2) {
		struct nvt_chunk_crc a = s->e[i], b = s->e[i + 1];
		a.crc32c = nvt_crc32c_combine(a.crc32c, b.crc32c, b.length);
		a.length += b.length;
		a.chunks += b.chunks;
		s->t[k] = s->t[i]; /* a merged span starts when its first chunk did */
		s->e[k++] = a;
	}
	if (s->n % 2) {
		s->t[k] = s->t[s->n - 1];
		s->e[k++] = s->e[s->n - 1];
	}
	s->n = k;
	s->granule *= 2;
}

/* Room for entry n: 0, or -1 out of memory (the list stops growing). */
static int grow(struct nvt_sums *s, uint64_t max)
{
	uint64_t cap = s->cap ? s->cap * 2 : 1024;
	struct nvt_chunk_crc *g;
	struct nvt_chunk_time *t;

	if (s->n < s->cap)
		return 0;
	if (cap > max)
		cap = max;
	g = realloc(s->e, cap * sizeof(*g));
	if (g)
		s->e = g;
	t = g ? realloc(s->t, cap * sizeof(*t)) : NULL;
	if (!t)
		return -1;
	s->t = t;
	s->cap = cap;
	return 0;
}

void nvt_sums_add(struct nvt_sums *s, uint64_t len, uint32_t crc, uint64_t time_ns)
{
	struct nvt_chunk_crc *last = s->n ? &s->e[s->n - 1] : NULL;

	if (s->oom || !len)
		return;
	if (last && last->chunks < s->granule) {
		last->crc32c = nvt_crc32c_combine(last->crc32c, crc, len);
		last->length += len;
		last->chunks++;
		s->end += len;
		return;
	}
	if (s->n == s->max)
		merge_pairs(s);
	if (grow(s, s->max)) {
		s->oom = true;
		return;
	}
	s->t[s->n] = (struct nvt_chunk_time){.data_offset = s->end, .time_ns = time_ns};
	s->e[s->n++] = (struct nvt_chunk_crc){
		.data_offset = s->end, .length = len, .crc32c = crc, .chunks = 1};
	s->end += len;
}

bool nvt_sums_stage(struct nvt_sums *s, uint64_t len, uint32_t crc, uint64_t time_ns)
{
	if (s->oom || !len || grow(s, s->max + 1))
		return false;
	s->t[s->n] = (struct nvt_chunk_time){.data_offset = s->end, .time_ns = time_ns};
	s->e[s->n] = (struct nvt_chunk_crc){
		.data_offset = s->end, .length = len, .crc32c = crc, .chunks = 1};
	return true;
}

void nvt_sums_check_init(struct nvt_sums_check *c, const struct nvt_chunk_crc *e, uint64_t n,
			 uint64_t limit)
{
	memset(c, 0, sizeof(*c));
	c->e = e;
	c->n = n;
	c->limit = limit;
	/* the spans follow each other from 0 and stay inside 64 bits */
	for (uint64_t i = 0, at = 0; i < n; i++) {
		if (e[i].data_offset != at || e[i].length == 0 ||
		    e[i].length > UINT64_MAX - e[i].data_offset) {
			c->broken = true;
			c->n = i;
			break;
		}
		at = e[i].data_offset + e[i].length;
	}
}

/* the span's end, or past the limit: not checked */
static bool span_checked(const struct nvt_sums_check *c, uint64_t i)
{
	return c->e[i].data_offset + c->e[i].length <= c->limit;
}

void nvt_sums_check_feed(struct nvt_sums_check *c, const void *buf, uint64_t len, uint64_t off)
{
	const uint8_t *p = buf;

	if (off != c->pos) { /* data skipped: the span it lies in is not checked */
		if (c->i < c->n && c->pos > c->e[c->i].data_offset && span_checked(c, c->i)) {
			c->skipped++; /* left in its middle */
			c->i++;
		}
		while (c->i < c->n && c->e[c->i].data_offset + c->e[c->i].length <= off) {
			c->skipped += span_checked(c, c->i);
			c->i++;
		}
		c->pos = off;
		c->crc = 0;
		if (c->i < c->n && c->e[c->i].data_offset < off) {
			c->skipped += span_checked(c, c->i);
			c->i++; /* entered in its middle */
		}
		if (c->i < c->n && c->e[c->i].data_offset > off) {
			uint64_t skip = c->e[c->i].data_offset - off;
			if (skip >= len)
				return;
			p += skip;
			len -= skip;
			c->pos += skip;
		}
	}
	while (len && c->i < c->n && span_checked(c, c->i)) {
		const struct nvt_chunk_crc *s = &c->e[c->i];
		uint64_t left = s->data_offset + s->length - c->pos, k = len < left ? len : left;
		c->crc = nvt_crc32c(c->crc, p, k);
		p += k;
		len -= k;
		c->pos += k;
		if (k == left) {
			if (c->crc == s->crc32c) {
				c->good++;
			} else {
				c->bad++;
				c->bad_bytes += s->length;
				if (c->on_bad)
					c->on_bad(c->arg, s, c->crc);
			}
			c->checked_bytes += s->length;
			c->crc = 0;
			c->i++;
		}
	}
	c->pos += len;
}

bool nvt_sums_check_complete(const struct nvt_sums_check *c)
{
	return !c->skipped && (c->i >= c->n || !span_checked(c, c->i));
}
