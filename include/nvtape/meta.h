/* SPDX-License-Identifier: MIT */
/* What a recording's data is: metadata as "key=value" lines, kept in the index (record type 3,
 * docs/file-format.md). Keys use SigMF's names where SigMF has one (core:sample_rate,
 * core:datatype, core:frequency, core:num_channels, core:description, core:author); any other
 * key is free. nvt_meta_write() changes them on a finished recording without touching its
 * data. */
#ifndef NVTAPE_META_H
#define NVTAPE_META_H

#include <stddef.h>

#include "layout.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A key: 1-64 characters of [A-Za-z0-9_:-]. */
NVT_API int nvt_meta_key_ok(const char *key, size_t len);
/* text is well-formed: UTF-8, "key=value" lines (values without newlines), NVT_META_MAX bytes
 * at most, and SigMF's numeric keys hold values that can be real (core:sample_rate a decimal
 * number above 0, core:num_channels 1 to 65536, core:frequency a finite decimal number,
 * core:datatype a SigMF type). 0, or -EINVAL with err naming the line. */
NVT_API int nvt_meta_check(const char *text, struct nvt_err *err);
/* The next "key=value" line of text: start with *pos = text; 1 with *key (klen bytes) and
 * *value (vlen bytes) pointing into text, 0 at the end. Lines without '=' are skipped. */
NVT_API int nvt_meta_next(const char **pos, const char **key, size_t *klen, const char **value,
			  size_t *vlen);
/* The value of key in text into buf (cap bytes, NUL-terminated): its length, -ENOENT when the
 * key is absent, -ENOSPC when buf is too small. */
NVT_API int nvt_meta_get(const char *text, const char *key, char *buf, size_t cap);
/* text with key set to value (value "" removes it): a new malloc'ed text, NULL without memory
 * or for a bad key or value. */
NVT_API char *nvt_meta_set(const char *text, const char *key, const char *value);
/* A SigMF datatype name (ci16_le, cf32_le, ri8, cu8, ...): 1 when valid. */
NVT_API int nvt_meta_datatype_ok(const char *name);

/* The metadata of a recording (path, or several members in layout as the readers take them):
 * *text malloc'ed ("" when it has none). 0 or -errno with err set. */
NVT_API int nvt_meta_read(const struct nvt_layout *layout, const char *path, char **text,
			  struct nvt_err *err);
/* Replace the metadata of a complete nvtape recording by text. The index is rewritten through
 * interrupted states only (a crash at any moment leaves a recording that opens, its data and
 * index whole: at worst interrupted, and `nvtape recover` finalizes it), the data is not
 * touched. 0 or -errno with err set. */
NVT_API int nvt_meta_write(const struct nvt_layout *layout, const char *path, const char *text,
			   struct nvt_err *err);

#ifdef __cplusplus
}
#endif

#endif
