/* SPDX-License-Identifier: MIT */
/* Export: a byte or time range of a recording, raw or as SigMF. The data is read in pieces,
 * checked against the chunk checksums and written out (hashed for SigMF's core:sha512); the
 * SigMF metadata takes what the recording says of itself (core:datatype, core:sample_rate,
 * ...), and turns each drop event inside the range into a new capture whose global index
 * jumps by the samples lost, with an annotation saying so. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control/export_int.h"
#include "format/index.h"
#include "format/sums.h"
#include "nvtape/export.h"
#include "nvtape/meta.h"
#include "storage/layout_io.h"
#include "util/sha512.h"

#define PIECE (8u << 20)

void nvt_export_opts_init(struct nvt_export_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->out_fd = -1;
}

/* The data range from the options: bytes, or times through the chunk capture times. */
static int resolve_range(const struct nvt_export_opts *o, const struct nvt_index *ix,
			 struct nvt_export_result *res)
{
	uint64_t valid = res->rec.valid_bytes;

	if (!o->time) {
		if (o->offset > valid || (o->length && o->length > valid - o->offset)) {
			nvt_err_param(
				&res->err,
				"the range of %llu bytes at %llu lies beyond the %llu bytes of "
				"data",
				(unsigned long long)o->length, (unsigned long long)o->offset,
				(unsigned long long)valid);
			return -EINVAL;
		}
		res->offset = o->offset;
		res->length = o->length ? o->length : valid - o->offset;
		return 0;
	}
	if (!ix->ntm) {
		nvt_err_param(&res->err,
			      "this recording keeps no chunk capture times (written "
			      "before nvtape kept them, or with --checksum none): give a "
			      "byte range");
		return -EINVAL;
	}
	uint64_t t0 = ix->tm[0].time_ns, from = 0, to = UINT64_MAX, start = valid, end = valid;
	if (o->time & NVT_EXPORT_FROM)
		from = (o->time & NVT_EXPORT_FROM_REL) ? t0 + o->from_ns : o->from_ns;
	if (o->time & NVT_EXPORT_TO)
		to = (o->time & NVT_EXPORT_TO_REL) ? t0 + o->to_ns : o->to_ns;
	for (uint64_t i = 0; i < ix->ntm; i++) /* the first chunk captured at or after from */
		if (ix->tm[i].time_ns >= from && ix->tm[i].data_offset < valid) {
			start = ix->tm[i].data_offset;
			break;
		}
	for (uint64_t i = 0; i < ix->ntm; i++) /* ... up to the first one at or after to */
		if (ix->tm[i].time_ns >= to && ix->tm[i].data_offset < valid) {
			end = ix->tm[i].data_offset;
			break;
		}
	if (start >= end) {
		nvt_err_param(&res->err,
			      "no data was captured in that time range (the recording's "
			      "chunks span %.3f s from its first)",
			      (ix->tm[ix->ntm - 1].time_ns - t0) / 1e9);
		return -EINVAL;
	}
	res->offset = start;
	res->length = end - start;
	return 0;
}

/* Bytes of one sample of a SigMF datatype, times the channels. */
static uint64_t sample_bytes(const char *dt, uint64_t channels)
{
	uint64_t b = strstr(dt, "64") ? 8 : strstr(dt, "32") ? 4 : strstr(dt, "16") ? 2 : 1;
	return b * (dt[0] == 'c' ? 2 : 1) * (channels ? channels : 1);
}

static int write_all(int fd, const uint8_t *buf, uint64_t k, struct nvt_export_result *res)
{
	for (uint64_t w = 0; w < k;) {
		ssize_t n = write(fd, buf + w, k - w);
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			nvt_err_set(&res->err, e, "writing the export: %s", strerror(e));
			return -e;
		}
		w += (uint64_t)n;
	}
	return 0;
}

static int put_fd(void *ctx, const uint8_t *buf, uint64_t k, uint64_t at,
		  struct nvt_export_result *res)
{
	(void)at;
	return write_all(*(int *)ctx, buf, k, res);
}

static int read_range(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		      uint64_t length, nvt_export_put_fn put, void *ctx, struct nvt_sha512 *sha,
		      struct nvt_export_result *res)
{
	struct nvt_sums_check c;
	int in[NVT_MAX_MEMBERS];
	uint8_t *buf = malloc(PIECE);
	int rc = 0;

	if (!buf || nvt_layout_open(L, O_RDONLY, in, &res->err)) {
		free(buf);
		if (!buf)
			nvt_err_set(&res->err, ENOMEM, "out of memory");
		return -1;
	}
	nvt_sums_check_init(&c, ix->crc, ix->ncrc, offset + length);
	for (uint64_t done = 0; done < length && !rc;) {
		uint64_t k = length - done < PIECE ? length - done : PIECE;
		uint64_t at = offset + done;
		rc = nvt_layout_pread(L, in, buf, k, res->rec.data_offset + at);
		if (rc) {
			nvt_err_set(&res->err, -rc, "reading %llu bytes at data offset %llu: %s",
				    (unsigned long long)k, (unsigned long long)at, strerror(-rc));
			break;
		}
		nvt_sums_check_feed(&c, buf, k, at);
		if (sha)
			nvt_sha512_update(sha, buf, k);
		rc = put(ctx, buf, k, at, res);
		done += k;
	}
	res->sums_good = c.good;
	res->sums_bad = c.bad;
	nvt_layout_close(L, in);
	free(buf);
	return rc ? -1 : 0;
}

int nvt_export_read(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		    uint64_t length, nvt_export_put_fn put, void *ctx,
		    struct nvt_export_result *res)
{
	return read_range(L, ix, offset, length, put, ctx, NULL, res);
}

/* Copy the export's range to fd. */
static int copy_range(const struct nvt_layout *L, const struct nvt_index *ix, int fd,
		      struct nvt_sha512 *sha, struct nvt_export_result *res)
{
	return read_range(L, ix, res->offset, res->length, put_fd, &fd, sha, res);
}

/* ---- SigMF metadata ---- */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* "key": value for a metadata key holding a number; nothing when it is absent or not one */
static void jnum_meta(FILE *f, const char *meta, const char *key, const char *name, bool integer)
{
	char v[64], *end;
	double d;

	if (nvt_meta_get(meta, key, v, sizeof(v)) <= 0)
		return;
	d = strtod(v, &end);
	if (*end || !isfinite(d))
		return;
	if (integer)
		fprintf(f, ",\n    \"%s\": %.0f", name, d);
	else
		fprintf(f, ",\n    \"%s\": %.17g", name, d);
}

static void jstr_meta(FILE *f, const char *meta, const char *key, const char *name)
{
	char v[NVT_META_MAX + 1];

	if (nvt_meta_get(meta, key, v, sizeof(v)) < 0)
		return;
	fprintf(f, ",\n    \"%s\": ", name);
	jstr(f, v);
}

static void datetime(char *buf, size_t cap, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&s, &tm);
	size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%09uZ", (unsigned)(ns % 1000000000u));
}

/* The capture time of data offset off when a chunk starts there (0: not known exactly). */
static uint64_t time_at(const struct nvt_index *ix, uint64_t off)
{
	for (uint64_t i = 0; i < ix->ntm; i++)
		if (ix->tm[i].data_offset == off)
			return ix->tm[i].time_ns;
	return 0;
}

struct sigmf {
	const char *dt, *meta, *dataset, *sha;
	uint64_t ss, header_bytes, trailing_bytes;
};

static void capture(FILE *f, const struct sigmf *m, const struct nvt_index *ix, uint64_t start,
		    uint64_t gidx, uint64_t off, bool first)
{
	char when[64];
	uint64_t t = time_at(ix, off);

	fprintf(f, "%s    {\n      \"core:sample_start\": %llu,\n      \"core:global_index\": %llu",
		first ? "" : ",\n", (unsigned long long)start, (unsigned long long)gidx);
	if (first && m->dataset)
		fprintf(f, ",\n      \"core:header_bytes\": %llu",
			(unsigned long long)m->header_bytes);
	jnum_meta(f, m->meta, "core:frequency", "core:frequency", false);
	if (t) {
		datetime(when, sizeof(when), t);
		fprintf(f, ",\n      \"core:datetime\": \"%s\"", when);
	}
	fprintf(f, "\n    }");
}

/* Non-core keys go in the nvtape extension's nvtape:meta object. */
static void other_keys(FILE *f, const char *meta)
{
	const char *pos = meta, *k, *val;
	size_t kn, vn;
	bool any = false;

	while (nvt_meta_next(&pos, &k, &kn, &val, &vn)) {
		char key[65], v[NVT_META_MAX + 1];
		if ((kn >= 5 && !strncmp(k, "core:", 5)) || kn >= sizeof(key) || vn >= sizeof(v))
			continue;
		memcpy(key, k, kn);
		key[kn] = 0;
		memcpy(v, val, vn);
		v[vn] = 0;
		fprintf(f, "%s\n      ", any ? "," : ",\n    \"nvtape:meta\": {");
		jstr(f, key);
		fputs(": ", f);
		jstr(f, v);
		any = true;
	}
	if (any)
		fputs("\n    }", f);
}

static int write_sigmf_meta(const char *path, const struct sigmf *m, const struct nvt_index *ix,
			    struct nvt_export_result *res)
{
	const struct nvt_recording *rec = &res->rec;
	uint64_t unit = rec->beat_bytes, lost_before = 0, start = 0, gidx;
	FILE *f = fopen(path, "w");
	bool first = true;

	if (!f) {
		nvt_err_set(&res->err, errno, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (uint64_t i = 0; i < ix->nev; i++) /* drops before the range's first sample */
		if (ix->ev[i].data_offset <= res->offset)
			lost_before += ix->ev[i].beats * unit;
	gidx = (res->offset + lost_before) / m->ss;
	fprintf(f, "{\n  \"global\": {\n    \"core:datatype\": ");
	jstr(f, m->dt);
	fprintf(f, ",\n    \"core:version\": \"1.0.0\"");
	jnum_meta(f, m->meta, "core:sample_rate", "core:sample_rate", false);
	jnum_meta(f, m->meta, "core:num_channels", "core:num_channels", true);
	jstr_meta(f, m->meta, "core:description", "core:description");
	jstr_meta(f, m->meta, "core:author", "core:author");
	fprintf(f, ",\n    \"core:recorder\": \"nvtape %s\"", NVT_VERSION);
	if (m->sha)
		fprintf(f, ",\n    \"core:sha512\": \"%s\"", m->sha);
	if (m->dataset) {
		fprintf(f, ",\n    \"core:dataset\": ");
		jstr(f, m->dataset);
		fprintf(f, ",\n    \"core:trailing_bytes\": %llu",
			(unsigned long long)m->trailing_bytes);
	}
	fprintf(f, ",\n    \"core:extensions\": [{\"name\": \"nvtape\", \"version\": \"1.0.0\", "
		   "\"optional\": true}]");
	other_keys(f, m->meta);
	fprintf(f, "\n  },\n  \"captures\": [\n");
	capture(f, m, ix, 0, gidx, res->offset, true);
	res->captures = 1;
	for (uint64_t i = 0; i < ix->nev;) { /* events in order; those at one offset are one */
		uint64_t off = ix->ev[i].data_offset, lost_bytes = 0;
		if (off <= res->offset || off >= res->offset + res->length) {
			i++;
			continue;
		}
		while (i < ix->nev && ix->ev[i].data_offset == off)
			lost_bytes += ix->ev[i++].beats * unit;
		uint64_t s = (off - res->offset) / m->ss, lost = lost_bytes / m->ss;
		gidx += s - start + lost;
		start = s;
		res->dropped_samples += lost;
		capture(f, m, ix, s, gidx, off, false);
		res->captures++;
	}
	fprintf(f, "\n  ],\n  \"annotations\": [");
	first = true;
	for (uint64_t i = 0; i < ix->nev; i++) {
		const struct nvt_drop_event *e = &ix->ev[i];
		if (e->data_offset <= res->offset || e->data_offset >= res->offset + res->length)
			continue;
		fprintf(f,
			"%s\n    {\n      \"core:sample_start\": %llu,\n      \"core:label\": "
			"\"drop\",\n      \"core:comment\": \"%llu samples (%llu bytes) were lost "
			"here: nvtape's drop index\"\n    }",
			first ? "" : ",",
			(unsigned long long)((e->data_offset - res->offset) / m->ss),
			(unsigned long long)(e->beats * unit / m->ss),
			(unsigned long long)(e->beats * unit));
		first = false;
	}
	fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
	if (fclose(f)) {
		nvt_err_set(&res->err, errno, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What SigMF needs before anything is written: a datatype, whole samples, drops in whole
 * samples. */
static int sigmf_check(const struct nvt_export_opts *o, const char *meta, char *dt, size_t cap,
		       const struct nvt_index *ix, struct nvt_export_result *res)
{
	char ch[32];
	uint64_t channels = nvt_meta_get(meta, "core:num_channels", ch, sizeof(ch)) > 0
				    ? strtoull(ch, NULL, 10)
				    : 1;

	if (nvt_meta_get(meta, "core:datatype", dt, cap) <= 0 || !nvt_meta_datatype_ok(dt)) {
		snprintf(dt, cap, "ru8");
		if (o->notice)
			o->notice("the recording does not say its core:datatype: exported as ru8 "
				  "(bytes); nvtape meta FILE core:datatype=TYPE says what it is",
				  o->arg);
	}
	res->sample_bytes = sample_bytes(dt, channels);
	if (res->offset % res->sample_bytes || res->length % res->sample_bytes) {
		nvt_err_param(&res->err,
			      "the range (%llu bytes at %llu) is not whole %llu-byte samples of %s",
			      (unsigned long long)res->length, (unsigned long long)res->offset,
			      (unsigned long long)res->sample_bytes, dt);
		return -EINVAL;
	}
	for (uint64_t i = 0; i < ix->nev; i++)
		if ((ix->ev[i].beats * res->rec.beat_bytes) % res->sample_bytes &&
		    ix->ev[i].data_offset > res->offset &&
		    ix->ev[i].data_offset < res->offset + res->length && o->notice) {
			o->notice("a drop of a number of bytes that is not whole samples: SigMF's "
				  "global index counts the whole samples lost",
				  o->arg);
			break;
		}
	return 0;
}

static int open_out(const char *path, struct nvt_export_result *res)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		nvt_err_set(&res->err, errno, "%s: %s", path, strerror(errno));
	return fd;
}

/* The .sigmf-meta beside the recording it describes: its file name relative to the meta's. */
static const char *dataset_name(const char *rec_path, const char *meta_path,
				struct nvt_export_result *res)
{
	char a[PATH_MAX], b[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];

	snprintf(a, sizeof(a), "%s", rec_path);
	snprintf(b, sizeof(b), "%s", meta_path);
	if (!realpath(dirname(a), ra) || !realpath(dirname(b), rb) || strcmp(ra, rb)) {
		nvt_err_param(&res->err, "a .sigmf-meta that describes the recording in place goes "
					 "in the recording's directory (SigMF names the dataset by "
					 "its file name)");
		return NULL;
	}
	return strrchr(rec_path, '/') ? strrchr(rec_path, '/') + 1 : rec_path;
}

static int export_sigmf(const struct nvt_export_opts *o, const struct nvt_layout *L,
			const struct nvt_index *ix, struct nvt_export_result *res)
{
	struct sigmf m = {.meta = ix->meta ? ix->meta : ""};
	char dt[32], sha[129];
	struct nvt_sha512 h;

	if (sigmf_check(o, m.meta, dt, sizeof(dt), ix, res))
		return -EINVAL;
	m.dt = dt;
	m.ss = res->sample_bytes;
	snprintf(res->meta_path, sizeof(res->meta_path), "%s.sigmf-meta", o->out);
	if (o->format == NVT_EXPORT_SIGMF_META) {
		if (L->n > 1) {
			nvt_err_param(&res->err, "a striped recording is not one dataset file: "
						 "export its data (--format sigmf)");
			return -EINVAL;
		}
		m.dataset = dataset_name(L->path[0], res->meta_path, res);
		if (!m.dataset)
			return -EINVAL;
		m.header_bytes = res->rec.data_offset + res->offset;
		m.trailing_bytes = res->rec.file_bytes - m.header_bytes - res->length;
		{ /* the chunks are checked all the same, the data not copied */
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			int rc = fd < 0 ? -1 : copy_range(L, ix, fd, NULL, res);
			if (fd >= 0)
				close(fd);
			if (rc)
				return -EIO;
		}
		return write_sigmf_meta(res->meta_path, &m, ix, res) ? -EIO : 0;
	}
	snprintf(res->data_path, sizeof(res->data_path), "%s.sigmf-data", o->out);
	int fd = open_out(res->data_path, res);
	if (fd < 0)
		return -EIO;
	nvt_sha512_init(&h);
	int rc = copy_range(L, ix, fd, &h, res);
	if (close(fd) && !rc) {
		nvt_err_set(&res->err, errno, "%s: %s", res->data_path, strerror(errno));
		rc = -1;
	}
	if (rc)
		return -EIO;
	nvt_sha512_final(&h, sha);
	m.sha = sha;
	return write_sigmf_meta(res->meta_path, &m, ix, res) ? -EIO : 0;
}

int nvt_export(const struct nvt_export_opts *o, struct nvt_export_result *res)
{
	struct nvt_index ix = {0};
	struct nvt_layout L;
	int rc;

	memset(res, 0, sizeof(*res));
	nvt_layout_resolve(&o->layout, o->path, &L);
	if (nvt_recording_open(&L, &res->rec, &res->err))
		return -(res->err.code ? res->err.code : EIO);
	if (res->rec.format == NVT_FMT_NVTAPE &&
	    nvt_recording_read_index_all(&L, &res->rec, &ix, &res->err))
		return -(res->err.code ? res->err.code : EIO);
	bool packets = o->format == NVT_EXPORT_PCAPNG || o->format == NVT_EXPORT_PCAP;
	if (o->format != NVT_EXPORT_RAW &&
	    packets != !!nvt_source_kind_is_packets(res->rec.source_kind)) {
		nvt_err_param(&res->err,
			      packets ? "this recording holds no packets (its source is %s): "
					"export it raw or as SigMF"
				      : "this recording holds packets (its source is %s), not "
					"samples: export them as pcapng or pcap (or raw: the data "
					"section is a pcapng stream)",
			      nvt_source_kind_name(res->rec.source_kind));
		nvt_index_clear(&ix);
		return -EINVAL;
	}
	rc = packets && o->time ? 0 : resolve_range(o, &ix, res);
	if (!rc && o->format != NVT_EXPORT_RAW && !packets && !o->out) {
		nvt_err_param(&res->err, "SigMF needs a base name for its files");
		rc = -EINVAL;
	}
	if (!rc && (o->format == NVT_EXPORT_RAW || packets)) {
		int fd = o->out ? open_out(o->out, res) : o->out_fd;
		if (fd < 0)
			rc = -EIO;
		else {
			if (packets)
				rc = nvt_export_packets(o, &L, &ix, fd, res);
			else
				rc = copy_range(&L, &ix, fd, NULL, res) ? -EIO : 0;
			if (o->out && close(fd) && !rc) {
				nvt_err_set(&res->err, errno, "%s: %s", o->out, strerror(errno));
				rc = -EIO;
			}
			if (o->out)
				snprintf(res->data_path, sizeof(res->data_path), "%s", o->out);
		}
	} else if (!rc) {
		rc = export_sigmf(o, &L, &ix, res);
	}
	nvt_index_clear(&ix);
	if (rc && !res->err.code)
		nvt_err_set(&res->err, EIO, "export failed");
	return rc;
}
