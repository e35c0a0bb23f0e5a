/* SPDX-License-Identifier: MIT */
/* Opening a recording for reading: its header checked against the file or member sizes, the
 * length a reader may trust derived once, and its index read. Also the header's life while
 * recording: begin, checkpoint, finish. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/layout_io.h"
#include "nvtape/format.h"
#include "nvtape/layout.h"
#include "format/index.h"
#include "format/lifecycle.h"
#include "util/sysutil.h"

const char *nvt_source_kind_name(uint32_t kind)
{
	switch (kind) {
	case NVT_SRC_TPG:
		return "tpg";
	case NVT_SRC_STDIN:
		return "stdin";
	case NVT_SRC_API:
		return "api";
	case NVT_SRC_DEV:
		return "dev";
	case NVT_SRC_FDREC:
		return "fdrec";
	case NVT_SRC_SHM:
		return "shm";
	case NVT_SRC_UDP:
		return "udp";
	case NVT_SRC_PACKET:
		return "packet";
	case NVT_SRC_PCAP:
		return "pcap";
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

/* The header decoded, the file or member size taken: rec->file_bytes and rec->complete set. */
static int read_header(const struct nvt_layout *l, const int *fd, struct nvt_recording *rec,
		       const char *name, struct nvt_err *err)
{
	struct nvt_err serr = {0};
	uint64_t size, hl;
	bool blockdev;
	uint8_t *buf = calloc(1, NVT_HEADER_SIZE);
	int rc = -1;

	if (!buf) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -1;
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
	if (nvt_header_decode(buf, (size_t)hl, rec, &serr)) { /* which file it is not */
		nvt_err_set(err, serr.code, "%s: %s", name, serr.msg);
		goto out;
	}
	rec->file_bytes = size;
	rec->complete = (rec->flags & NVT_FLAG_COMPLETE) != 0;
	rc = 0;
out:
	free(buf);
	return rc;
}

/* Every length the header gives must fit the 64-bit byte space (what the file or device holds
 * is checked against them next): a damaged or hostile header must not make a reader trust
 * data that is not there. */
static int check_sizes(const struct nvt_recording *rec, const char *name, struct nvt_err *err)
{
	uint64_t data_end, durable_end, index_end; /* computed only to detect a wrap */

	if (__builtin_add_overflow(rec->data_offset, rec->data_bytes, &data_end) ||
	    __builtin_add_overflow(rec->data_offset, rec->durable_bytes, &durable_end) ||
	    __builtin_add_overflow(rec->index_offset, rec->index_bytes, &index_end)) {
		nvt_err_set(
			err, EPROTO,
			"%s: the header's lengths overflow (data %llu, durable %llu, index %llu "
			"at %llu): the header is damaged",
			name, (unsigned long long)rec->data_bytes,
			(unsigned long long)rec->durable_bytes,
			(unsigned long long)rec->index_bytes,
			(unsigned long long)rec->index_offset);
		return -1;
	}
	return 0;
}

/* The members given against the stripe the header describes. */
static int check_layout(const struct nvt_layout *l, const struct nvt_recording *rec,
			const char *name, struct nvt_err *err)
{
	/* a stripe read through md (or any assembled image) is one device holding it all; one
	 * member alone is too short for what its header describes */
	bool assembled = l->n == 1 && rec->members > 1 && rec->file_bytes >= rec->data_offset &&
			 rec->file_bytes - rec->data_offset >=
				 (rec->complete ? rec->data_bytes : rec->durable_bytes);

	if ((rec->members <= 1 && l->n <= 1) || assembled ||
	    (rec->members == l->n && rec->stripe_bytes == l->stripe &&
	     rec->member_offset == l->member_offset))
		return 0;
	if (rec->members > 1) {
		nvt_err_set(err, EINVAL,
			    "%s: the recording is striped over %u members with %llu KiB "
			    "chunks, %llu bytes into each",
			    name, rec->members, (unsigned long long)(rec->stripe_bytes >> 10),
			    (unsigned long long)rec->member_offset);
		nvt_err_set_hint(err, NVT_HINT_LAYOUT, rec->members, rec->stripe_bytes,
				 rec->member_offset);
	} else {
		nvt_err_set(err, EINVAL,
			    "%s: %s is a single-file recording, not a stripe: give it alone", name,
			    l->path[0]);
	}
	return -1;
}

/* The length a reader may trust, checked against what the files hold. */
static int derive_valid(const struct nvt_layout *l, const int *fd, struct nvt_recording *rec,
			const char *name, struct nvt_err *err)
{
	uint64_t size = rec->file_bytes;

	if (rec->complete) {
		uint64_t end = rec->data_offset + rec->data_bytes;
		if (rec->index_bytes && rec->index_offset < end) {
			nvt_err_set(
				err, EPROTO,
				"%s: header places the index (%llu) inside the data (ends %llu)",
				name, (unsigned long long)rec->index_offset,
				(unsigned long long)end);
			return -1;
		}
		if (rec->index_bytes)
			end = rec->index_offset + rec->index_bytes;
		if (check_extent(l, fd, rec, end, name, err))
			return -1;
		if (rec->durable_bytes > rec->data_bytes) {
			nvt_err_set(err, EPROTO,
				    "%s: complete recording of %llu data bytes whose checkpoint "
				    "claims %llu: the header is damaged",
				    name, (unsigned long long)rec->data_bytes,
				    (unsigned long long)rec->durable_bytes);
			return -1;
		}
		rec->valid_bytes = rec->data_bytes;
	} else if (rec->format == NVT_FMT_NVTAPE) {
		rec->valid_bytes = rec->durable_bytes;
		if (size < rec->data_offset + rec->durable_bytes) {
			nvt_err_set(err, EPROTO,
				    "%s: incomplete recording whose checkpoint (%llu data bytes) "
				    "lies beyond the end of the file (%llu bytes)",
				    name, (unsigned long long)rec->durable_bytes,
				    (unsigned long long)size);
			return -1;
		}
		if (rec->index_bytes && rec->index_offset < rec->data_offset + rec->durable_bytes) {
			nvt_err_set(err, EPROTO,
				    "%s: header places the index (%llu bytes at %llu) inside the "
				    "data: the header is damaged",
				    name, (unsigned long long)rec->index_bytes,
				    (unsigned long long)rec->index_offset);
			return -1;
		}
		if (rec->index_bytes && rec->index_offset + rec->index_bytes > size) {
			/* the checkpoint's index was beyond a file cut after it: the drive did not
			 * keep the header that came before the cut */
			rec->index_offset = rec->index_bytes = 0;
			rec->index_crc = 0;
			rec->index_dropped = true;
		}
	} else {
		/* fdrec never checkpoints: everything after the header is candidate data */
		rec->valid_bytes = size > NVT_HEADER_SIZE ? size - NVT_HEADER_SIZE : 0;
		rec->valid_bytes -= rec->valid_bytes % NVT_BEAT_BYTES;
	}
	return 0;
}

int nvt_recording_open(const struct nvt_layout *l, struct nvt_recording *rec, struct nvt_err *err)
{
	int fd[NVT_MAX_MEMBERS];
	char name[512];
	int rc;

	nvt_layout_name(l, name, sizeof(name));
	if (nvt_layout_check(l, err))
		return -1;
	/* O_NONBLOCK: a FIFO given by mistake must not hang us */
	if (nvt_layout_open(l, O_RDONLY | O_NONBLOCK, fd, err))
		return -1;
	rc = read_header(l, fd, rec, name, err);
	if (!rc)
		rc = check_layout(l, rec, name, err);
	if (!rc)
		rc = check_sizes(rec, name, err);
	if (!rc)
		rc = derive_valid(l, fd, rec, name, err);
	nvt_layout_close(l, fd);
	return rc;
}

int nvt_recording_read_index_all(const struct nvt_layout *l, const struct nvt_recording *rec,
				 struct nvt_index *ix, struct nvt_err *err)
{
	int fd[NVT_MAX_MEMBERS];
	uint8_t *buf;
	int rc;

	memset(ix, 0, sizeof(*ix));
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
		rc = nvt_index_parse(buf, rec->index_bytes, ix, err);
	free(buf);
	return rc;
}

int nvt_recording_read_index(const struct nvt_layout *l, const struct nvt_recording *rec,
			     struct nvt_drop_event **ev, uint64_t *n, struct nvt_err *err)
{
	struct nvt_index ix;
	int rc = nvt_recording_read_index_all(l, rec, &ix, err);

	*ev = ix.ev;
	*n = ix.nev;
	ix.ev = NULL;
	nvt_index_clear(&ix); /* the other records */
	return rc;
}

void nvt_recording_begin(struct nvt_recording *rec, uint64_t now_real_ns)
{
	rec->version = rec->format == NVT_FMT_FDREC ? 1 : NVT_FORMAT_VERSION;
	rec->data_offset = NVT_HEADER_SIZE;
	rec->start_ns = now_real_ns;
	nvt_hostname(rec->hostname, sizeof(rec->hostname));
	snprintf(rec->writer, sizeof(rec->writer), "nvtape %s", NVT_VERSION);
	nvt_recording_derive(rec);
}

void nvt_recording_encode(struct nvt_recording *rec, void *blk4096)
{
	if (rec->format == NVT_FMT_FDREC)
		fdrec_header_encode(rec, blk4096);
	else
		nvt_header_block_encode(rec, blk4096);
}

void nvt_recording_checkpoint(struct nvt_recording *rec, uint64_t durable_bytes, uint64_t drops,
			      uint64_t now_real_ns)
{
	rec->durable_bytes = durable_bytes;
	rec->drop_count = drops;
	rec->stop_ns = now_real_ns;
	rec->checkpoints++;
	nvt_recording_derive(rec);
}

void nvt_recording_checkpoint_undo(struct nvt_recording *rec)
{
	if (rec->checkpoints)
		rec->checkpoints--;
	if (rec->generation)
		rec->generation--;
}

void nvt_recording_finish(struct nvt_recording *rec, uint64_t data_bytes, bool stop_error,
			  uint64_t now_real_ns)
{
	rec->data_bytes = data_bytes;
	rec->durable_bytes = data_bytes;
	rec->stop_ns = now_real_ns;
	rec->flags |= NVT_FLAG_COMPLETE;
	if (stop_error)
		rec->flags |= NVT_FLAG_STOP_ERROR;
	nvt_recording_derive(rec);
}

void nvt_recording_derive(struct nvt_recording *rec)
{
	rec->complete = (rec->flags & NVT_FLAG_COMPLETE) != 0;
	rec->valid_bytes = rec->complete ? rec->data_bytes : rec->durable_bytes;
}
