/* SPDX-License-Identifier: MIT */
/* Export: a byte or time range of a recording, raw or as SigMF. The data is read in pieces,
 * checked against the chunk checksums and written out (hashed for SigMF's core:sha512); the
 * SigMF metadata takes what the recording says of itself (core:datatype, core:sample_rate,
 * ...: every number range-checked), and turns each drop event inside the range into a new
 * capture whose global index jumps by the samples lost, with an annotation saying so; drops the
 * recording counts but does not place (an fdrec file keeps only their number) become an
 * annotation over the whole range and a result the caller reports as a data problem.
 * An output is never the recording itself nor any other recording, and is written under a
 * temporary name beside it, renamed into place once whole: an export that fails or is
 * interrupted leaves nothing behind and the old file, if any, as it was. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control/export_int.h"
#include "format/index.h"
#include "format/sums.h"
#include "nvtape/export.h"
#include "nvtape/meta.h"
#include "storage/layout_io.h"
#include "sys/devcheck.h"
#include "util/sha512.h"
#include "util/sysutil.h"

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
		if (!res->length && valid) {
			nvt_err_param(&res->err,
				      "the range at %llu holds no data: the recording's %llu bytes "
				      "end there",
				      (unsigned long long)o->offset, (unsigned long long)valid);
			return -EINVAL;
		}
		return 0;
	}
	if (!ix->ntm) {
		nvt_err_param(&res->err,
			      "this recording keeps no chunk capture times (written "
			      "before nvtape kept them, or with --checksum none): give a "
			      "byte range");
		return -EINVAL;
	}
	uint64_t t0 = ix->tm[0].time_ns, from, to, start = valid, end = valid;
	if (nvt_export_times(o, t0, &from, &to, res))
		return -EINVAL;
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

int nvt_export_times(const struct nvt_export_opts *o, uint64_t t0, uint64_t *from, uint64_t *to,
		     struct nvt_export_result *res)
{
	*from = 0;
	*to = UINT64_MAX;
	if (o->time & NVT_EXPORT_FROM)
		*from = !(o->time & NVT_EXPORT_FROM_REL) ? o->from_ns
			: o->from_ns > UINT64_MAX - t0   ? UINT64_MAX
							 : t0 + o->from_ns;
	if (o->time & NVT_EXPORT_TO)
		*to = !(o->time & NVT_EXPORT_TO_REL) ? o->to_ns
		      : o->to_ns > UINT64_MAX - t0   ? UINT64_MAX
						     : t0 + o->to_ns;
	if (*from >= *to) {
		nvt_err_param(&res->err,
			      "the time range is empty: its end (%.3f s after the first capture) "
			      "is not after its start (%.3f s); give an end after the start",
			      ((double)*to - (double)t0) / 1e9, ((double)*from - (double)t0) / 1e9);
		return -EINVAL;
	}
	return 0;
}

uint64_t nvt_sigmf_sample_bytes(const char *dt, uint64_t channels)
{
	uint64_t b = strstr(dt, "64") ? 8 : strstr(dt, "32") ? 4 : strstr(dt, "16") ? 2 : 1;
	return b * (dt[0] == 'c' ? 2 : 1) * (channels ? channels : 1);
}

uint64_t nvt_sigmf_meta_sample_bytes(const char *meta)
{
	char dt[32], ch[32], *end;
	double n = 1;

	if (!meta || nvt_meta_get(meta, "core:datatype", dt, sizeof(dt)) <= 0 ||
	    !nvt_meta_datatype_ok(dt))
		snprintf(dt, sizeof(dt), "ru8");
	if (meta && nvt_meta_get(meta, "core:num_channels", ch, sizeof(ch)) > 0) {
		n = strtod(ch, &end);
		if (*end || !(n >= 1 && n <= 65535) || n != floor(n))
			n = 1;
	}
	return nvt_sigmf_sample_bytes(dt, (uint64_t)n);
}

/* A write interrupted by a signal is taken up again, unless the export is being stopped. */
int nvt_export_write(int fd, const uint8_t *buf, uint64_t k, const volatile sig_atomic_t *stop,
		     struct nvt_export_result *res)
{
	for (uint64_t w = 0; w < k;) {
		ssize_t n = write(fd, buf + w, k - w);
		if (n < 0 && errno == EINTR && !nvt_interrupted(stop))
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			nvt_err_set(&res->err, e, "writing the export: %s", strerror(e));
			return -e;
		}
		w += (uint64_t)n;
	}
	return 0;
}

struct put_fd {
	int fd;
	const volatile sig_atomic_t *stop;
};

static int put_fd(void *ctx, const uint8_t *buf, uint64_t k, uint64_t at,
		  struct nvt_export_result *res)
{
	const struct put_fd *p = ctx;

	(void)at;
	return nvt_export_write(p->fd, buf, k, p->stop, res);
}

static int read_range(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		      uint64_t length, nvt_export_put_fn put, void *ctx, struct nvt_sha512 *sha,
		      const volatile sig_atomic_t *stop, struct nvt_export_result *res)
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
		if (nvt_interrupted(stop)) {
			nvt_err_set(&res->err, EINTR, "interrupted");
			rc = -EINTR;
			break;
		}
		res->bytes_read = done;
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
		if (!rc)
			res->bytes_read = done;
	}
	res->sums_good = c.good;
	res->sums_bad = c.bad;
	nvt_layout_close(L, in);
	free(buf);
	return rc ? -1 : 0;
}

int nvt_export_read(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		    uint64_t length, nvt_export_put_fn put, void *ctx,
		    const volatile sig_atomic_t *stop, struct nvt_export_result *res)
{
	return read_range(L, ix, offset, length, put, ctx, NULL, stop, res);
}

/* Copy the export's range to fd. */
static int copy_range(const struct nvt_export_opts *o, const struct nvt_layout *L,
		      const struct nvt_index *ix, int fd, struct nvt_sha512 *sha,
		      struct nvt_export_result *res)
{
	struct put_fd p = {.fd = fd, .stop = o->interrupt};

	return read_range(L, ix, res->offset, res->length, put_fd, &p, sha, o->interrupt, res);
}

/* ---- outputs ---- */

struct out {
	const char *path;        /* the name it gets */
	char tmp[PATH_MAX + 16]; /* written under this name until whole ("": in place) */
	int fd;
};

static bool same_file(const struct stat *a, const struct stat *b)
{
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode))
		return a->st_rdev == b->st_rdev;
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The member of the recording that st is, or -1. */
static int input_member(const struct stat *st, const struct nvt_layout *L)
{
	for (unsigned m = 0; m < L->n; m++) {
		struct stat ms;
		if (stat(L->path[m], &ms) == 0 && same_file(st, &ms))
			return (int)m;
	}
	return -1;
}

static int refuse_input(const char *what, const struct nvt_layout *L, int m,
			struct nvt_export_result *res)
{
	nvt_err_set(&res->err, EEXIST,
		    "%s is the recording being exported (the same file as %s%s): an export never "
		    "writes over what it reads; give another output name",
		    what, L->n > 1 ? "its member " : "", L->path[m]);
	return -EEXIST;
}

/* An output that is the recording (any member, through any link), or that holds another
 * recording, is refused before anything is opened for writing. */
static int out_check(const char *path, const struct nvt_layout *L, struct nvt_export_result *res)
{
	struct stat st;
	char what[200];
	int m = -1, fd;

	if (lstat(path, &st) == 0)
		m = input_member(&st, L);
	if (m < 0 && stat(path, &st) == 0)
		m = input_member(&st, L);
	if (m >= 0)
		return refuse_input(path, L, m, res);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	bool rec = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) &&
		   nvt_describe_file(fd, what, sizeof(what));
	close(fd);
	if (rec) {
		nvt_err_set(&res->err, EEXIST,
			    "%s holds %s: an export does not replace a recording; give another "
			    "output name (or remove that file first)",
			    path, what);
		return -EEXIST;
	}
	return 0;
}

/* A regular file is written under a new name beside it (O_EXCL, never through a link);
 * a device or FIFO in place. */
static int out_open(struct out *f, const char *path, struct nvt_export_result *res)
{
	struct stat st;

	f->path = path;
	f->tmp[0] = 0;
	f->fd = -1;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		nvt_err_param(&res->err, "%s is a directory: give a file name for the export",
			      path);
		return -EISDIR;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* nothing of it can be kept apart */
		f->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (f->fd < 0) {
			nvt_err_set(&res->err, errno, "%s: %s", path, strerror(errno));
			return -errno;
		}
		return 0;
	}
	for (int i = 0; i < 100 && f->fd < 0; i++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint32_t)(nvt_mono_ns() ^ (uint64_t)getpid() << 16);
		if ((size_t)snprintf(f->tmp, sizeof(f->tmp), "%s.part-%06x", path,
				     (unsigned)(r & 0xffffff)) >= sizeof(f->tmp)) {
			nvt_err_set(&res->err, ENAMETOOLONG, "%s: the name is too long", path);
			f->tmp[0] = 0;
			return -ENAMETOOLONG;
		}
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd < 0 && errno != EEXIST) {
			int e = errno;
			nvt_err_set(&res->err, e,
				    "%s: cannot create %s to write the export into first: %s", path,
				    f->tmp, strerror(e));
			f->tmp[0] = 0;
			return -e;
		}
	}
	if (f->fd < 0) {
		nvt_err_set(&res->err, EEXIST, "cannot create a new file beside %s", path);
		f->tmp[0] = 0;
		return -EEXIST;
	}
	return 0;
}

/* Flushed to the drive and closed; removed unless keep. 0, or -errno with res->err set (then
 * nothing is kept). */
static int out_close(struct out *f, bool keep, struct nvt_export_result *res)
{
	int e = 0;

	if (f->fd < 0)
		return keep ? 0 : -EIO;
	if (keep && f->tmp[0] && fsync(f->fd))
		e = errno;
	if (close(f->fd) && keep && !e)
		e = errno;
	f->fd = -1;
	if (e)
		nvt_err_set(&res->err, e, "writing %s: %s", f->tmp[0] ? f->tmp : f->path,
			    strerror(e));
	if ((!keep || e) && f->tmp[0]) {
		unlink(f->tmp);
		f->tmp[0] = 0;
	}
	return e ? -e : keep ? 0 : -EIO;
}

/* The closed file under its own name. */
static int out_commit(struct out *f, struct nvt_export_result *res)
{
	if (!f->tmp[0])
		return 0;
	if (rename(f->tmp, f->path)) {
		int e = errno;
		nvt_err_set(&res->err, e, "cannot rename %s to %s: %s", f->tmp, f->path,
			    strerror(e));
		unlink(f->tmp);
		return -e;
	}
	f->tmp[0] = 0;
	return 0;
}

/* ---- SigMF metadata ---- */

/* Bytes of the valid UTF-8 sequence at s (no overlong forms, surrogates or code points past
 * U+10FFFF), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp, min;
	size_t n;

	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		n = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the terminating NUL stops here too */
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string; a byte that is not part of valid UTF-8 becomes U+FFFD. */
static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else if (!n)
			fputs("\\ufffd", f);
		else
			fwrite(p, 1, n, f);
		p += n ? n : 1;
	}
	fputc('"', f);
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
	uint64_t channels;       /* core:num_channels, 0: not given */
	double rate, freq;       /* core:sample_rate, core:frequency ... */
	bool has_rate, has_freq; /* ... when given */
};

enum meta_num { NUM_FINITE, NUM_POSITIVE, NUM_CHANNELS };

/* A number the metadata holds under key: absent (0, *has false), or one of the kind asked
 * for; otherwise -EINVAL with a message naming the key and how to correct it. */
static int meta_number(const char *meta, const char *key, enum meta_num kind, double *out,
		       bool *has, struct nvt_export_result *res)
{
	static const char *const what[] = {"a finite number", "a number > 0",
					   "a whole number from 1 to 65535"};
	char v[64], *end;
	int n = nvt_meta_get(meta, key, v, sizeof(v));

	*has = false;
	if (n == -ENOENT)
		return 0;
	if (n > 0) {
		*out = strtod(v, &end);
		if (!*end && isfinite(*out) && (kind != NUM_POSITIVE || *out > 0) &&
		    (kind != NUM_CHANNELS || (*out >= 1 && *out <= 65535 && *out == floor(*out)))) {
			*has = true;
			return 0;
		}
	}
	nvt_err_set(&res->err, EINVAL,
		    "the recording's %s is \"%.40s%s\", not %s: nothing was exported; nvtape meta "
		    "FILE %s=VALUE corrects it",
		    key, n > 0 ? v : "", n == -ENOSPC ? "..." : "", what[kind], key);
	return -EINVAL;
}

/* beats x unit bytes added to *acc; -EOVERFLOW (res->err set) when a damaged index makes that
 * more than 64 bits hold. */
static int add_beats(uint64_t *acc, uint64_t beats, uint64_t unit, struct nvt_export_result *res)
{
	uint64_t b;

	if (__builtin_mul_overflow(beats, unit, &b) || __builtin_add_overflow(*acc, b, acc)) {
		nvt_err_set(&res->err, EOVERFLOW,
			    "the drop index counts more beats lost than 64 bits hold (%llu at "
			    "once): the index is damaged (nvtape verify says more)",
			    (unsigned long long)beats);
		return -EOVERFLOW;
	}
	return 0;
}

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
	if (m->has_freq)
		fprintf(f, ",\n      \"core:frequency\": %.17g", m->freq);
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

/* The .sigmf-meta text into f. 0, or -errno with res->err set. */
static int sigmf_text(FILE *f, const struct sigmf *m, const struct nvt_index *ix,
		      struct nvt_export_result *res)
{
	const struct nvt_recording *rec = &res->rec;
	uint64_t unit = rec->beat_bytes, lost_before = 0, start = 0, gidx;
	bool first = true;

	for (uint64_t i = 0; i < ix->nev; i++) /* drops before the range's first sample */
		if (ix->ev[i].data_offset <= res->offset &&
		    add_beats(&lost_before, ix->ev[i].beats, unit, res))
			return -EOVERFLOW;
	gidx = res->offset;
	if (add_beats(&gidx, lost_before, 1, res))
		return -EOVERFLOW;
	gidx /= m->ss;
	fprintf(f, "{\n  \"global\": {\n    \"core:datatype\": ");
	jstr(f, m->dt);
	fprintf(f, ",\n    \"core:version\": \"1.0.0\"");
	if (m->has_rate)
		fprintf(f, ",\n    \"core:sample_rate\": %.17g", m->rate);
	if (m->channels)
		fprintf(f, ",\n    \"core:num_channels\": %llu", (unsigned long long)m->channels);
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
	if (res->unplaced_samples)
		fprintf(f, ",\n    \"nvtape:unplaced_samples\": %llu",
			(unsigned long long)res->unplaced_samples);
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
			if (add_beats(&lost_bytes, ix->ev[i++].beats, unit, res))
				return -EOVERFLOW;
		uint64_t s = (off - res->offset) / m->ss, lost = lost_bytes / m->ss;
		if (add_beats(&gidx, s - start, 1, res) || add_beats(&gidx, lost, 1, res))
			return -EOVERFLOW;
		start = s;
		res->dropped_samples += lost;
		capture(f, m, ix, s, gidx, off, false);
		res->captures++;
	}
	fprintf(f, "\n  ],\n  \"annotations\": [");
	first = !res->unplaced_samples;
	if (res->unplaced_samples)
		fprintf(f,
			"\n    {\n      \"core:sample_start\": 0,\n      \"core:sample_count\": "
			"%llu,\n"
			"      \"core:label\": \"drops unplaced\",\n      \"core:comment\": \"%llu "
			"samples were lost in this recording at places it does not keep (%s): the "
			"samples after the first of them lie later than the time axis says\"\n    "
			"}",
			(unsigned long long)(res->length / m->ss),
			(unsigned long long)res->unplaced_samples,
			rec->format == NVT_FMT_FDREC
				? "an FPGA Drive Recorder file keeps only a drop count"
				: "its drop index is missing");
	for (uint64_t i = 0; i < ix->nev; i++) {
		const struct nvt_drop_event *e = &ix->ev[i];
		uint64_t lost = 0;
		if (e->data_offset <= res->offset || e->data_offset >= res->offset + res->length)
			continue;
		if (add_beats(&lost, e->beats, unit, res))
			return -EOVERFLOW;
		fprintf(f,
			"%s\n    {\n      \"core:sample_start\": %llu,\n      \"core:label\": "
			"\"drop\",\n      \"core:comment\": \"%llu samples (%llu bytes) were lost "
			"here: nvtape's drop index\"\n    }",
			first ? "" : ",",
			(unsigned long long)((e->data_offset - res->offset) / m->ss),
			(unsigned long long)(lost / m->ss), (unsigned long long)lost);
		first = false;
	}
	fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
	return 0;
}

/* The samples lost that the header counts beyond those the drop index places (all of them in
 * an fdrec file, which has no index), rounded up; a count too large for 64 bits saturates. */
static void count_unplaced(const struct nvt_index *ix, struct nvt_export_result *res)
{
	const struct nvt_recording *rec = &res->rec;
	uint64_t placed = 0, bytes;

	for (uint64_t i = 0; i < ix->nev; i++)
		if (__builtin_add_overflow(placed, ix->ev[i].beats, &placed))
			placed = UINT64_MAX;
	if (rec->drop_count <= placed)
		return;
	if (__builtin_mul_overflow(rec->drop_count - placed, rec->beat_bytes, &bytes))
		bytes = UINT64_MAX;
	res->unplaced_samples = bytes / res->sample_bytes + !!(bytes % res->sample_bytes);
}

/* What SigMF needs before anything is written: a datatype, numbers in range, whole samples,
 * drops in whole samples, and a core:sample_rate in the samples the datatype describes. */
static int sigmf_check(const struct nvt_export_opts *o, struct sigmf *m, char *dt, size_t cap,
		       const struct nvt_index *ix, struct nvt_export_result *res)
{
	const struct nvt_recording *rec = &res->rec;
	double ch;
	bool has_ch, has_dt;

	if (meta_number(m->meta, "core:num_channels", NUM_CHANNELS, &ch, &has_ch, res) ||
	    meta_number(m->meta, "core:sample_rate", NUM_POSITIVE, &m->rate, &m->has_rate, res) ||
	    meta_number(m->meta, "core:frequency", NUM_FINITE, &m->freq, &m->has_freq, res))
		return -EINVAL;
	m->channels = has_ch ? (uint64_t)ch : 0;
	has_dt = nvt_meta_get(m->meta, "core:datatype", dt, cap) > 0 && nvt_meta_datatype_ok(dt);
	if (!has_dt) {
		snprintf(dt, cap, "ru8");
		if (o->notice)
			o->notice("the recording does not say its core:datatype: exported as ru8 "
				  "(bytes); nvtape meta FILE core:datatype=TYPE says what it is",
				  o->arg);
	}
	m->dt = dt;
	m->ss = res->sample_bytes = nvt_sigmf_sample_bytes(dt, m->channels);
	/* a test pattern written before nvtape kept its datatype counted its rate in beats */
	if (!has_dt && m->has_rate && nvt_source_kind_is_pattern(rec->source_kind) &&
	    rec->rate_bps && rec->beat_bytes > 1 &&
	    fabs(m->rate * rec->beat_bytes - (double)rec->rate_bps) <= 1e-9 * rec->rate_bps) {
		m->rate = (double)rec->rate_bps / (double)m->ss;
		if (o->notice)
			o->notice("this test-pattern recording's core:sample_rate counts beats (an "
				  "older nvtape wrote it so): exported in bytes per second, the "
				  "samples of ru8",
				  o->arg);
	}
	if (res->offset % res->sample_bytes || res->length % res->sample_bytes) {
		nvt_err_param(&res->err,
			      "the range (%llu bytes at %llu) is not whole %llu-byte samples of %s",
			      (unsigned long long)res->length, (unsigned long long)res->offset,
			      (unsigned long long)res->sample_bytes, dt);
		return -EINVAL;
	}
	count_unplaced(ix, res);
	for (uint64_t i = 0; i < ix->nev; i++) {
		uint64_t lost = 0;
		if (ix->ev[i].data_offset <= res->offset ||
		    ix->ev[i].data_offset >= res->offset + res->length)
			continue;
		if (add_beats(&lost, ix->ev[i].beats, rec->beat_bytes, res))
			return -EOVERFLOW;
		if (lost % res->sample_bytes && o->notice) {
			o->notice("a drop of a number of bytes that is not whole samples: SigMF's "
				  "global index counts the whole samples lost",
				  o->arg);
			break;
		}
	}
	return 0;
}

/* The .sigmf-meta, written into f's file. */
static int write_sigmf_meta(struct out *f, const struct sigmf *m, const struct nvt_index *ix,
			    const struct nvt_export_opts *o, struct nvt_export_result *res)
{
	char *text = NULL;
	size_t n = 0;
	FILE *mf = open_memstream(&text, &n);
	int rc;

	if (!mf) {
		nvt_err_set(&res->err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	rc = sigmf_text(mf, m, ix, res);
	if (fclose(mf) && !rc) {
		nvt_err_set(&res->err, ENOMEM, "out of memory");
		rc = -ENOMEM;
	}
	if (!rc)
		rc = nvt_export_write(f->fd, (const uint8_t *)text, n, o->interrupt, res);
	free(text);
	return rc;
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
			const struct nvt_index *ix, bool *in_place, struct nvt_export_result *res)
{
	struct sigmf m = {.meta = ix->meta ? ix->meta : ""};
	struct out data = {.fd = -1}, meta = {.fd = -1};
	char dt[32], sha[129];
	struct nvt_sha512 h;
	int rc;

	if (sigmf_check(o, &m, dt, sizeof(dt), ix, res))
		return -EINVAL;
	if ((size_t)snprintf(res->meta_path, sizeof(res->meta_path), "%s.sigmf-meta", o->out) >=
		    sizeof(res->meta_path) ||
	    (size_t)snprintf(res->data_path, sizeof(res->data_path), "%s.sigmf-data", o->out) >=
		    sizeof(res->data_path)) {
		nvt_err_param(&res->err, "the SigMF base name is too long");
		return -ENAMETOOLONG;
	}
	if (o->format == NVT_EXPORT_SIGMF_META) {
		res->data_path[0] = 0;
		if (L->n > 1) {
			nvt_err_param(&res->err, "a striped recording is not one dataset file: "
						 "export its data (--format sigmf)");
			return -EINVAL;
		}
		m.dataset = dataset_name(L->path[0], res->meta_path, res);
		if (!m.dataset || out_check(res->meta_path, L, res))
			return -EINVAL;
		m.header_bytes = res->rec.data_offset + res->offset;
		m.trailing_bytes = res->rec.file_bytes - m.header_bytes - res->length;
		if (m.trailing_bytes % m.ss && o->notice) {
			char msg[PATH_MAX + 600];
			snprintf(
				msg, sizeof(msg),
				"%s ends %llu bytes off a whole number of %llu-byte samples of %s "
				"after core:header_bytes (its index was written by an older "
				"nvtape, "
				"or for another datatype): SigMF readers that map the dataset to "
				"its "
				"end and reshape it in samples (sigmf-python's loader) fail on it; "
				"nvtape meta %s core:datatype=%s rewrites the index padded to "
				"whole "
				"samples",
				L->path[0], (unsigned long long)(m.trailing_bytes % m.ss),
				(unsigned long long)m.ss, dt, L->path[0], dt);
			o->notice(msg, o->arg);
		}
		{ /* the chunks are checked all the same, the data not copied */
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
			rc = fd < 0 ? -1 : copy_range(o, L, ix, fd, NULL, res);
			if (fd >= 0)
				close(fd);
			if (rc)
				return -EIO;
		}
		rc = out_open(&meta, res->meta_path, res);
		if (!rc)
			rc = write_sigmf_meta(&meta, &m, ix, o, res);
		if (meta.fd >= 0 && out_close(&meta, !rc, res) && !rc)
			rc = -EIO;
		return rc ? rc : out_commit(&meta, res);
	}
	if (out_check(res->data_path, L, res) || out_check(res->meta_path, L, res))
		return -EEXIST;
	rc = out_open(&data, res->data_path, res);
	if (!rc)
		rc = out_open(&meta, res->meta_path, res);
	*in_place = !rc && (!data.tmp[0] || !meta.tmp[0]);
	if (!rc) {
		nvt_sha512_init(&h);
		rc = copy_range(o, L, ix, data.fd, &h, res);
	}
	if (!rc) {
		nvt_sha512_final(&h, sha);
		m.sha = sha;
		rc = write_sigmf_meta(&meta, &m, ix, o, res);
	}
	/* both whole before either takes its name; the data first, the meta last */
	if (data.fd >= 0 && out_close(&data, !rc, res) && !rc)
		rc = -EIO;
	if (meta.fd >= 0 && out_close(&meta, !rc, res) && !rc)
		rc = -EIO;
	if (!rc)
		rc = out_commit(&data, res);
	if (!rc)
		rc = out_commit(&meta, res);
	else if (meta.tmp[0])
		unlink(meta.tmp);
	return rc;
}

/* Why the export stopped early, in res->err: what became of its output (left: written in
 * place, to standard output or a device, so what was written stays). */
static void interrupted(const struct nvt_export_opts *o, bool left, struct nvt_export_result *res)
{
	bool packets = o->format == NVT_EXPORT_PCAPNG || o->format == NVT_EXPORT_PCAP;
	char done[96];

	res->interrupted = true;
	if (packets || !res->length)
		snprintf(done, sizeof(done), "%llu data bytes read",
			 (unsigned long long)res->bytes_read);
	else
		snprintf(done, sizeof(done), "%llu of %llu bytes",
			 (unsigned long long)res->bytes_read, (unsigned long long)res->length);
	nvt_err_clear(&res->err);
	if (left)
		nvt_err_set(&res->err, EINTR,
			    "interrupted by a signal after %s: the output holds only the part "
			    "written so far",
			    done);
	else
		nvt_err_set(
			&res->err, EINTR,
			"interrupted by a signal after %s: the partial export was removed, %s%s "
			"left as it was (or not created)",
			done, o->out,
			o->format == NVT_EXPORT_SIGMF || o->format == NVT_EXPORT_SIGMF_META
				? ".sigmf-*"
				: "");
}

int nvt_export(const struct nvt_export_opts *o, struct nvt_export_result *res)
{
	struct nvt_index ix = {0};
	struct nvt_layout L;
	bool in_place = !o->out; /* standard output, a device or a FIFO: nothing to remove */
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
		struct out f = {.fd = o->out_fd};
		struct stat st;
		int m;
		if (o->out) {
			rc = out_check(o->out, &L, res);
			if (!rc)
				rc = out_open(&f, o->out, res);
			in_place = !rc && !f.tmp[0];
		} else if (fstat(o->out_fd, &st) == 0 && (m = input_member(&st, &L)) >= 0) {
			rc = refuse_input("the output", &L, m, res);
		}
		if (!rc)
			rc = packets ? nvt_export_packets(o, &L, &ix, f.fd, res)
			     : copy_range(o, &L, &ix, f.fd, NULL, res) ? -EIO
								       : 0;
		if (o->out && f.fd >= 0 && out_close(&f, !rc, res) && !rc)
			rc = -EIO;
		if (o->out && !rc)
			rc = out_commit(&f, res);
		if (o->out && !rc)
			snprintf(res->data_path, sizeof(res->data_path), "%s", o->out);
	} else if (!rc) {
		rc = export_sigmf(o, &L, &ix, &in_place, res);
	}
	nvt_index_clear(&ix);
	if (rc && nvt_interrupted(o->interrupt))
		interrupted(o, in_place, res);
	if (rc && !res->err.code)
		nvt_err_set(&res->err, EIO, "export failed");
	return rc;
}
