/* SPDX-License-Identifier: MIT */
/* Encoding, decoding and validation of the 4096-byte header block: nvtape version 2 (two
 * slots written alternately, so that a torn write costs at most one checkpoint), version 1
 * (one copy, read only) and the FPGA Drive Recorder v1 header (read everywhere, written byte
 * for byte on request). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "format/lifecycle.h"
#include "nvtape/format.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the on-disk format is little-endian and nvtape stores it directly: little-endian hosts only"
#endif

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap);
	memset(dst, 0, cap);
	memcpy(dst, src, n);
}

static void take_str(char *dst, size_t dst_cap, const char *src, size_t src_cap)
{
	size_t n = strnlen(src, src_cap);
	if (n >= dst_cap)
		n = dst_cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

void nvt_id_str(char *dst, size_t cap, const char *src, size_t n)
{
	take_str(dst, cap, src, n);
	for (n = strlen(dst); n && (dst[n - 1] == ' ' || dst[n - 1] == 0); n--)
		dst[n - 1] = 0;
}

void nvt_drive_from_id(struct nvt_drive *d, const struct nvt_drive_id *id)
{
	nvt_id_str(d->model, sizeof(d->model), id->model, sizeof(id->model));
	nvt_id_str(d->serial, sizeof(d->serial), id->serial, sizeof(id->serial));
	nvt_id_str(d->firmware, sizeof(d->firmware), id->firmware, sizeof(id->firmware));
	d->nsid = id->nsid;
	d->lba_bytes = id->lba_bytes;
	d->max_cmd_kib = id->max_cmd_kib;
}

void nvt_header_encode(const struct nvt_recording *rec, struct nvt_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, NVT_MAGIC, 8);
	h->version = NVT_FORMAT_VERSION;
	h->header_size = NVT_HEADER_SIZE;
	h->generation = rec->generation;
	h->beat_bytes = rec->beat_bytes;
	h->flags = rec->flags;
	h->source_kind = rec->source_kind;
	h->chunk_bytes = rec->chunk_bytes;
	h->chunk_count = rec->chunk_count;
	h->checkpoints = rec->checkpoints;
	h->rate_bps = rec->rate_bps;
	h->start_ns = rec->start_ns;
	h->stop_ns = rec->stop_ns;
	h->data_offset = NVT_HEADER_SIZE;
	h->data_bytes = rec->data_bytes;
	h->durable_bytes = rec->durable_bytes;
	h->drop_count = rec->drop_count;
	h->drop_events = rec->drop_events;
	h->first_seq = rec->first_seq;
	h->index_offset = rec->index_offset;
	h->index_bytes = rec->index_bytes;
	h->index_crc = rec->index_crc;
	h->duration_ns = rec->duration_ns;
	h->members = rec->members;
	h->stripe_bytes = rec->stripe_bytes;
	h->member_offset = rec->member_offset;
	h->io_path = rec->io_path;
	h->drive_count = rec->drive_count < NVT_MAX_DRIVES ? rec->drive_count : NVT_MAX_DRIVES;
	for (uint32_t i = 0; i < h->drive_count; i++) {
		const struct nvt_drive *d = &rec->drive[i];
		memset(h->drive[i].model, ' ', sizeof(h->drive[i].model));
		memset(h->drive[i].serial, ' ', sizeof(h->drive[i].serial));
		memset(h->drive[i].firmware, ' ', sizeof(h->drive[i].firmware));
		memcpy(h->drive[i].model, d->model, strnlen(d->model, sizeof(h->drive[i].model)));
		memcpy(h->drive[i].serial, d->serial,
		       strnlen(d->serial, sizeof(h->drive[i].serial)));
		memcpy(h->drive[i].firmware, d->firmware,
		       strnlen(d->firmware, sizeof(h->drive[i].firmware)));
		h->drive[i].nsid = d->nsid;
		h->drive[i].lba_bytes = d->lba_bytes;
		h->drive[i].max_cmd_kib = d->max_cmd_kib;
	}
	copy_str(h->hostname, sizeof(h->hostname), rec->hostname);
	copy_str(h->writer, sizeof(h->writer), rec->writer);
	copy_str(h->source_name, sizeof(h->source_name), rec->source_name);
	copy_str(h->check, sizeof(h->check), rec->check);
	h->header_crc = nvt_crc32c(0, h, offsetof(struct nvt_header, header_crc));
}

void nvt_header_block_encode(struct nvt_recording *rec, void *blk4096)
{
	struct nvt_header *slot = blk4096;

	/* a generation read from disk may be anything: past the limit the count starts again at 1,
	 * written to both slots so the reader cannot prefer the older copy */
	if (rec->generation >= NVT_GENERATION_MAX)
		rec->generation = 0;
	rec->generation++;
	nvt_header_encode(rec, &slot[rec->generation % 2]);
	if (rec->generation == 1)
		slot[0] = slot[1];
}

void fdrec_header_encode(const struct nvt_recording *rec, struct fdrec_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, FDREC_MAGIC, 8);
	h->header_version = 1;
	h->header_size = NVT_HEADER_SIZE;
	h->beat_bytes = NVT_BEAT_BYTES;
	h->flags = (nvt_source_kind_is_pattern(rec->source_kind) ? FDREC_FLAG_TPG : 0) |
		   ((rec->flags & NVT_FLAG_COMPLETE) ? FDREC_FLAG_COMPLETE : 0);
	h->rate_bps = rec->rate_bps;
	h->start_time_ns = rec->start_ns;
	h->stop_time_ns = rec->stop_ns;
	h->data_bytes = rec->data_bytes;
	h->drop_count = rec->drop_count;
	h->first_seq = rec->first_seq;
	copy_str(h->target, sizeof(h->target), rec->writer);
	copy_str(h->hostname, sizeof(h->hostname), rec->hostname);
}

static int decode_fdrec(const struct fdrec_header *h, struct nvt_recording *rec,
			struct nvt_err *err)
{
	if (h->header_version != 1 || h->header_size != NVT_HEADER_SIZE ||
	    h->beat_bytes != NVT_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "unsupported FPGA Drive Recorder header (version %u, size %u, beat %u; "
			    "nvtape reads version 1, 4096 bytes, 16-byte beats)",
			    h->header_version, h->header_size, h->beat_bytes);
		return -EPROTO;
	}
	rec->format = NVT_FMT_FDREC;
	rec->version = 1;
	rec->beat_bytes = NVT_BEAT_BYTES;
	rec->flags = (h->flags & FDREC_FLAG_COMPLETE) ? NVT_FLAG_COMPLETE : 0;
	rec->source_kind = (h->flags & FDREC_FLAG_TPG) ? NVT_SRC_TPG : NVT_SRC_UNKNOWN;
	rec->rate_bps = h->rate_bps;
	rec->start_ns = h->start_time_ns;
	rec->stop_ns = h->stop_time_ns;
	rec->data_offset = NVT_HEADER_SIZE;
	rec->data_bytes = h->data_bytes;
	rec->drop_count = h->drop_count;
	rec->first_seq = h->first_seq;
	take_str(rec->hostname, sizeof(rec->hostname), h->hostname, sizeof(h->hostname));
	take_str(rec->writer, sizeof(rec->writer), h->target, sizeof(h->target));
	return 0;
}

/* One version 2 slot: NULL when its magic, version or CRC is wrong. */
static const struct nvt_header *valid_slot(const struct nvt_header *h)
{
	if (memcmp(h->magic, NVT_MAGIC, 8) || h->version != NVT_FORMAT_VERSION ||
	    nvt_crc32c(0, h, offsetof(struct nvt_header, header_crc)) != h->header_crc)
		return NULL;
	return h;
}

/* The header to read: the newer valid slot of a version 2 block, or a valid version 1 header. */
static const struct nvt_header *pick_slot(const uint8_t *blk, bool *torn, struct nvt_err *err)
{
	const struct nvt_header *s0 = (const void *)blk, *s1 = s0 + 1;
	const struct nvt_header *a = valid_slot(s0), *b = valid_slot(s1);
	uint32_t crc, v1crc;

	*torn = !a != !b;
	if (a && b)
		return b->generation > a->generation ? b : a;
	if (a || b)
		return a ? a : b;
	if (s0->version == 1) {
		memcpy(&v1crc, blk + NVT_HEADER_V1_CRC_OFF, sizeof(v1crc));
		crc = nvt_crc32c(0, blk, NVT_HEADER_V1_CRC_OFF);
		if (crc == v1crc)
			return s0; /* the same fields at the same offsets; reserved zeros after */
		nvt_err_set(err, EPROTO,
			    "header CRC mismatch (version 1: stored 0x%08x, computed 0x%08x): the "
			    "header is damaged; nothing in it can be trusted",
			    v1crc, crc);
		return NULL;
	}
	if (s0->version != NVT_FORMAT_VERSION && s1->version != NVT_FORMAT_VERSION &&
	    !memcmp(s0->magic, NVT_MAGIC, 8))
		nvt_err_set(err, EPROTO,
			    "unsupported nvtape header version %u: this nvtape reads versions 1 "
			    "and %u",
			    s0->version, NVT_FORMAT_VERSION);
	else
		nvt_err_set(err, EPROTO,
			    "both copies of the header are damaged (CRC mismatch in the slots at 0 "
			    "and 2048): nothing in them can be trusted");
	return NULL;
}

int nvt_header_decode(const void *buf, size_t len, struct nvt_recording *rec, struct nvt_err *err)
{
	const struct nvt_header *h = buf;
	bool torn;

	memset(rec, 0, sizeof(*rec));
	if (len < 8 || (memcmp(h->magic, NVT_MAGIC, 8) && memcmp(h->magic, FDREC_MAGIC, 8))) {
		nvt_err_set(err, EPROTO,
			    "not a recording: bad magic (expected \"NVTAPE\" or an FPGA Drive "
			    "Recorder \"FDREC\" header at offset 0)");
		return -EPROTO;
	}
	if (len < NVT_HEADER_SIZE) {
		nvt_err_set(err, EPROTO, "truncated header: %zu of %u bytes (file cut short?)", len,
			    NVT_HEADER_SIZE);
		return -EPROTO;
	}
	if (memcmp(h->magic, FDREC_MAGIC, 8) == 0)
		return decode_fdrec(buf, rec, err);
	h = pick_slot(buf, &torn, err);
	if (!h)
		return -EPROTO;
	if (h->header_size != NVT_HEADER_SIZE || h->data_offset != NVT_HEADER_SIZE ||
	    h->beat_bytes == 0 || h->beat_bytes > 4096) {
		nvt_err_set(err, EPROTO,
			    "unsupported nvtape header (version %u, header %u bytes, data at %llu, "
			    "beat %u bytes): this nvtape reads 4096-byte headers, data at 4096, "
			    "beats of 1 to 4096 bytes",
			    h->version, h->header_size, (unsigned long long)h->data_offset,
			    h->beat_bytes);
		return -EPROTO;
	}
	rec->format = NVT_FMT_NVTAPE;
	rec->version = h->version;
	rec->generation = h->version == 1 ? 0 : h->generation;
	rec->header_torn = torn;
	rec->beat_bytes = h->beat_bytes;
	rec->flags = h->flags;
	rec->source_kind = h->source_kind;
	rec->chunk_bytes = h->chunk_bytes;
	rec->chunk_count = h->chunk_count;
	rec->checkpoints = h->checkpoints;
	rec->rate_bps = h->rate_bps;
	rec->start_ns = h->start_ns;
	rec->stop_ns = h->stop_ns;
	rec->duration_ns = h->duration_ns;
	rec->data_offset = h->data_offset;
	rec->data_bytes = h->data_bytes;
	rec->durable_bytes = h->durable_bytes;
	rec->drop_count = h->drop_count;
	rec->drop_events = h->drop_events;
	rec->first_seq = h->first_seq;
	rec->index_offset = h->index_offset;
	rec->index_bytes = h->index_bytes;
	rec->index_crc = h->index_crc;
	rec->members = h->members;
	rec->stripe_bytes = h->stripe_bytes;
	rec->member_offset = h->member_offset;
	rec->io_path = h->io_path;
	rec->drive_count = h->drive_count < NVT_MAX_DRIVES ? h->drive_count : NVT_MAX_DRIVES;
	for (uint32_t i = 0; i < rec->drive_count; i++)
		nvt_drive_from_id(&rec->drive[i], &h->drive[i]);
	take_str(rec->hostname, sizeof(rec->hostname), h->hostname, sizeof(h->hostname));
	take_str(rec->writer, sizeof(rec->writer), h->writer, sizeof(h->writer));
	take_str(rec->source_name, sizeof(rec->source_name), h->source_name,
		 sizeof(h->source_name));
	take_str(rec->check, sizeof(rec->check), h->check, sizeof(h->check));
	return 0;
}
