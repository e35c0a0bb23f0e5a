/* SPDX-License-Identifier: MIT */
/* Unit tests: header and index encoding, CRC protection, FPGA Drive Recorder compatibility. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "nvtape/format.h"
#include "format/index.h"
#include "format/sums.h"
#include "util/crc32c.h"
#include "util/sha512.h"
#include "nvtape/layout.h"
#include "nvtape/pattern.h"
#include "nvtape/meta.h"
#include "nvtape/recover.h"

static void sample(struct nvt_recording *r)
{
	memset(r, 0, sizeof(*r));
	r->beat_bytes = 16;
	r->flags = NVT_FLAG_COMPLETE;
	r->source_kind = NVT_SRC_TPG;
	r->chunk_bytes = 8u << 20;
	r->chunk_count = 32;
	r->checkpoints = 7;
	r->rate_bps = 1500000000ull;
	r->start_ns = 1700000000123456789ull;
	r->stop_ns = 1700000010123456789ull;
	r->duration_ns = 10000000000ull;
	r->data_bytes = 15000000512ull;
	r->durable_bytes = 15000000512ull;
	r->drop_count = 4096;
	r->drop_events = 1;
	r->first_seq = 0;
	r->index_offset = 15000004608ull;
	r->index_bytes = 56;
	r->index_crc = 0xdeadbeef;
	strcpy(r->hostname, "rig-7");
	strcpy(r->writer, "nvtape 0.1.0");
	strcpy(r->source_name, "dma_producer_x1");
}

/* The instruction version against the tables at every length and alignment around the
 * stream blocks, and combining (A, B) into A followed by B. */
static void test_crc32c_hw_and_combine(void **state)
{
	size_t n = 3 * (64u << 10) * 2 + 3 * 4096 + 77;
	uint8_t *buf = malloc(n + 8);
	uint32_t x = 12345;
	(void)state;

	assert_non_null(buf);
	for (size_t i = 0; i < n + 8; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	size_t lens[] = {0,
			 1,
			 7,
			 8,
			 9,
			 4095,
			 3 * 4096,
			 3 * 4096 + 5,
			 3 * 65536 - 1,
			 3 * 65536,
			 3 * 65536 + 3 * 4096 + 9,
			 n};
	for (unsigned a = 0; a < 8; a++)
		for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			assert_int_equal(nvt_crc32c(7, buf + a, lens[i]),
					 nvt_crc32c_soft(7, buf + a, lens[i]));
	for (size_t cut = 0; cut <= n; cut += n / 7 + 1) {
		uint32_t whole = nvt_crc32c(0, buf, n);
		uint32_t a = nvt_crc32c(0, buf, cut), b = nvt_crc32c(0, buf + cut, n - cut);
		assert_int_equal(nvt_crc32c_combine(a, b, n - cut), whole);
	}
	assert_non_null(nvt_crc32c_impl());
	free(buf);
}

/* SHA-512: the FIPS 180-4 example, and a message fed in uneven pieces across the 112-byte
 * padding boundary against the same message at once. */
static void test_sha512(void **state)
{
	struct nvt_sha512 a, b;
	char x[129], y[129];
	uint8_t m[300];
	(void)state;

	nvt_sha512_init(&a);
	nvt_sha512_update(&a, "abc", 3);
	nvt_sha512_final(&a, x);
	assert_string_equal(x, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
			       "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	for (unsigned i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 31 + 7);
	for (size_t n = 100; n <= sizeof(m); n += 13) {
		nvt_sha512_init(&a);
		nvt_sha512_update(&a, m, n);
		nvt_sha512_final(&a, x);
		nvt_sha512_init(&b);
		for (size_t o = 0; o < n; o += 37)
			nvt_sha512_update(&b, m + o, o + 37 > n ? n - o : 37);
		nvt_sha512_final(&b, y);
		assert_string_equal(x, y);
	}
}

static void test_crc32c_vector(void **state)
{
	(void)state;
	/* RFC 3720 B.4: 32 bytes of zeros -> 0x8a9136aa; "123456789" -> 0xe3069283 */
	uint8_t z[32] = {0};
	assert_int_equal(nvt_crc32c(0, z, 32), 0x8a9136aa);
	assert_int_equal(nvt_crc32c(0, "123456789", 9), 0xe3069283);
}

static void test_header_roundtrip(void **state)
{
	struct nvt_recording a, b;
	static uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_err err = {0};
	(void)state;
	sample(&a);
	nvt_header_block_encode(&a, blk);
	assert_int_equal(a.generation, 1);
	assert_memory_equal(blk, "NVTAPE\0\0", 8);
	assert_memory_equal(blk, blk + NVT_HEADER_SLOT, NVT_HEADER_SLOT); /* both slots */
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.format, NVT_FMT_NVTAPE);
	assert_int_equal(b.version, 2);
	assert_int_equal(b.generation, 1);
	assert_false(b.header_torn);
	assert_int_equal(b.data_offset, 4096);
	assert_int_equal(b.rate_bps, a.rate_bps);
	assert_int_equal(b.data_bytes, a.data_bytes);
	assert_int_equal(b.drop_count, a.drop_count);
	assert_int_equal(b.index_offset, a.index_offset);
	assert_int_equal(b.index_crc, a.index_crc);
	assert_int_equal(b.checkpoints, 7);
	assert_string_equal(b.hostname, "rig-7");
	assert_string_equal(b.source_name, "dma_producer_x1");
	assert_string_equal(b.writer, "nvtape 0.1.0");
	a.data_bytes += 4096; /* the next generation goes to slot 0, slot 1 stays */
	nvt_header_block_encode(&a, blk);
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.generation, 2);
	assert_int_equal(b.data_bytes, a.data_bytes);
	/* a generation at the limit (read from a crafted file) starts again at 1 in both slots */
	a.generation = NVT_GENERATION_MAX;
	a.data_bytes += 4096;
	nvt_header_block_encode(&a, blk);
	assert_int_equal(a.generation, 1);
	assert_memory_equal(blk, blk + NVT_HEADER_SLOT, NVT_HEADER_SLOT);
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.data_bytes, a.data_bytes);
	a.generation = UINT64_MAX;
	a.data_bytes += 4096;
	nvt_header_block_encode(&a, blk);
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.data_bytes, a.data_bytes);
}

/* A version 1 header (one copy, CRC at 4092) is still read. */
static void test_header_v1(void **state)
{
	struct nvt_recording a, b;
	static uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_header *h = (struct nvt_header *)blk;
	struct nvt_err err = {0};
	uint32_t crc;
	(void)state;
	sample(&a);
	memset(blk, 0, sizeof(blk));
	nvt_header_encode(&a, h);
	h->version = 1;
	h->generation = 0;
	h->header_crc = 0;
	crc = nvt_crc32c(0, blk, NVT_HEADER_V1_CRC_OFF);
	memcpy(blk + NVT_HEADER_V1_CRC_OFF, &crc, 4);
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.version, 1);
	assert_int_equal(b.generation, 0);
	assert_int_equal(b.data_bytes, a.data_bytes);
	assert_string_equal(b.source_name, "dma_producer_x1");
	blk[100] ^= 1;
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "CRC mismatch"));
}

static void test_header_damage(void **state)
{
	struct nvt_recording a, b;
	static uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_err err = {0};
	(void)state;
	sample(&a);
	nvt_header_block_encode(&a, blk);
	a.durable_bytes = 1u << 20;
	nvt_header_block_encode(&a, blk); /* generation 2 in slot 0 */
	blk[100] ^= 1;                    /* the newest copy damaged: the older one is read */
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), 0);
	assert_int_equal(b.generation, 1);
	assert_true(b.header_torn);
	blk[NVT_HEADER_SLOT + 100] ^= 1; /* both */
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "both copies"));
	nvt_err_clear(&err);
	nvt_header_block_encode(&a, blk);
	assert_int_equal(nvt_header_decode(blk, 100, &b, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "truncated"));
	nvt_err_clear(&err);
	memcpy(blk, "GARBAGE!", 8);
	assert_int_equal(nvt_header_decode(blk, sizeof(blk), &b, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "bad magic"));
}

/* A header write torn at sector boundaries, in any order (every subset of the eight 512-byte
 * sectors written), over the previous block: the reader gets the new or the previous
 * generation, never an error, never a header that claims more than the new one. */
static void test_header_torn(void **state)
{
	struct nvt_recording a, b;
	static uint8_t prev[NVT_HEADER_SIZE], next[NVT_HEADER_SIZE], mix[NVT_HEADER_SIZE];
	struct nvt_err err = {0};
	unsigned states = 0;
	(void)state;
	sample(&a);
	a.flags = 0;
	a.durable_bytes = 0;
	nvt_header_block_encode(&a, next);
	for (int g = 2; g <= 5; g++) { /* checkpoints into both slots, then the final header */
		uint64_t prev_durable = a.durable_bytes;
		memcpy(prev, next, sizeof(prev));
		a.durable_bytes += 8u << 20;
		if (g == 5)
			a.flags = NVT_FLAG_COMPLETE;
		nvt_header_block_encode(&a, next);
		for (unsigned set = 0; set < 256; set++, states++) {
			for (unsigned sec = 0; sec < 8; sec++)
				memcpy(mix + sec * 512,
				       ((set >> sec) & 1 ? next : prev) + sec * 512, 512);
			assert_int_equal(nvt_header_decode(mix, sizeof(mix), &b, &err), 0);
			assert_true(b.generation == (uint64_t)g || b.generation == (uint64_t)g - 1);
			assert_int_equal(b.durable_bytes, b.generation == (uint64_t)g
								  ? a.durable_bytes
								  : prev_durable);
		}
	}
	assert_int_equal(states, 4 * 256);
}

static void test_fdrec_roundtrip(void **state)
{
	struct nvt_recording a, b;
	struct fdrec_header h;
	struct nvt_err err = {0};
	const uint8_t *raw = (const uint8_t *)&h;
	uint64_t v;
	(void)state;
	sample(&a);
	fdrec_header_encode(&a, &h);
	/* byte layout per fdrec_file.h: data_bytes at 60, drop_count at 68, target at 84 */
	memcpy(&v, raw + 60, 8);
	assert_int_equal(v, a.data_bytes);
	memcpy(&v, raw + 68, 8);
	assert_int_equal(v, a.drop_count);
	assert_int_equal(raw[20], FDREC_FLAG_TPG | FDREC_FLAG_COMPLETE);
	assert_int_equal(nvt_header_decode(&h, sizeof(h), &b, &err), 0);
	assert_int_equal(b.format, NVT_FMT_FDREC);
	assert_int_equal(b.source_kind, NVT_SRC_TPG);
	assert_true(b.flags & NVT_FLAG_COMPLETE);
	assert_int_equal(b.data_bytes, a.data_bytes);
	assert_int_equal(b.rate_bps, a.rate_bps);
	assert_string_equal(b.writer, "nvtape 0.1.0");
}

static void test_index_roundtrip(void **state)
{
	struct nvt_drop_event ev[3] = {
		{8388608, 4096, 1000}, {16777216, 10, 2000}, {33554432, 1, 3000}};
	struct nvt_drop_event *out;
	uint64_t n, used;
	uint32_t crc;
	struct nvt_err err = {0};
	uint8_t *buf = calloc(1, 8192);
	(void)state;
	long padded = nvt_index_encode(ev, 3, buf, 8192, &used, &crc);
	assert_int_equal(padded, 4096);
	assert_int_equal(used, 16 + 16 + 3 * 24);
	assert_int_equal(crc, nvt_crc32c(0, buf, used));
	assert_int_equal(nvt_index_decode(buf, used, &out, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, ev, sizeof(ev));
	free(out);
	assert_int_equal(nvt_index_encode(ev, 3, buf, 100, &used, &crc), -ENOSPC);
	free(buf);
}

/* A damaged record after a good one: the decode fails and hands back nothing (no leak). */
static void test_index_damaged_after_good_record(void **state)
{
	struct nvt_drop_event ev[2] = {{4096, 1, 1}, {8192, 2, 2}};
	struct nvt_drop_event *out = (struct nvt_drop_event *)1;
	struct nvt_index_record bad = {.type = 99, .entry_bytes = 8, .payload_bytes = 1u << 20};
	struct nvt_index_header ih;
	uint64_t n = 7, used;
	uint32_t crc;
	struct nvt_err err = {0};
	uint8_t *buf = calloc(1, 8192);
	(void)state;

	assert_true(nvt_index_encode(ev, 2, buf, 8192, &used, &crc) > 0);
	memcpy(&ih, buf, sizeof(ih));
	ih.record_count = 2;
	memcpy(buf, &ih, sizeof(ih));
	memcpy(buf + used, &bad, sizeof(bad));
	assert_int_equal(nvt_index_decode(buf, used + sizeof(bad), &out, &n, &err), -EPROTO);
	assert_null(out);
	assert_int_equal(n, 0);
	free(buf);
}

static void test_index_skips_unknown_records(void **state)
{
	/* an index written by a later nvtape: an unknown record before the drop record */
	uint8_t buf[256] = {0};
	struct nvt_index_header ih = {.version = 2, .record_count = 2};
	struct nvt_index_record unk = {.type = 99, .entry_bytes = 8, .payload_bytes = 16};
	struct nvt_index_record drops = {
		.type = NVT_IDX_DROPS, .entry_bytes = 32, .payload_bytes = 32};
	uint64_t entry[4] = {4096, 7, 5, 0xffff}; /* a grown entry: 8 extra bytes */
	struct nvt_drop_event *out;
	uint64_t n;
	struct nvt_err err = {0};
	size_t p = 0;
	(void)state;
	memcpy(ih.magic, NVT_INDEX_MAGIC, 8);
	memcpy(buf + p, &ih, 16), p += 16;
	memcpy(buf + p, &unk, 16), p += 16 + 16;
	memcpy(buf + p, &drops, 16), p += 16;
	memcpy(buf + p, entry, 32), p += 32;
	assert_int_equal(nvt_index_decode(buf, p, &out, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].data_offset, 4096);
	assert_int_equal(out[0].beats, 7);
	free(out);
	/* a record running past the end is refused */
	assert_int_equal(nvt_index_decode(buf, p - 8, &out, &n, &err), -EPROTO);
}

/* A header whose lengths wrap around 2^64 or exceed the file: refused, never trusted. */
static int open_with_header(const void *hdr, size_t file_bytes, struct nvt_recording *out,
			    struct nvt_err *err)
{
	char path[] = "/tmp/nvt-fmt-XXXXXX";
	int fd = mkstemp(path);
	struct nvt_layout l;
	int rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, hdr, NVT_HEADER_SIZE), NVT_HEADER_SIZE);
	assert_int_equal(ftruncate(fd, (off_t)file_bytes), 0);
	close(fd);
	nvt_layout_resolve(NULL, path, &l);
	rc = nvt_recording_open(&l, out, err);
	unlink(path);
	return rc;
}

static void test_sizes_that_wrap(void **state)
{
	struct nvt_recording r, got;
	static uint8_t h[NVT_HEADER_SIZE];
	struct fdrec_header fh;
	struct nvt_err err = {0};
	(void)state;

	sample(&r);
	r.index_offset = r.index_bytes = 0;
	r.flags = NVT_FLAG_COMPLETE;
	r.data_bytes = UINT64_MAX - 4095; /* 4096 + this wraps to 0 */
	r.generation = 0;
	nvt_header_block_encode(&r, h);
	assert_int_not_equal(open_with_header(h, 1 << 20, &got, &err), 0);
	assert_non_null(strstr(err.msg, "overflow"));

	nvt_err_clear(&err);
	r.data_bytes = 8u << 20; /* CRC-valid, but more than the 1 MiB file holds */
	r.generation = 0;
	nvt_header_block_encode(&r, h);
	assert_int_not_equal(open_with_header(h, 1 << 20, &got, &err), 0);
	assert_non_null(strstr(err.msg, "truncated or copied incompletely"));

	nvt_err_clear(&err);
	r.flags = 0; /* incomplete: a checkpoint length that wraps */
	r.data_bytes = 0;
	r.durable_bytes = UINT64_MAX - 100;
	r.generation = 0;
	nvt_header_block_encode(&r, h);
	assert_int_not_equal(open_with_header(h, 1 << 20, &got, &err), 0);

	nvt_err_clear(&err); /* incomplete, its checkpoint's index beyond a file cut after it: the
			      * data up to the checkpoint is read, the index is not */
	r.durable_bytes = 4096;
	r.index_offset = 2u << 20;
	r.index_bytes = 4096;
	r.generation = 0;
	nvt_header_block_encode(&r, h);
	assert_int_equal(open_with_header(h, 1 << 20, &got, &err), 0);
	assert_true(got.index_dropped && got.index_bytes == 0 && got.valid_bytes == 4096);
	r.index_offset = 4096; /* inside the checkpoint's data: damaged */
	r.generation = 0;
	nvt_header_block_encode(&r, h);
	assert_int_not_equal(open_with_header(h, 1 << 20, &got, &err), 0);
	assert_non_null(strstr(err.msg, "inside the data"));

	nvt_err_clear(&err);
	sample(&r); /* an fdrec header has no CRC to catch it */
	r.format = NVT_FMT_FDREC;
	r.flags = NVT_FLAG_COMPLETE;
	r.source_kind = NVT_SRC_TPG;
	r.data_bytes = UINT64_MAX - 4095;
	fdrec_header_encode(&r, &fh);
	assert_int_not_equal(open_with_header(&fh, 1 << 20, &got, &err), 0);
	assert_non_null(strstr(err.msg, "overflow"));
}

/* recover of an interrupted test-pattern recording whose checkpoint or file end is not on a
 * 4 KiB boundary: it keeps at least what the checkpoint vouched for (in whole beats) and the
 * pattern that continues it, reading beats at any alignment. The pattern skips gap beats after
 * beat gap_at (a drop); the recovered recording is left in *after. */
static uint64_t recover_gap(uint64_t durable, uint64_t data_len, uint64_t gap_at, uint64_t gap,
			    uint32_t chunk, struct nvt_recording *after)
{
	struct timespec now;
	char path[] = "/tmp/nvt-rcv-XXXXXX";
	int fd = mkstemp(path);
	static uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_recording r;
	struct nvt_recover_opts o;
	struct nvt_recover_result res;
	uint8_t *data = malloc(data_len + 16);

	assert_true(fd >= 0 && data);
	sample(&r);
	r.flags = 0;
	r.index_offset = r.index_bytes = r.index_crc = 0;
	r.drop_count = r.drop_events = 0;
	r.first_seq = 1000;
	r.data_offset = NVT_HEADER_SIZE;
	r.data_bytes = 0;
	r.durable_bytes = durable;
	r.chunk_bytes = chunk;
	clock_gettime(CLOCK_REALTIME, &now); /* started a second ago at 1.5 GB/s */
	r.start_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - 1000000000ull;
	nvt_header_block_encode(&r, blk);
	nvt_pattern_fill(data, 1000, (data_len + 15) / 16);
	if (gap_at * 16 < data_len)
		nvt_pattern_fill(data + gap_at * 16, 1000 + gap_at + gap,
				 (data_len - gap_at * 16 + 15) / 16);
	assert_int_equal(write(fd, blk, sizeof(blk)), (ssize_t)sizeof(blk));
	assert_int_equal(write(fd, data, data_len), (ssize_t)data_len);
	close(fd);
	free(data);
	nvt_recover_opts_default(&o);
	o.path = path;
	assert_int_equal(nvt_recover(&o, &res), 0);
	unlink(path);
	assert_true(res.after.complete);
	*after = res.after;
	return res.after.data_bytes;
}

static uint64_t recover_crafted(uint64_t durable, uint64_t data_len)
{
	struct nvt_recording after;
	return recover_gap(durable, data_len, UINT64_MAX / 16, 0, 8u << 20, &after);
}

static void test_recover_unaligned(void **state)
{
	(void)state;
	/* the file ends inside a 4 KiB block, the checkpoint at its end */
	assert_int_equal(recover_crafted(10000, 10000), 10000);
	/* a checkpoint inside a block: the rest of that block and the next ones continue it */
	assert_int_equal(recover_crafted(4096 + 48, 3 * 4096), 3 * 4096);
	/* a checkpoint inside a beat: every vouched byte, then the pattern that continues */
	assert_int_equal(recover_crafted(4096 + 40, 3 * 4096), 3 * 4096);
	/* nothing continues after the checkpoint: exactly the vouched beats */
	assert_int_equal(recover_crafted(4096 + 48, 4096 + 48), 4096 + 48);
}

/* A drop inside what the checkpoint vouched for is indexed, also when the checkpoint holds less
 * than one 4 KiB block (the scan reads whole blocks only) or ends inside a block. */
static void test_recover_gap_in_checkpoint(void **state)
{
	struct nvt_recording r;
	(void)state;
	assert_int_equal(recover_gap(400, 400, 10, 7, 8u << 20, &r), 400);
	assert_int_equal(r.drop_count, 7);
	assert_int_equal(r.drop_events, 1);
	assert_int_equal(recover_gap(4096 + 400, 4096 + 400, 270, 5, 8u << 20, &r), 4096 + 400);
	assert_int_equal(r.drop_count, 5);
	assert_int_equal(r.drop_events, 1);
	assert_int_equal(recover_gap(3 * 4096, 3 * 4096, 100, 9, 8u << 20, &r), 3 * 4096);
	assert_int_equal(r.drop_count, 9);
	assert_int_equal(r.drop_events, 1);
}

/* The writer's spans stay bounded: past max, neighbours merge and each CRC is that of the
 * bytes it covers; the reader's check finds the one bad byte's span, reads at any alignment,
 * and counts spans the data jumped over. */
static void test_sums_bounded_and_checked(void **state)
{
	const uint64_t chunk = 1000, n = 37;
	uint8_t *data = malloc(chunk * n);
	struct nvt_sums s;
	struct nvt_sums_check c;
	(void)state;

	assert_non_null(data);
	for (uint64_t i = 0; i < chunk * n; i++)
		data[i] = (uint8_t)(i * 13 + i / 251);
	nvt_sums_init(&s, 8);
	for (uint64_t k = 0; k < n; k++)
		nvt_sums_add(&s, chunk, nvt_crc32c(0, data + k * chunk, chunk), 1000 + k);
	assert_true(s.n <= 8);
	assert_int_equal(s.end, chunk * n);
	for (uint64_t i = 0, at = 0; i < s.n; i++) {
		assert_int_equal(s.e[i].data_offset, at);
		assert_int_equal(s.e[i].crc32c, nvt_crc32c(0, data + at, s.e[i].length));
		at += s.e[i].length;
	}
	assert_int_equal(s.granule, 8); /* 37 chunks in at most 8 spans */
	data[5 * chunk + 3] ^= 0x40;
	nvt_sums_check_init(&c, s.e, s.n, chunk * n);
	for (uint64_t off = 0; off < chunk * n; off += 777)
		nvt_sums_check_feed(&c, data + off, off + 777 > chunk * n ? chunk * n - off : 777,
				    off);
	assert_int_equal(c.bad, 1);
	assert_int_equal(c.good, s.n - 1);
	assert_true(nvt_sums_check_complete(&c));
	nvt_sums_check_init(&c, s.e, s.n, chunk * n); /* the second span's bytes never come */
	nvt_sums_check_feed(&c, data, s.e[0].length, 0);
	nvt_sums_check_feed(&c, data + s.e[2].data_offset, chunk * n - s.e[2].data_offset,
			    s.e[2].data_offset);
	assert_int_equal(c.skipped, 1);
	assert_false(nvt_sums_check_complete(&c));
	nvt_sums_free(&s);
	free(data);
}

/* Data that is not the test pattern, interrupted: recover keeps what the checkpoint vouched for
 * and then every chunk whose data matches the checksum the checkpoint's index holds for it, up
 * to the first that does not; the checkpoint's drop events come along and the new index keeps
 * the checksums of the data kept. */
static void test_recover_by_checksums(void **state)
{
	char path[] = "/tmp/nvt-rcs-XXXXXX";
	int fd = mkstemp(path);
	static uint8_t blk[NVT_HEADER_SIZE];
	const uint64_t chunk = 8192, nchunks = 10, len = chunk * nchunks;
	struct nvt_chunk_crc crc[10];
	struct nvt_drop_event ev[2] = {{.data_offset = 2 * chunk, .beats = 11, .time_ns = 5},
				       {.data_offset = 6 * chunk, .beats = 4, .time_ns = 9}};
	struct nvt_index ix = {.ev = ev, .nev = 2, .crc = crc, .ncrc = nchunks};
	struct nvt_recording r;
	struct nvt_recover_opts o;
	struct nvt_recover_result res;
	struct nvt_layout l = {0};
	struct nvt_index got;
	struct nvt_err err = {0};
	uint8_t *data = malloc(len), *ibuf = calloc(1, 8192);
	uint64_t used;
	uint32_t icrc;
	(void)state;

	assert_true(fd >= 0 && data && ibuf);
	for (uint64_t i = 0; i < len; i++)
		data[i] = (uint8_t)(i * 7 + i / 4093);
	for (uint64_t k = 0; k < nchunks; k++)
		crc[k] = (struct nvt_chunk_crc){.data_offset = k * chunk,
						.length = chunk,
						.crc32c = nvt_crc32c(0, data + k * chunk, chunk),
						.chunks = 1};
	data[7 * chunk + 100] ^= 1; /* chunk 7 did not land intact */
	assert_true(nvt_index_build(&ix, ibuf, 8192, &used, &icrc) > 0);
	sample(&r);
	r.flags = 0;
	r.source_kind = NVT_SRC_STDIN;
	r.beat_bytes = 1;
	r.data_offset = NVT_HEADER_SIZE;
	r.data_bytes = 0;
	r.durable_bytes = 3 * chunk;
	r.drop_count = 15;
	r.drop_events = 2;
	r.index_offset = NVT_HEADER_SIZE + len + 4096; /* ahead of the data, as a growing file */
	r.index_bytes = used;
	r.index_crc = icrc;
	nvt_header_block_encode(&r, blk);
	assert_int_equal(write(fd, blk, sizeof(blk)), (ssize_t)sizeof(blk));
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(pwrite(fd, ibuf, 8192, (off_t)r.index_offset), 8192);
	close(fd);
	nvt_recover_opts_default(&o);
	o.path = path;
	assert_int_equal(nvt_recover(&o, &res), 0);
	assert_int_equal(res.after.data_bytes, 7 * chunk);
	assert_int_equal(res.extended_bytes, 4 * chunk);
	assert_int_equal(res.after.drop_count, 15);
	nvt_layout_resolve(&l, path, &l);
	assert_int_equal(nvt_recording_read_index_all(&l, &res.after, &got, &err), 0);
	assert_int_equal(got.nev, 2);
	assert_int_equal(got.ev[1].data_offset, 6 * chunk);
	assert_int_equal(got.ncrc, 7);
	assert_int_equal(got.crc[6].crc32c, crc[6].crc32c);
	nvt_index_clear(&got);
	unlink(path);
	free(data);
	free(ibuf);
}

/* Beyond the checkpoint, recover follows the pattern across a drop (a forward jump at a chunk
 * boundary, within the rate's reach since the start) and indexes it; a jump inside a chunk, or
 * further than the rate can have reached (an earlier run's blocks), ends what it keeps. */
static void test_recover_across_drops(void **state)
{
	struct nvt_recording r;
	(void)state;
	/* 8 KiB chunks, checkpoint after the first; a drop of 100 beats after the second */
	assert_int_equal(recover_gap(8192, 4 * 8192, 1024, 100, 8192, &r), 4 * 8192);
	assert_int_equal(r.drop_count, 100);
	assert_int_equal(r.drop_events, 1);
	/* the same jump inside a chunk: kept up to the block before it */
	assert_int_equal(recover_gap(8192, 4 * 8192, 1100, 100, 8192, &r), 16384);
	assert_int_equal(r.drop_count, 0);
	/* 2^40 beats ahead, a second after a 1.5 GB/s start: not this recording's */
	assert_int_equal(recover_gap(8192, 4 * 8192, 1024, 1ull << 40, 8192, &r), 16384);
	assert_int_equal(r.drop_count, 0);
	/* a drop inside the checkpoint, the pattern continuing beyond it */
	assert_int_equal(recover_gap(3 * 8192, 4 * 8192, 1024, 7, 8192, &r), 4 * 8192);
	assert_int_equal(r.drop_count, 7);
}

/* Metadata lines: the one walk every reader uses, and get/set on top of it. */
static void test_meta_lines(void **state)
{
	const char *text = "core:sample_rate=2400000\nno equals sign\n\nempty=\nlast=x=y";
	const char *pos = text, *k, *v;
	size_t kn, vn;
	char buf[32];
	(void)state;

	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 1);
	assert_true(kn == 16 && !memcmp(k, "core:sample_rate", kn) && vn == 7 &&
		    !memcmp(v, "2400000", vn));
	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 1); /* the line without '=' and
								     * the empty one skipped */
	assert_true(kn == 5 && !memcmp(k, "empty", kn) && vn == 0);
	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 1);
	assert_true(kn == 4 && !memcmp(k, "last", kn) && vn == 3 && !memcmp(v, "x=y", vn));
	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 0);
	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 0);
	pos = "";
	assert_int_equal(nvt_meta_next(&pos, &k, &kn, &v, &vn), 0);

	assert_int_equal(nvt_meta_get(text, "last", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "x=y");
	assert_int_equal(nvt_meta_get(text, "core", buf, sizeof(buf)), -ENOENT); /* a prefix */
	assert_int_equal(nvt_meta_get(text, "core:sample_rate", buf, 4), -ENOSPC);
	char *m = nvt_meta_set("a=1\nb=2", "a", "3");
	assert_non_null(m);
	assert_int_equal(nvt_meta_get(m, "a", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "3");
	assert_int_equal(nvt_meta_get(m, "b", buf, sizeof(buf)), 1);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_vector),
		cmocka_unit_test(test_sha512),
		cmocka_unit_test(test_crc32c_hw_and_combine),
		cmocka_unit_test(test_header_roundtrip),
		cmocka_unit_test(test_header_damage),
		cmocka_unit_test(test_header_v1),
		cmocka_unit_test(test_header_torn),
		cmocka_unit_test(test_fdrec_roundtrip),
		cmocka_unit_test(test_index_roundtrip),
		cmocka_unit_test(test_index_damaged_after_good_record),
		cmocka_unit_test(test_index_skips_unknown_records),
		cmocka_unit_test(test_sizes_that_wrap),
		cmocka_unit_test(test_recover_unaligned),
		cmocka_unit_test(test_recover_gap_in_checkpoint),
		cmocka_unit_test(test_recover_across_drops),
		cmocka_unit_test(test_recover_by_checksums),
		cmocka_unit_test(test_sums_bounded_and_checked),
		cmocka_unit_test(test_meta_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
