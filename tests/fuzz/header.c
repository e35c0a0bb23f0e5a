/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the recording header as bytes and as a file. The input is a whole recording
 * (header, data, index). It is decoded as given, then with its CRCs made right (so that
 * mutations reach the field checks), re-encoded (the decode must round-trip), and opened as a
 * file: what an opened recording claims must lie inside the file, and its index must decode
 * into events that came from the index bytes. */
#include <string.h>

#include "fuzz.h"
#include "nvtape/layout.h"

#define MAX_INPUT (1u << 20)

static void check_strings(const struct nvt_recording *r)
{
	FUZZ_CHECK(strnlen(r->hostname, sizeof(r->hostname)) < sizeof(r->hostname), "hostname");
	FUZZ_CHECK(strnlen(r->writer, sizeof(r->writer)) < sizeof(r->writer), "writer");
	FUZZ_CHECK(strnlen(r->source_name, sizeof(r->source_name)) < sizeof(r->source_name),
		   "source name");
	FUZZ_CHECK(r->drive_count <= NVT_MAX_DRIVES, "drive_count %u", r->drive_count);
	for (unsigned i = 0; i < r->drive_count; i++) {
		const struct nvt_drive *d = &r->drive[i];
		FUZZ_CHECK(strnlen(d->model, sizeof(d->model)) < sizeof(d->model), "model");
		FUZZ_CHECK(strnlen(d->serial, sizeof(d->serial)) < sizeof(d->serial), "serial");
		FUZZ_CHECK(strnlen(d->firmware, sizeof(d->firmware)) < sizeof(d->firmware),
			   "firmware");
	}
}

#define SAME(f)     FUZZ_CHECK(a->f == b->f, "round trip changed " #f)
#define SAME_STR(f) FUZZ_CHECK(strcmp(a->f, b->f) == 0, "round trip changed " #f)

/* What both formats store. */
static void same_common(const struct nvt_recording *a, const struct nvt_recording *b)
{
	SAME(format);
	SAME(version);
	SAME(beat_bytes);
	SAME(flags);
	SAME(source_kind);
	SAME(rate_bps);
	SAME(start_ns);
	SAME(stop_ns);
	SAME(data_offset);
	SAME(data_bytes);
	SAME(drop_count);
	SAME(first_seq);
	SAME_STR(hostname);
	SAME_STR(writer);
}

static void same_nvtape(const struct nvt_recording *a, const struct nvt_recording *b)
{
	same_common(a, b);
	SAME(chunk_bytes);
	SAME(chunk_count);
	SAME(checkpoints);
	SAME(duration_ns);
	SAME(durable_bytes);
	SAME(drop_events);
	SAME(index_offset);
	SAME(index_bytes);
	SAME(index_crc);
	SAME(members);
	SAME(stripe_bytes);
	SAME(member_offset);
	SAME(io_path);
	SAME(drive_count);
	for (unsigned i = 0; i < a->drive_count; i++) {
		SAME_STR(drive[i].model);
		SAME_STR(drive[i].serial);
		SAME_STR(drive[i].firmware);
		SAME(drive[i].nsid);
		SAME(drive[i].lba_bytes);
		SAME(drive[i].max_cmd_kib);
	}
	SAME_STR(source_name);
}

/* A decoded header, encoded again in its own format, decodes to the same recording. */
static void round_trip(const struct nvt_recording *a)
{
	static uint8_t img[NVT_HEADER_SIZE], img2[NVT_HEADER_SIZE];
	struct nvt_recording b;
	struct nvt_err err = {0};

	check_strings(a);
	FUZZ_CHECK(a->data_offset == NVT_HEADER_SIZE, "data at %llu",
		   (unsigned long long)a->data_offset);
	FUZZ_CHECK(a->beat_bytes >= 1 && a->beat_bytes <= NVT_HEADER_SIZE, "beat %u",
		   a->beat_bytes);
	struct nvt_recording c = *a; /* written anew: version 2, generation 1 in both slots */
	c.version = NVT_FORMAT_VERSION;
	c.generation = 0;
	memset(img, 0, sizeof(img));
	if (a->format == NVT_FMT_FDREC)
		fdrec_header_encode(a, (struct fdrec_header *)img);
	else
		nvt_header_block_encode(&c, img);
	FUZZ_CHECK(nvt_header_decode(img, sizeof(img), &b, &err) == 0,
		   "a header nvtape encoded does not decode: %s", err.msg);
	if (a->format == NVT_FMT_FDREC) {
		same_common(a, &b);
		fdrec_header_encode(&b, (struct fdrec_header *)img2);
	} else {
		same_nvtape(&c, &b);
		FUZZ_CHECK(b.generation == 1 && !b.header_torn, "generation %llu, torn %d",
			   (unsigned long long)b.generation, b.header_torn);
		b.generation = 0;
		memset(img2, 0, sizeof(img2));
		nvt_header_block_encode(&b, img2);
	}
	FUZZ_CHECK(memcmp(img, img2, sizeof(img)) == 0, "encoding is not stable");
}

static void open_file(const uint8_t *buf, size_t size)
{
	struct nvt_layout l;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct nvt_drop_event *ev = NULL;
	uint64_t n = 0;

	nvt_layout_single(&l, fuzz_file(buf, size));
	if (nvt_recording_open(&l, &rec, &err)) {
		FUZZ_CHECK(err.code && err.msg[0], "a refused recording says why");
		return;
	}
	fuzz_check_open(&rec, size);
	check_strings(&rec);
	if (nvt_recording_read_index(&l, &rec, &ev, &n, &err) == 0) {
		FUZZ_CHECK(n <= rec.index_bytes / sizeof(*ev), "%llu events from %llu index bytes",
			   (unsigned long long)n, (unsigned long long)rec.index_bytes);
		FUZZ_CHECK(n == 0 || ev, "events without an array");
	} else {
		FUZZ_CHECK(!ev && n == 0, "a failed index read returns no events");
		FUZZ_CHECK(err.code && err.msg[0], "a refused index says why");
	}
	free(ev);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_recording rec;
	struct nvt_err err = {0};
	uint8_t *buf;

	if (size > MAX_INPUT)
		return -1;
	if (nvt_header_decode(data, size, &rec, &err) == 0)
		round_trip(&rec);
	else
		FUZZ_CHECK(err.code && err.msg[0], "a refused header says why");
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fuzz_fix_crcs(buf, size);
	memset(&err, 0, sizeof(err));
	if (nvt_header_decode(buf, size, &rec, &err) == 0)
		round_trip(&rec);
	open_file(buf, size);
	free(buf);
	return 0;
}
