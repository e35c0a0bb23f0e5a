/* SPDX-License-Identifier: MIT */
/* Encoding, decoding and validation of the recording header and index (nvtape v1 and
 * FPGA Drive Recorder v1), and opening a recording for reading. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "nvtape/layout.h"
#include "util/sysutil.h"

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
	h->header_crc = nvt_crc32c(0, h, offsetof(struct nvt_header, header_crc));
}

void fdrec_header_encode(const struct nvt_recording *rec, struct fdrec_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, FDREC_MAGIC, 8);
	h->header_version = 1;
	h->header_size = NVT_HEADER_SIZE;
	h->beat_bytes = NVT_BEAT_BYTES;
	h->flags = (rec->source_kind == NVT_SRC_TPG ? FDREC_FLAG_TPG : 0) |
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

int nvt_header_decode(const void *buf, size_t len, struct nvt_recording *rec, struct nvt_err *err)
{
	const struct nvt_header *h = buf;
	uint32_t crc;

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
	crc = nvt_crc32c(0, h, offsetof(struct nvt_header, header_crc));
	if (crc != h->header_crc) {
		nvt_err_set(err, EPROTO,
			    "header CRC mismatch (stored 0x%08x, computed 0x%08x): the header is "
			    "damaged; nothing in it can be trusted",
			    h->header_crc, crc);
		return -EPROTO;
	}
	if (h->version != NVT_FORMAT_VERSION || h->header_size != NVT_HEADER_SIZE ||
	    h->data_offset != NVT_HEADER_SIZE || h->beat_bytes == 0 || h->beat_bytes > 4096) {
		nvt_err_set(err, EPROTO,
			    "unsupported nvtape header (version %u, header %u bytes, data at %llu, "
			    "beat %u bytes): this nvtape reads version %u",
			    h->version, h->header_size, (unsigned long long)h->data_offset,
			    h->beat_bytes, NVT_FORMAT_VERSION);
		return -EPROTO;
	}
	rec->format = NVT_FMT_NVTAPE;
	rec->version = h->version;
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
	return 0;
}

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
			return -EPROTO;
		}
		memcpy(&r, p + pos, sizeof(r));
		pos += sizeof(r);
		if (r.payload_bytes > len - pos) {
			nvt_err_set(err, EPROTO, "index record %u (%llu bytes) runs past the index",
				    i, (unsigned long long)r.payload_bytes);
			return -EPROTO;
		}
		if (r.type == NVT_IDX_DROPS && r.entry_bytes >= sizeof(struct nvt_drop_event)) {
			uint64_t n = r.payload_bytes / r.entry_bytes;
			struct nvt_drop_event *ev = calloc(n ? n : 1, sizeof(*ev));
			if (!ev) {
				nvt_err_set(err, ENOMEM, "out of memory reading %llu drop events",
					    (unsigned long long)n);
				return -ENOMEM;
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

const char *nvt_source_kind_name(uint32_t kind)
{
	switch (kind) {
	case NVT_SRC_TPG:
		return "tpg";
	case NVT_SRC_STDIN:
		return "stdin";
	default:
		return "unknown";
	}
}

/* A complete recording must fill exactly what its header accounts for: every member file holds
 * its share of [0, end); a device at least that much. */
static int check_extent(const struct nvt_layout *l, const int *fd, const struct nvt_recording *rec,
			uint64_t end, const char *name, struct nvt_err *err)
{
	for (unsigned m = 0; m < l->n; m++) {
		uint64_t have = 0, want = l->member_offset + nvt_layout_share(l, m, end);
		struct nvt_err serr = {0};
		if (nvt_fd_size(fd[m], &have, &serr))
			continue;
		if (have < want) {
			nvt_err_set(
				err, EPROTO,
				"%s: %s holds %llu bytes but the header says %llu: the file was "
				"truncated or copied incompletely",
				name, l->path[m], (unsigned long long)have,
				(unsigned long long)want);
			return -EPROTO;
		}
		if (have > want && rec->format == NVT_FMT_NVTAPE && !nvt_is_blockdev(fd[m])) {
			nvt_err_set(
				err, EPROTO,
				"%s: %s holds %llu bytes, the header accounts for %llu: the file "
				"was appended to or the header is stale",
				name, l->path[m], (unsigned long long)have,
				(unsigned long long)want);
			return -EPROTO;
		}
	}
	return 0;
}

int nvt_recording_open(const struct nvt_layout *l, struct nvt_recording *rec, struct nvt_err *err)
{
	int fd[NVT_MAX_MEMBERS];
	uint8_t *buf;
	uint64_t size, hl;
	bool blockdev;
	char name[512];
	struct nvt_err serr = {0};
	int rc = -1;

	nvt_layout_name(l, name, sizeof(name));
	if (nvt_layout_check(l, err))
		return -1;
	/* O_NONBLOCK: a FIFO given by mistake must not hang us */
	if (nvt_layout_open(l, O_RDONLY | O_NONBLOCK, fd, err))
		return -1;
	buf = calloc(1, NVT_HEADER_SIZE);
	if (!buf) {
		nvt_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	if (nvt_layout_size(l, fd, &size, &blockdev, &serr)) {
		nvt_err_set(err, serr.code, "%s", serr.msg);
		goto out;
	}
	hl = size < NVT_HEADER_SIZE ? size : NVT_HEADER_SIZE;
	if (hl && nvt_layout_pread(l, fd, buf, hl, 0)) {
		nvt_err_set(err, EIO, "cannot read the header of %s", name);
		goto out;
	}
	if (nvt_header_decode(buf, (size_t)hl, rec, err))
		goto out;
	rec->file_bytes = size;
	rec->complete = (rec->flags & NVT_FLAG_COMPLETE) != 0;
	/* a stripe read through md (or any assembled image) is one device holding it all; one
	 * member alone is too short for what its header describes */
	bool assembled =
		l->n == 1 && rec->members > 1 &&
		size >= rec->data_offset + (rec->complete ? rec->data_bytes : rec->durable_bytes);
	if ((rec->members > 1 || l->n > 1) && !assembled &&
	    (rec->members != l->n || rec->stripe_bytes != l->stripe ||
	     rec->member_offset != l->member_offset)) {
		if (rec->members > 1)
			nvt_err_set(
				err, EINVAL,
				"%s: the recording is striped over %u members with %llu KiB "
				"chunks, %llu bytes into each: give all %u members with --stripe "
				"%lluK --member-offset %llu",
				name, rec->members, (unsigned long long)(rec->stripe_bytes >> 10),
				(unsigned long long)rec->member_offset, rec->members,
				(unsigned long long)(rec->stripe_bytes >> 10),
				(unsigned long long)rec->member_offset);
		else
			nvt_err_set(
				err, EINVAL,
				"%s: %s is a single-file recording, not a stripe: give it alone",
				name, l->path[0]);
		goto out;
	}
	if (rec->complete) {
		uint64_t end = rec->data_offset + rec->data_bytes;
		if (rec->index_bytes && rec->index_offset < end) {
			nvt_err_set(
				err, EPROTO,
				"%s: header places the index (%llu) inside the data (ends %llu)",
				name, (unsigned long long)rec->index_offset,
				(unsigned long long)end);
			goto out;
		}
		if (rec->index_bytes)
			end = rec->index_offset + rec->index_bytes;
		if (check_extent(l, fd, rec, end, name, err))
			goto out;
		rec->valid_bytes = rec->data_bytes;
	} else if (rec->format == NVT_FMT_NVTAPE) {
		rec->valid_bytes = rec->durable_bytes;
		if (size < rec->data_offset + rec->durable_bytes) {
			nvt_err_set(err, EPROTO,
				    "%s: incomplete recording whose checkpoint (%llu data bytes) "
				    "lies beyond the end of the file (%llu bytes)",
				    name, (unsigned long long)rec->durable_bytes,
				    (unsigned long long)size);
			goto out;
		}
	} else {
		/* fdrec never checkpoints: everything after the header is candidate data */
		rec->valid_bytes = size > NVT_HEADER_SIZE ? size - NVT_HEADER_SIZE : 0;
		rec->valid_bytes -= rec->valid_bytes % NVT_BEAT_BYTES;
	}
	rc = 0;
out:
	free(buf);
	nvt_layout_close(l, fd);
	return rc;
}

int nvt_recording_read_index(const struct nvt_layout *l, const struct nvt_recording *rec,
			     struct nvt_drop_event **ev, uint64_t *n, struct nvt_err *err)
{
	int fd[NVT_MAX_MEMBERS];
	uint8_t *buf;
	int rc;

	*ev = NULL;
	*n = 0;
	if (!rec->index_bytes)
		return 0;
	if (rec->index_bytes > (1ull << 32)) {
		nvt_err_set(err, EPROTO, "index of %llu bytes is implausible: header damaged",
			    (unsigned long long)rec->index_bytes);
		return -EPROTO;
	}
	buf = malloc(rec->index_bytes);
	if (!buf) {
		nvt_err_set(err, ENOMEM, "out of memory for the index");
		return -ENOMEM;
	}
	rc = nvt_layout_open(l, O_RDONLY, fd, err);
	if (!rc) {
		rc = nvt_layout_pread(l, fd, buf, rec->index_bytes, rec->index_offset);
		nvt_layout_close(l, fd);
		if (rc)
			nvt_err_set(err, -rc, "cannot read the index (%llu bytes at %llu): %s",
				    (unsigned long long)rec->index_bytes,
				    (unsigned long long)rec->index_offset, strerror(-rc));
	}
	if (!rc && nvt_crc32c(0, buf, rec->index_bytes) != rec->index_crc) {
		nvt_err_set(err, EPROTO, "index CRC mismatch: the index is damaged");
		rc = -EPROTO;
	}
	if (!rc)
		rc = nvt_index_decode(buf, rec->index_bytes, ev, n, err);
	free(buf);
	return rc;
}
