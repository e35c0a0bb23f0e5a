/* SPDX-License-Identifier: MIT */
/* Fuzz harness: export in all five formats. The input is 32 bytes of options (a byte range, or
 * a time range: which ends, relative or not) and then a recording file (its CRCs made right, so
 * that mutations reach the index and its metadata). An export refuses with a message, or:
 * raw and .sigmf-data hold exactly the recording's bytes of the range it reports, inside the
 * data; a .sigmf-meta is strict JSON (UTF-8, no key twice) whose sha512, dataset, header and
 * trailing bytes and captures agree with the export; a pcapng export reads back cleanly with
 * nvtape's own reader and a pcap export walks to its end, both holding exactly the recording's
 * packets of the range, unchanged (times to the nanosecond, lengths, bytes): never a byte more
 * than the recording holds. */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "fuzz.h"
#include "nvtape/export.h"
#include "nvtape/meta.h"
#include "util/sha512.h"

#define CTL       32
#define MAX_INPUT (256u << 10)

/* A packet of the recording (or of an export) */
struct pk {
	uint64_t at; /* the block's data offset */
	uint64_t ts;
	uint32_t caplen, origlen, type;
	const uint8_t *data;
};

struct pks {
	struct pk *v;
	size_t n, cap;
	const struct nvt_pcapng_reader *rd; /* where the blocks are */
};

static int collect(const struct nvt_pcapng_block *b, void *arg)
{
	struct pks *l = arg;

	if (b->type == PCAPNG_EPB || b->type == PCAPNG_SPB) {
		struct pk p = {.at = l->rd->pos,
			       .ts = b->ts_ns,
			       .caplen = b->caplen,
			       .origlen = b->origlen,
			       .type = b->type,
			       .data = b->data};
		fuzz_push(&l->v, &l->n, &l->cap, sizeof(*l->v), &p);
	}
	return 0;
}

static bool same_packet(const struct pk *a, const struct pk *b)
{
	return a->ts == b->ts && a->caplen == b->caplen && a->origlen == b->origlen &&
	       !memcmp(a->data, b->data, a->caplen);
}

struct opts {
	unsigned time;
	uint64_t offset, length, from, to;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The recording's packets an export of the range must hold, in order. */
static void wanted(const struct pks *all, const struct opts *o, const struct nvt_export_result *r,
		   struct pks *want)
{
	uint64_t from = 0, to = UINT64_MAX, t0 = all->n ? all->v[0].ts : 0;

	if (o->time & NVT_EXPORT_FROM)
		from = (o->time & NVT_EXPORT_FROM_REL) ? sat_add(t0, o->from) : o->from;
	if (o->time & NVT_EXPORT_TO)
		to = (o->time & NVT_EXPORT_TO_REL) ? sat_add(t0, o->to) : o->to;
	for (size_t i = 0; i < all->n; i++) {
		const struct pk *p = &all->v[i];
		bool in = o->time ? p->ts >= from && p->ts < to
				  : p->at >= r->offset && p->at - r->offset < r->length;
		if (in)
			fuzz_push(&want->v, &want->n, &want->cap, sizeof(*want->v), p);
	}
}

static void same_packets(const struct pks *got, const struct pks *want, const char *fmt)
{
	FUZZ_CHECK(got->n == want->n, "%s: %zu packets exported, the range holds %zu", fmt, got->n,
		   want->n);
	for (size_t i = 0; i < got->n; i++)
		FUZZ_CHECK(same_packet(&got->v[i], &want->v[i]),
			   "%s: packet %zu differs from the recording's (time %" PRIu64
			   " / %" PRIu64 ", %u / %u bytes)",
			   fmt, i, got->v[i].ts, want->v[i].ts, got->v[i].caplen,
			   want->v[i].caplen);
}

static void check_pcapng(const uint8_t *out, size_t n, const struct pks *want,
			 const struct nvt_export_result *r)
{
	struct nvt_pcapng_reader rd;
	struct pks got = {0};
	struct nvt_err err = {0};
	int rc;

	nvt_pcapng_reader_init(&rd);
	got.rd = &rd;
	rc = nvt_pcapng_feed(&rd, out, n, collect, &got, &err);
	FUZZ_CHECK(rc == 0, "the pcapng export does not read back: %s", err.msg);
	FUZZ_CHECK(nvt_pcapng_reader_clean(&rd), "the pcapng export ends inside a block");
	FUZZ_CHECK(n == 0 || rd.started, "the pcapng export has no section header");
	FUZZ_CHECK(got.n == r->packets, "%zu packets in the pcapng export, it says %" PRIu64, got.n,
		   r->packets);
	same_packets(&got, want, "pcapng");
	nvt_pcapng_reader_free(&rd);
	free(got.v);
}

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void check_pcap(const uint8_t *out, size_t n, const struct pks *want,
		       const struct nvt_export_result *r)
{
	struct pks got = {0};
	size_t at = 24;

	FUZZ_CHECK(n >= 24 && le32(out) == 0xa1b23c4du && le32(out + 4) == (2u | 4u << 16),
		   "the pcap export does not start with a nanosecond pcap header (%zu bytes)", n);
	while (at < n) {
		FUZZ_CHECK(n - at >= 16, "the pcap export ends inside a packet header at %zu", at);
		struct pk p = {.ts = (uint64_t)le32(out + at) * 1000000000u + le32(out + at + 4),
			       .caplen = le32(out + at + 8),
			       .origlen = le32(out + at + 12),
			       .data = out + at + 16};
		FUZZ_CHECK(le32(out + at + 4) < 1000000000u, "a pcap fraction of %u ns",
			   le32(out + at + 4));
		FUZZ_CHECK(p.caplen <= n - at - 16, "the pcap export ends inside a packet at %zu",
			   at);
		fuzz_push(&got.v, &got.n, &got.cap, sizeof(*got.v), &p);
		at += 16 + (size_t)p.caplen;
	}
	FUZZ_CHECK(got.n == r->packets, "%zu packets in the pcap export, it says %" PRIu64, got.n,
		   r->packets);
	same_packets(&got, want, "pcap");
	free(got.v);
}

/* What the harness looks at in a .sigmf-meta */
struct sigmf_seen {
	char sha[130], dataset[300], datatype[40];
	bool has_sha, has_dataset, has_trailing, has_header;
	uint64_t trailing, header;
	uint64_t captures;
	uint64_t last_start, last_gap; /* sample_start, global_index - sample_start */
	bool bad_order;
	char bad[200];
	const struct nvt_export_result *r;
};

static bool u64_of(const char *v, size_t n, uint64_t *out)
{
	char b[32];
	char *end;
	if (!n || n >= sizeof(b) || v[0] == '-')
		return false;
	memcpy(b, v, n);
	b[n] = 0;
	*out = strtoull(b, &end, 10);
	return !*end;
}

static void str_of(const char *v, size_t n, char *buf, size_t cap)
{
	size_t k = n >= 2 ? n - 2 : 0; /* without the quotes */
	if (k >= cap)
		k = cap - 1;
	memcpy(buf, v + 1, k);
	buf[k] = 0;
}

static void on_sigmf(void *arg, const char *path, const char *v, size_t n)
{
	struct sigmf_seen *s = arg;
	unsigned long idx;
	char key[64];
	uint64_t x;

	if (!strcmp(path, "global.core:sha512")) {
		s->has_sha = true;
		str_of(v, n, s->sha, sizeof(s->sha));
	} else if (!strcmp(path, "global.core:dataset")) {
		s->has_dataset = true;
		str_of(v, n, s->dataset, sizeof(s->dataset));
	} else if (!strcmp(path, "global.core:datatype")) {
		str_of(v, n, s->datatype, sizeof(s->datatype));
	} else if (!strcmp(path, "global.core:trailing_bytes")) {
		s->has_trailing = u64_of(v, n, &s->trailing);
		if (!s->has_trailing)
			snprintf(s->bad, sizeof(s->bad), "core:trailing_bytes %.*s", (int)n, v);
	} else if (sscanf(path, "captures[%lu].%63s", &idx, key) == 2) {
		if (!u64_of(v, n, &x)) {
			if (strcmp(key, "core:datetime") && strcmp(key, "core:frequency"))
				snprintf(s->bad, sizeof(s->bad), "captures[%lu].%s %.*s", idx, key,
					 (int)n, v);
			return;
		}
		if (!strcmp(key, "core:header_bytes") && idx == 0) {
			s->has_header = true;
			s->header = x;
		} else if (!strcmp(key, "core:sample_start")) {
			if (idx != s->captures) /* captures[idx] begins */
				snprintf(s->bad, sizeof(s->bad), "capture %lu out of order", idx);
			if (x > s->r->length / s->r->sample_bytes || (idx && x < s->last_start))
				s->bad_order = true;
			s->last_start = x;
			s->captures++;
		} else if (!strcmp(key, "core:global_index")) {
			if (x < s->last_start ||
			    (s->captures > 1 && x - s->last_start < s->last_gap))
				s->bad_order = true;
			s->last_gap = x >= s->last_start ? x - s->last_start : 0;
		}
	} else if (sscanf(path, "annotations[%lu].%63s", &idx, key) == 2 &&
		   !strcmp(key, "core:sample_start")) {
		if (!u64_of(v, n, &x) || x >= s->r->length / s->r->sample_bytes)
			snprintf(s->bad, sizeof(s->bad),
				 "annotation %lu at sample %.*s of %" PRIu64, idx, (int)n, v,
				 s->r->length / s->r->sample_bytes);
	}
}

static void check_sigmf(enum nvt_export_format f, const struct nvt_export_result *r,
			const uint8_t *rec_file, const char *rec_name)
{
	struct sigmf_seen s = {.r = r};
	char why[200];
	size_t n;
	uint8_t *meta = fuzz_read_file(r->meta_path, &n);

	FUZZ_CHECK(meta, "no %s", r->meta_path);
	FUZZ_CHECK(r->sample_bytes > 0 && r->length % r->sample_bytes == 0,
		   "%" PRIu64 " bytes exported in samples of %" PRIu64, r->length, r->sample_bytes);
	FUZZ_CHECK(fuzz_json_check((const char *)meta, n, on_sigmf, &s, why, sizeof(why)) == 0,
		   "the .sigmf-meta is not JSON: %s", why);
	FUZZ_CHECK(!s.bad[0], "the .sigmf-meta says %s", s.bad);
	FUZZ_CHECK(nvt_meta_datatype_ok(s.datatype), "core:datatype \"%s\"", s.datatype);
	FUZZ_CHECK(s.captures == r->captures && s.captures >= 1,
		   "%" PRIu64 " captures in the .sigmf-meta, the export says %" PRIu64, s.captures,
		   r->captures);
	FUZZ_CHECK(!s.bad_order,
		   "the captures' sample_start go back or past the data, or their global_index "
		   "falls behind");
	if (f == NVT_EXPORT_SIGMF) {
		struct nvt_sha512 h;
		char sha[129];
		size_t dn;
		uint8_t *data = fuzz_read_file(r->data_path, &dn);
		FUZZ_CHECK(data, "no %s", r->data_path);
		FUZZ_CHECK(dn == r->length &&
				   !memcmp(data, rec_file + r->rec.data_offset + r->offset, dn),
			   "the .sigmf-data is not the recording's %" PRIu64 " bytes at %" PRIu64,
			   r->length, r->offset);
		nvt_sha512_init(&h);
		nvt_sha512_update(&h, data, dn);
		nvt_sha512_final(&h, sha);
		FUZZ_CHECK(s.has_sha && !strcmp(s.sha, sha), "core:sha512 is not the data's");
		FUZZ_CHECK(!s.has_dataset && !s.has_trailing && !s.has_header,
			   "a dataset described in place");
		free(data);
	} else {
		FUZZ_CHECK(s.has_dataset && !strcmp(s.dataset, rec_name), "core:dataset \"%s\"",
			   s.dataset);
		FUZZ_CHECK(s.has_header && s.header == r->rec.data_offset + r->offset,
			   "core:header_bytes %" PRIu64 " for data at %" PRIu64, s.header,
			   r->rec.data_offset + r->offset);
		FUZZ_CHECK(s.has_trailing && s.header <= r->rec.file_bytes &&
				   s.trailing == r->rec.file_bytes - s.header - r->length,
			   "core:trailing_bytes %" PRIu64 " (header %" PRIu64 ", %" PRIu64
			   " bytes, file %" PRIu64 ")",
			   s.trailing, s.header, r->length, r->rec.file_bytes);
		FUZZ_CHECK(!s.has_sha, "a sha512 of data not exported");
	}
	free(meta);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const char *const fmt_name[] = {"raw", "sigmf", "sigmf-meta", "pcapng", "pcap"};

static void export_one(enum nvt_export_format f, const char *path, const struct opts *op,
		       const uint8_t *buf, size_t size, const struct nvt_recording *rec,
		       const struct pks *all)
{
	struct nvt_export_opts o;
	struct nvt_export_result *r = calloc(1, sizeof(*r));
	const char *base = fuzz_path("out");
	int rc;

	FUZZ_CHECK(r, "out of memory");
	unlink(base);
	unlink(fuzz_path("out.sigmf-data"));
	unlink(fuzz_path("out.sigmf-meta"));
	nvt_export_opts_init(&o);
	o.path = path;
	o.format = f;
	o.out = base;
	o.time = op->time;
	o.from_ns = op->from;
	o.to_ns = op->to;
	o.offset = op->offset;
	o.length = op->length;
	rc = nvt_export(&o, r);
	if (rc) {
		FUZZ_CHECK(rc < 0 && r->err.code && r->err.msg[0], "%s: a refused export says why",
			   fmt_name[f]);
		free(r);
		return;
	}
	FUZZ_CHECK(rec, "%s: exported a recording that does not open", fmt_name[f]);
	FUZZ_CHECK(r->offset <= rec->valid_bytes && r->length <= rec->valid_bytes - r->offset,
		   "%s: exported %" PRIu64 " bytes at %" PRIu64 " of %" PRIu64, fmt_name[f],
		   r->length, r->offset, rec->valid_bytes);
	FUZZ_CHECK(r->rec.data_offset == rec->data_offset && r->rec.file_bytes == size,
		   "%s: the export saw another recording", fmt_name[f]);
	if (f == NVT_EXPORT_SIGMF || f == NVT_EXPORT_SIGMF_META) {
		check_sigmf(f, r, buf, "a.nvt");
	} else {
		size_t n;
		uint8_t *out = fuzz_read_file(base, &n);
		FUZZ_CHECK(out, "%s: no output", fmt_name[f]);
		if (f == NVT_EXPORT_RAW) {
			FUZZ_CHECK(n == r->length &&
					   !memcmp(out, buf + rec->data_offset + r->offset, n),
				   "raw: not the recording's %" PRIu64 " bytes at %" PRIu64,
				   r->length, r->offset);
		} else {
			struct pks want = {0};
			wanted(all, op, r, &want);
			if (f == NVT_EXPORT_PCAPNG)
				check_pcapng(out, n, &want, r);
			else
				check_pcap(out, n, &want, r);
			free(want.v);
		}
		free(out);
	}
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_recording rec;
	struct nvt_layout l;
	struct nvt_err err = {0};
	struct opts op = {0};
	struct pks all = {0};
	uint32_t o32, l32;
	const char *path;
	uint8_t *buf;
	bool opened;

	if (size < CTL || size - CTL > MAX_INPUT)
		return -1;
	op.time = data[0] & 15;
	memcpy(&o32, data + 4, 4);
	memcpy(&l32, data + 8, 4);
	memcpy(&op.from, data + 12, 8);
	memcpy(&op.to, data + 20, 8);
	op.offset = o32;
	op.length = l32;
	size -= CTL;
	buf = malloc(size ? size : 1);
	FUZZ_CHECK(buf, "out of memory");
	memcpy(buf, data + CTL, size);
	fuzz_fix_crcs(buf, size);
	path = fuzz_file(buf, size);
	nvt_layout_single(&l, path);
	opened = nvt_recording_open(&l, &rec, &err) == 0;
	if (opened) {
		fuzz_check_open(&rec, size);
		if (nvt_source_kind_is_packets(rec.source_kind)) { /* its packets, to compare */
			struct nvt_pcapng_reader rd;
			nvt_pcapng_reader_init(&rd);
			all.rd = &rd;
			nvt_pcapng_feed(&rd, buf + rec.data_offset, rec.valid_bytes, collect, &all,
					&err);
			nvt_pcapng_reader_free(&rd);
		}
	}
	for (int f = NVT_EXPORT_RAW; f <= NVT_EXPORT_PCAP; f++)
		export_one((enum nvt_export_format)f, path, &op, buf, size, opened ? &rec : NULL,
			   &all);
	free(all.v);
	free(buf);
	return 0;
}
