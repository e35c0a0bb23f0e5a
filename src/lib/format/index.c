/* SPDX-License-Identifier: MIT */
/* The index after the data: a small header and typed records (drop events, chunk checksums,
 * chunk times, metadata text);
 * readers skip record types they do not know, and entries may grow. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/index.h"
#include "nvtape/format.h"

uint64_t nvt_index_size(uint64_t nev, uint64_t ncrc, uint64_t meta_len)
{
	uint64_t used = sizeof(struct nvt_index_header) + sizeof(struct nvt_index_record) +
			nev * sizeof(struct nvt_drop_event);

	if (ncrc) /* the spans' checksums, and their times */
		used += 2 * sizeof(struct nvt_index_record) +
			ncrc * (sizeof(struct nvt_chunk_crc) + sizeof(struct nvt_chunk_time));
	if (meta_len)
		used += sizeof(struct nvt_index_record) + meta_len;
	return (used + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK;
}

uint64_t nvt_index_bytes(const struct nvt_index *ix)
{
	uint64_t n = ix->ncrc > ix->ntm ? ix->ncrc : ix->ntm;
	uint64_t b = nvt_index_size(ix->nev, n, ix->meta ? ix->meta_len : 0);

	if (ix->pad_unit > 1) /* room for nvt_index_pad's zeros */
		b += (ix->pad_unit - 1 + NVT_BLOCK - 1) / NVT_BLOCK * NVT_BLOCK;
	return b;
}

void nvt_index_pad(uint64_t unit, const void *buf, uint64_t cap, uint64_t rel, uint64_t *used,
		   uint32_t *crc)
{
	uint64_t pad;

	if (unit <= 1)
		return;
	pad = (unit - (rel % unit + *used % unit) % unit) % unit;
	if (pad > cap - *used) /* a buffer not from nvt_index_bytes: left as it is */
		return;
	*crc = nvt_crc32c(*crc, (const uint8_t *)buf + *used, pad);
	*used += pad;
}

static uint8_t *put_record(uint8_t *p, uint32_t type, uint32_t entry, const void *e, uint64_t n)
{
	struct nvt_index_record r = {
		.type = type, .entry_bytes = entry, .payload_bytes = n * entry};

	memcpy(p, &r, sizeof(r));
	p += sizeof(r);
	if (n)
		memcpy(p, e, n * entry);
	return p + n * entry;
}

long nvt_index_build(const struct nvt_index *ix, void *buf, size_t cap, uint64_t *used,
		     uint32_t *crc)
{
	struct nvt_index_header ih;
	uint64_t padded = nvt_index_bytes(ix);
	uint8_t *p = buf;

	if (padded > cap)
		return -ENOSPC;
	memset(buf, 0, padded);
	memcpy(ih.magic, NVT_INDEX_MAGIC, 8);
	ih.version = NVT_INDEX_VERSION;
	ih.record_count = 1 + !!ix->ncrc + !!ix->ntm + !!(ix->meta && ix->meta_len);
	memcpy(p, &ih, sizeof(ih));
	p = put_record(p + sizeof(ih), NVT_IDX_DROPS, sizeof(struct nvt_drop_event), ix->ev,
		       ix->nev);
	if (ix->ncrc)
		p = put_record(p, NVT_IDX_CHUNK_CRC, sizeof(struct nvt_chunk_crc), ix->crc,
			       ix->ncrc);
	if (ix->ntm)
		p = put_record(p, NVT_IDX_CHUNK_TIME, sizeof(struct nvt_chunk_time), ix->tm,
			       ix->ntm);
	if (ix->meta && ix->meta_len)
		p = put_record(p, NVT_IDX_META, 1, ix->meta, ix->meta_len);
	*used = (uint64_t)(p - (uint8_t *)buf);
	*crc = nvt_crc32c(0, buf, *used);
	return (long)padded;
}

long nvt_index_encode(const struct nvt_drop_event *ev, uint64_t n, void *buf, size_t cap,
		      uint64_t *used_bytes, uint32_t *crc)
{
	struct nvt_index ix = {.ev = (struct nvt_drop_event *)ev, .nev = n};
	return nvt_index_build(&ix, buf, cap, used_bytes, crc);
}

void nvt_index_clear(struct nvt_index *ix)
{
	free(ix->ev);
	free(ix->crc);
	free(ix->tm);
	free(ix->meta);
	memset(ix, 0, sizeof(*ix));
}

/* The entries of one record into a malloc'ed array of n structs of size sz (the first sz bytes
 * of each entry). */
static void *entries(const uint8_t *p, const struct nvt_index_record *r, size_t sz, uint64_t *n,
		     struct nvt_err *err)
{
	uint64_t k = r->payload_bytes / r->entry_bytes;
	uint8_t *a = calloc(k ? k : 1, sz);

	if (!a) {
		nvt_err_set(err, ENOMEM, "out of memory reading %llu index entries",
			    (unsigned long long)k);
		return NULL;
	}
	for (uint64_t i = 0; i < k; i++)
		memcpy(a + i * sz, p + i * r->entry_bytes, sz);
	*n = k;
	return a;
}

int nvt_index_parse(const void *buf, size_t len, struct nvt_index *ix, struct nvt_err *err)
{
	const uint8_t *p = buf;
	struct nvt_index_header ih;
	size_t pos = sizeof(ih);

	memset(ix, 0, sizeof(*ix));
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
		void *a = NULL;
		uint64_t n = 0;
		if (len - pos < sizeof(r)) {
			nvt_err_set(err, EPROTO, "index record %u runs past the index end", i);
			goto bad;
		}
		memcpy(&r, p + pos, sizeof(r));
		pos += sizeof(r);
		if (r.payload_bytes > len - pos) {
			nvt_err_set(err, EPROTO, "index record %u (%llu bytes) runs past the index",
				    i, (unsigned long long)r.payload_bytes);
			goto bad;
		}
		if (r.type == NVT_IDX_DROPS && r.entry_bytes >= sizeof(struct nvt_drop_event)) {
			if (!(a = entries(p + pos, &r, sizeof(struct nvt_drop_event), &n, err)))
				goto bad;
			free(ix->ev);
			ix->ev = a;
			ix->nev = n;
		} else if (r.type == NVT_IDX_CHUNK_CRC &&
			   r.entry_bytes >= sizeof(struct nvt_chunk_crc)) {
			if (!(a = entries(p + pos, &r, sizeof(struct nvt_chunk_crc), &n, err)))
				goto bad;
			free(ix->crc);
			ix->crc = a;
			ix->ncrc = n;
		} else if (r.type == NVT_IDX_CHUNK_TIME &&
			   r.entry_bytes >= sizeof(struct nvt_chunk_time)) {
			if (!(a = entries(p + pos, &r, sizeof(struct nvt_chunk_time), &n, err)))
				goto bad;
			free(ix->tm);
			ix->tm = a;
			ix->ntm = n;
		} else if (r.type == NVT_IDX_META && r.entry_bytes == 1 &&
			   r.payload_bytes <= NVT_META_MAX) {
			char *m = malloc(r.payload_bytes + 1);
			if (!m) {
				nvt_err_set(err, ENOMEM, "out of memory reading the metadata");
				goto bad;
			}
			memcpy(m, p + pos, r.payload_bytes);
			m[r.payload_bytes] = 0;
			free(ix->meta);
			ix->meta = m;
			ix->meta_len = strnlen(m, r.payload_bytes);
		}
		pos += r.payload_bytes;
	}
	return 0;
bad: /* a failed decode returns nothing */
	nvt_index_clear(ix);
	return err->code == ENOMEM ? -ENOMEM : -EPROTO;
}

int nvt_index_decode(const void *buf, size_t len, struct nvt_drop_event **evp, uint64_t *np,
		     struct nvt_err *err)
{
	struct nvt_index ix;
	int rc = nvt_index_parse(buf, len, &ix, err);

	*evp = ix.ev;
	*np = ix.nev;
	ix.ev = NULL;
	nvt_index_clear(&ix); /* the other records */
	return rc;
}
