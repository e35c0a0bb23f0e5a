/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the FPGA Drive Recorder v1 header. The input is laid over an fdrec header (its
 * magic forced, so that every input reaches the fdrec decoder) followed by its data. The
 * decoder accepts exactly version 1, 4096 bytes, 16-byte beats; what it accepts round-trips
 * through the encoder; opened as a file, a complete one never claims more data than the file
 * holds and an incomplete one offers what follows the header in whole beats. */
#include <string.h>

#include "fuzz.h"
#include "nvtape/layout.h"

#define MAX_INPUT (256u << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static void check_decoded(const struct fdrec_header *h, const struct nvt_recording *r)
{
	struct fdrec_header img;
	struct nvt_recording b;
	struct nvt_err err = {0};

	FUZZ_CHECK(r->format == NVT_FMT_FDREC && r->version == 1 && r->beat_bytes == 16 &&
			   r->data_offset == NVT_HEADER_SIZE,
		   "fdrec fields");
	FUZZ_CHECK(r->data_bytes == h->data_bytes && r->drop_count == h->drop_count &&
			   r->first_seq == h->first_seq && r->rate_bps == h->rate_bps,
		   "fdrec values");
	FUZZ_CHECK(!!(r->flags & NVT_FLAG_COMPLETE) == !!(h->flags & FDREC_FLAG_COMPLETE),
		   "complete flag");
	FUZZ_CHECK((r->source_kind == NVT_SRC_TPG) == !!(h->flags & FDREC_FLAG_TPG), "TPG flag");
	FUZZ_CHECK(strnlen(r->hostname, sizeof(r->hostname)) < sizeof(r->hostname) &&
			   strnlen(r->writer, sizeof(r->writer)) < sizeof(r->writer),
		   "strings");
	fdrec_header_encode(r, &img);
	FUZZ_CHECK(nvt_header_decode(&img, sizeof(img), &b, &err) == 0, "re-decode: %s", err.msg);
	FUZZ_CHECK(b.flags == r->flags && b.source_kind == r->source_kind &&
			   b.data_bytes == r->data_bytes && b.drop_count == r->drop_count &&
			   b.first_seq == r->first_seq && b.rate_bps == r->rate_bps &&
			   b.start_ns == r->start_ns && b.stop_ns == r->stop_ns &&
			   !strcmp(b.hostname, r->hostname) && !strcmp(b.writer, r->writer),
		   "round trip changed the recording");
}

static void open_file(const uint8_t *buf, size_t size)
{
	struct nvt_layout l;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	uint64_t after = size - NVT_HEADER_SIZE;

	nvt_layout_single(&l, fuzz_file(buf, size));
	if (nvt_recording_open(&l, &rec, &err)) {
		FUZZ_CHECK(err.code && err.msg[0], "a refused recording says why");
		return;
	}
	fuzz_check_open(&rec, size);
	if (!rec.complete)
		FUZZ_CHECK(rec.valid_bytes == after - after % 16,
			   "an incomplete fdrec offers %llu of %llu bytes",
			   (unsigned long long)rec.valid_bytes, (unsigned long long)after);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size < NVT_HEADER_SIZE ? NVT_HEADER_SIZE : size;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct fdrec_header *h;
	uint8_t *buf;
	bool ok;

	if (size > MAX_INPUT)
		return -1;
	buf = calloc(1, len);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	h = (struct fdrec_header *)buf;
	memcpy(h->magic, FDREC_MAGIC, 8);
	ok = h->header_version == 1 && h->header_size == NVT_HEADER_SIZE && h->beat_bytes == 16;
	FUZZ_CHECK((nvt_header_decode(buf, len, &rec, &err) == 0) == ok,
		   "version %u, size %u, beat %u: %s", h->header_version, h->header_size,
		   h->beat_bytes, ok ? err.msg : "accepted");
	if (ok)
		check_decoded(h, &rec);
	/* a header cut short is refused */
	FUZZ_CHECK(nvt_header_decode(buf, NVT_HEADER_SIZE - 1, &rec, &err) != 0, "short header");
	open_file(buf, len);
	free(buf);
	return 0;
}
