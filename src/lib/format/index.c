/* SPDX-License-Identifier: MIT */
/* The index after the data: a small header and typed records (drop events today); readers
 * skip record types they do not know, and entries may grow. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/format.h"

long nvt_index_encode(const struct nvt_drop_event *ev, uint64_t n, void *buf, size_t cap,
		      uint64_t *used_bytes, uint32_t *crc)
{
	struct nvt_index_header ih;
	struct nvt_index_record r;
	uint64_t used = sizeof(ih) + sizeof(r) + n * sizeof(*ev);
	uint64_t padded = (used + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK;
	uint8_t *p = buf;

	if (padded > cap)
		return -ENOSPC;
	memset(buf, 0, padded);
	memcpy(ih.magic, NVT_INDEX_MAGIC, 8);
	ih.version = NVT_INDEX_VERSION;
	ih.record_count = 1;
	r.type = NVT_IDX_DROPS;
	r.entry_bytes = sizeof(*ev);
	r.payload_bytes = n * sizeof(*ev);
	memcpy(p, &ih, sizeof(ih));
	memcpy(p + sizeof(ih), &r, sizeof(r));
	if (n)
		memcpy(p + sizeof(ih) + sizeof(r), ev, n * sizeof(*ev));
	*used_bytes = used;
	*crc = nvt_crc32c(0, buf, used);
	return (long)padded;
}

/* A failed decode returns nothing: what an earlier record produced is freed. */
static int drop_result(struct nvt_drop_event **evp, uint64_t *np, int rc)
{
	free(*evp);
	*evp = NULL;
	*np = 0;
	return rc;
}

int nvt_index_decode(const void *buf, size_t len, struct nvt_drop_event **evp, uint64_t *np,
		     struct nvt_err *err)
{
	const uint8_t *p = buf;
	struct nvt_index_header ih;
	size_t pos = sizeof(ih);

	*evp = NULL;
	*np = 0;
	if (len < sizeof(ih)) {
		nvt_err_set(err, EPROTO, "index too short (%zu bytes)", len);
		return -EPROTO;
	}
	memcpy(&ih, p, sizeof(ih));
	if (memcmp(ih.magic, NVT_INDEX_MAGIC, 8)) {
		nvt_err_set(err, EPROTO, "index has a bad magic: the index area is damaged");
		return -EPROTO;
	}
	for (uint32_t i = 0; i < ih.record_count; i++) {
		struct nvt_index_record r;
		if (len - pos < sizeof(r)) {
			nvt_err_set(err, EPROTO, "index record %u runs past the index end", i);
			return drop_result(evp, np, -EPROTO);
		}
		memcpy(&r, p + pos, sizeof(r));
		pos += sizeof(r);
		if (r.payload_bytes > len - pos) {
			nvt_err_set(err, EPROTO, "index record %u (%llu bytes) runs past the index",
				    i, (unsigned long long)r.payload_bytes);
			return drop_result(evp, np, -EPROTO);
		}
		if (r.type == NVT_IDX_DROPS && r.entry_bytes >= sizeof(struct nvt_drop_event)) {
			uint64_t n = r.payload_bytes / r.entry_bytes;
			struct nvt_drop_event *ev = calloc(n ? n : 1, sizeof(*ev));
			if (!ev) {
				nvt_err_set(err, ENOMEM, "out of memory reading %llu drop events",
					    (unsigned long long)n);
				return drop_result(evp, np, -ENOMEM);
			}
			for (uint64_t k = 0; k < n; k++)
				memcpy(&ev[k], p + pos + k * r.entry_bytes, sizeof(*ev));
			free(*evp);
			*evp = ev;
			*np = n;
		}
		pos += r.payload_bytes;
	}
	return 0;
}
