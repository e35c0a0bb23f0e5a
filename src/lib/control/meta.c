/* SPDX-License-Identifier: MIT */
/* Metadata: "key=value" lines that say what a recording's data is, kept in the index. Checked
 * (UTF-8, keys, size) before a recorder stores them; read and replaced later on a finished
 * recording by rewriting its index through states that are each a valid recording, so that a
 * crash in the middle never costs the data or its index. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "control/export_int.h"
#include "control/members.h"
#include "format/index.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "storage/layout_io.h"

int nvt_meta_key_ok(const char *key, size_t len)
{
	if (!len || len > 64)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == ':' || c == '-'))
			return 0;
	}
	return 1;
}

/* n bytes of valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF) */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], k, cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			k = 1;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i <= k)
			return false;
		for (unsigned j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

/* A decimal number as SigMF's numeric fields take it: [-]digits[.digits][e[+-]digits] (no hex,
 * no inf or nan, nothing after it); *v its value. */
static bool decimal(const char *s, size_t n, double *v)
{
	char buf[64], *end;

	if (!n || n >= sizeof(buf) || strspn(s, "0123456789.eE+-") < n ||
	    !((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '.'))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*v = strtod(buf, &end);
	return *end == 0 && end != buf && errno == 0 && isfinite(*v);
}

/* vn bytes at v name a SigMF datatype (dt: a buffer of cap bytes for it) */
static bool datatype(const char *v, size_t vn, char *dt, size_t cap)
{
	if (vn >= cap)
		return false;
	memcpy(dt, v, vn);
	dt[vn] = 0;
	return nvt_meta_datatype_ok(dt);
}

/* The SigMF keys with a number for a value hold one that can be real: a sample rate above 0, 1 to
 * 65536 channels, a finite frequency; a datatype SigMF names. 0, or -EINVAL with err set. */
static int meta_value_ok(const char *key, size_t kn, const char *v, size_t vn, size_t line,
			 struct nvt_err *err)
{
	double d;
	char dt[16];

#define IS(k) (kn == sizeof(k) - 1 && !memcmp(key, k, kn))
	if (IS("core:sample_rate") && !(decimal(v, vn, &d) && d > 0))
		nvt_err_param(err,
			      "metadata line %zu: core:sample_rate=%.*s: samples per second, a "
			      "decimal number above 0 (2400000, 2.4e6)",
			      line, (int)(vn > 40 ? 40 : vn), v);
	else if (IS("core:num_channels") &&
		 !(decimal(v, vn, &d) && d >= 1 && d <= 65536 && d == (double)(uint32_t)d))
		nvt_err_param(err,
			      "metadata line %zu: core:num_channels=%.*s: a whole number of "
			      "channels from 1 to 65536",
			      line, (int)(vn > 40 ? 40 : vn), v);
	else if (IS("core:frequency") && !decimal(v, vn, &d))
		nvt_err_param(
			err,
			"metadata line %zu: core:frequency=%.*s: a frequency in Hz, a decimal "
			"number (433.92e6)",
			line, (int)(vn > 40 ? 40 : vn), v);
	else if (IS("core:datatype") && !datatype(v, vn, dt, sizeof(dt)))
		nvt_err_param(
			err,
			"metadata line %zu: core:datatype=%.*s: a SigMF type (ci16_le, cf32_le, "
			"ri8, cu8, ...)",
			line, (int)(vn > 40 ? 40 : vn), v);
	else
		return 0;
#undef IS
	return -EINVAL;
}

int nvt_meta_check(const char *text, struct nvt_err *err)
{
	size_t n = text ? strlen(text) : 0, line = 1;

	if (n > NVT_META_MAX) {
		nvt_err_param(err, "metadata of %zu bytes: at most %u are kept", n, NVT_META_MAX);
		return -EINVAL;
	}
	if (!utf8_ok((const unsigned char *)text, n)) {
		nvt_err_param(err, "metadata must be UTF-8 text");
		return -EINVAL;
	}
	for (const char *p = text; p && *p; line++) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		if (end > p && (!eq || !nvt_meta_key_ok(p, (size_t)(eq - p)))) {
			nvt_err_param(err,
				      "metadata line %zu is not KEY=VALUE with a key of 1-64 "
				      "characters [A-Za-z0-9_:-]",
				      line);
			return -EINVAL;
		}
		if (end > p &&
		    meta_value_ok(p, (size_t)(eq - p), eq + 1, (size_t)(end - eq - 1), line, err))
			return -EINVAL;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int nvt_meta_next(const char **pos, const char **key, size_t *klen, const char **value,
		  size_t *vlen)
{
	for (const char *p = *pos; p && *p;) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		*pos = nl ? nl + 1 : end;
		if (eq) {
			*key = p;
			*klen = (size_t)(eq - p);
			*value = eq + 1;
			*vlen = (size_t)(end - eq - 1);
			return 1;
		}
		p = *pos;
	}
	return 0;
}

/* The line of key in text: its start and the start of its value; NULL when absent. */
static const char *find(const char *text, const char *key, const char **value)
{
	const char *pos = text, *k, *v;
	size_t kn = strlen(key), klen, vlen;

	while (nvt_meta_next(&pos, &k, &klen, &v, &vlen))
		if (klen == kn && !memcmp(k, key, kn)) {
			*value = v;
			return k;
		}
	return NULL;
}

int nvt_meta_get(const char *text, const char *key, char *buf, size_t cap)
{
	const char *v, *line = find(text, key, &v);
	size_t n;

	if (!line)
		return -ENOENT;
	n = strcspn(v, "\n");
	if (n >= cap)
		return -ENOSPC;
	memcpy(buf, v, n);
	buf[n] = 0;
	return (int)n;
}

char *nvt_meta_set(const char *text, const char *key, const char *value)
{
	size_t tn = text ? strlen(text) : 0, kn = strlen(key), vn = strlen(value);
	char *out, *o;

	if (!nvt_meta_key_ok(key, kn) || strchr(value, '\n') ||
	    !utf8_ok((const unsigned char *)value, vn))
		return NULL;
	/* the text, a newline its last line may lack, KEY=VALUE and its newline, the NUL */
	out = o = malloc(tn + 1 + kn + vn + 2 + 1);
	if (!out)
		return NULL;
	for (const char *p = text; p && *p;) { /* every other line as it is */
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		if (end > p && !(!strncmp(p, key, kn) && p[kn] == '=')) {
			memcpy(o, p, (size_t)(end - p));
			o += end - p;
			*o++ = '\n';
		}
		p = nl ? nl + 1 : end;
	}
	if (vn) {
		memcpy(o, key, kn);
		o += kn;
		*o++ = '=';
		memcpy(o, value, vn);
		o += vn;
		*o++ = '\n';
	}
	*o = 0;
	return out;
}

int nvt_meta_datatype_ok(const char *name)
{
	static const char *const multi[] = {"f64", "f32", "i32", "i16", "u32", "u16"};

	if (!name || (name[0] != 'r' && name[0] != 'c'))
		return 0;
	if (!strcmp(name + 1, "i8") || !strcmp(name + 1, "u8"))
		return 1;
	for (size_t i = 0; i < sizeof(multi) / sizeof(multi[0]); i++)
		if (!strncmp(name + 1, multi[i], 3) &&
		    (!strcmp(name + 4, "_le") || !strcmp(name + 4, "_be")))
			return 1;
	return 0;
}

int nvt_meta_read(const struct nvt_layout *layout, const char *path, char **text,
		  struct nvt_err *err)
{
	struct nvt_layout L;
	struct nvt_recording rec;
	struct nvt_index ix;
	int rc;

	*text = NULL;
	nvt_layout_resolve(layout, path, &L);
	rc = nvt_recording_open(&L, &rec, err);
	if (!rc && rec.format == NVT_FMT_NVTAPE)
		rc = nvt_recording_read_index_all(&L, &rec, &ix, err);
	else
		memset(&ix, 0, sizeof(ix));
	if (rc)
		return -(err->code ? err->code : EIO);
	*text = ix.meta ? ix.meta : strdup("");
	ix.meta = NULL;
	nvt_index_clear(&ix);
	if (!*text) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The header, rec's fields with this index. */
static int header(const struct nvt_layout *L, const int *fd, struct nvt_recording *rec,
		  uint64_t off, uint64_t bytes, uint32_t crc, struct nvt_err *err)
{
	rec->index_offset = off;
	rec->index_bytes = bytes;
	rec->index_crc = crc;
	if (nvt_members_write_header(L, fd, rec, err) || nvt_members_sync(L, fd, err))
		return -1;
	return 0;
}

/* The index (buf, len bytes of which used count) written at off and made durable. */
static int put(const struct nvt_layout *L, const int *fd, const void *buf, uint64_t len,
	       uint64_t off, struct nvt_err *err)
{
	if (nvt_members_write(L, fd, buf, len, off, err) || nvt_members_sync(L, fd, err))
		return -1;
	return 0;
}

/* The new index goes first after the old one (a header that is not yet complete points at it),
 * then to its place after the data, then the file is cut and the header is complete again. */
static int rewrite(const struct nvt_layout *L, const int *fd, struct nvt_recording *rec,
		   const void *buf, uint64_t padded, uint64_t used, uint32_t crc, uint64_t unit,
		   struct nvt_err *err)
{
	struct nvt_recording mid = *rec;
	uint64_t at = (rec->data_offset + rec->data_bytes + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK;

	nvt_index_pad(unit, buf, padded, at - rec->data_offset, &used, &crc);
	uint64_t old_end = rec->index_bytes ? rec->index_offset + rec->index_bytes : 0;
	uint64_t aside = (old_end > at ? old_end : at) + NVT_BLOCK - 1;

	aside -= aside % NVT_BLOCK;
	mid.flags &= ~NVT_FLAG_COMPLETE;
	mid.durable_bytes = mid.data_bytes; /* all of it was durable */
	if (header(L, fd, &mid, rec->index_offset, rec->index_bytes, rec->index_crc, err) ||
	    put(L, fd, buf, padded, aside, err) || header(L, fd, &mid, aside, used, crc, err))
		return -1;
	if (aside != at &&
	    (put(L, fd, buf, padded, at, err) || header(L, fd, &mid, at, used, crc, err)))
		return -1;
	if (nvt_members_truncate(L, fd, at + used, err) || nvt_members_sync(L, fd, err))
		return -1;
	rec->generation = mid.generation;
	rec->version = mid.version;
	return header(L, fd, rec, at, used, crc, err);
}

int nvt_meta_write(const struct nvt_layout *layout, const char *path, const char *text,
		   struct nvt_err *err)
{
	int held[NVT_MAX_MEMBERS], fd[NVT_MAX_MEMBERS];
	struct nvt_recording rec;
	struct nvt_index ix = {0};
	struct nvt_layout L;
	void *buf = NULL;
	uint64_t used, padded;
	uint32_t crc;
	int rc = -1;

	if (nvt_meta_check(text, err))
		return -EINVAL;
	nvt_layout_resolve(layout, path, &L);
	if (nvt_members_claim(&L, held, "edit its metadata", err))
		return -(err->code ? err->code : EIO);
	if (nvt_recording_open(&L, &rec, err))
		goto out;
	if (rec.format != NVT_FMT_NVTAPE || !rec.complete) {
		nvt_err_set(
			err, EINVAL,
			rec.format != NVT_FMT_NVTAPE
				? "an FPGA Drive Recorder v1 file has no index to keep metadata "
				  "in: copy it into an nvtape recording first"
				: "an interrupted recording: run nvtape recover first, then edit "
				  "its metadata");
		goto out;
	}
	if (nvt_recording_read_index_all(&L, &rec, &ix, err))
		goto out;
	free(ix.meta);
	ix.meta = strdup(text);
	ix.meta_len = strlen(text);
	ix.pad_unit = nvt_sigmf_meta_sample_bytes(text);
	padded = nvt_index_bytes(&ix);
	buf = ix.meta ? aligned_alloc(NVT_BLOCK, padded) : NULL;
	if (!buf) {
		nvt_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	if (nvt_index_build(&ix, buf, padded, &used, &crc) < 0 ||
	    nvt_layout_open(&L, O_RDWR, fd, err))
		goto out;
	rc = rewrite(&L, fd, &rec, buf, padded, used, crc, ix.pad_unit, err);
	nvt_layout_close(&L, fd);
out:
	free(buf);
	nvt_index_clear(&ix);
	nvt_layout_close(&L, held);
	if (rc && !err->code)
		nvt_err_set(err, EIO, "the metadata could not be written");
	return rc ? -(err->code ? err->code : EIO) : 0;
}
