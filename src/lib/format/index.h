/* SPDX-License-Identifier: MIT */
/* The index with all its records (index.c): drop events and chunk checksums, built and parsed
 * as one. The public nvt_index_encode/decode (nvtape/format.h) see the drop events only. */
#ifndef NVT_FORMAT_INDEX_H
#define NVT_FORMAT_INDEX_H

#include "nvtape/format.h"

struct nvt_index {
	struct nvt_drop_event *ev; /* malloc'ed by parse */
	uint64_t nev;
	struct nvt_chunk_crc *crc;
	uint64_t ncrc;
	struct nvt_chunk_time *tm;
	uint64_t ntm;
	char *meta; /* "key=value" lines, NUL-terminated by parse; NULL: none */
	uint64_t meta_len;
	/* writers: the bytes of one sample of the data (0, 1: none), for nvt_index_pad, whose
	 * zeros nvt_index_bytes makes room for */
	uint64_t pad_unit;
};

struct nvt_layout;

/* Bytes the index ix takes, padded to NVT_BLOCK. */
uint64_t nvt_index_bytes(const struct nvt_index *ix);
/* ... and one with nev drop events and ncrc checksums (and times), metadata of meta_len bytes. */
uint64_t nvt_index_size(uint64_t nev, uint64_t ncrc, uint64_t meta_len);
/* Encode into buf (cap bytes, zero-padded to NVT_BLOCK): the padded length or -ENOSPC; *used the
 * index_bytes, *crc its CRC32C. A DROPS record always; CHUNK_CRC, CHUNK_TIME and META records
 * when there is something to put in them. */
long nvt_index_build(const struct nvt_index *ix, void *buf, size_t cap, uint64_t *used,
		     uint32_t *crc);
/* The index built in buf (cap bytes, zeros after *used), placed rel bytes after the start of the
 * data: *used grown by zeros, and *crc over them, until the file it ends ends a whole number of
 * unit-byte samples after the start of the data (readers skip what follows the records). A
 * SigMF reader given the recording in place (export --format sigmf-meta) maps it from
 * core:header_bytes to the file's end and reshapes that in samples. */
void nvt_index_pad(uint64_t unit, const void *buf, uint64_t cap, uint64_t rel, uint64_t *used,
		   uint32_t *crc);
/* Decode; unknown records are skipped. ix gets malloc'ed arrays (nvt_index_clear frees). */
int nvt_index_parse(const void *buf, size_t len, struct nvt_index *ix, struct nvt_err *err);
void nvt_index_clear(struct nvt_index *ix);
/* Read, check (CRC) and parse a recording's index; no index: empty. */
int nvt_recording_read_index_all(const struct nvt_layout *l, const struct nvt_recording *rec,
				 struct nvt_index *ix, struct nvt_err *err);

#endif
