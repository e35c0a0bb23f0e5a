/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the packet sources' pcapng writer (stream/pktwriter.c) over a real recording.
 * The input is 8 bytes of set-up (chunk size and count, a live source that drops on a full
 * ring or a file that waits, a size limit, the link type) and then 4-byte steps: a packet of
 * a fuzzed length and time, packets lost upstream, a pause. Whatever the steps: the recording
 * closes complete within its size, its data is a clean pcapng stream (section, interface,
 * then packets and padding, the statistics block last) whose blocks never straddle a chunk,
 * holding every packet committed, unchanged and in order; every packet offered is written,
 * dropped for want of room, or refused at the stop; the drop index counts exactly the packets
 * reported lost, where the data was; the statistics block says what the source told it. */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "format/index.h"
#include "format/pcapng.h"
#include "fuzz.h"
#include "nvtape/recorder.h"
#include "nvtape/verify.h"
#include "stream/pktwriter.h"

#define SETUP     8
#define MAX_STEPS 4096

struct pk {
	uint64_t ts;
	uint32_t caplen, origlen;
	uint8_t seed;
};

struct run {
	struct pk *v;
	size_t n, cap;
	uint64_t offered, full, refused, lost; /* lost: reported through nvt_pktw_dropped */
	uint64_t chunk;
	uint16_t linktype;
};

static void fill(uint8_t *p, uint32_t n, uint8_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

struct walk {
	const struct run *r;
	uint64_t chunk, pos_base;
	const struct nvt_pcapng_reader *rd;
	size_t blocks, packets;
	bool isb, after_isb;
	uint64_t isb_recv, isb_drop;
	unsigned isb_have;
};

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct walk *w = arg;
	uint64_t at = w->rd->pos;

	FUZZ_CHECK(at / w->chunk == (at + b->len - 1) / w->chunk,
		   "a block of %u bytes at %llu straddles a %llu-byte chunk", b->len,
		   (unsigned long long)at, (unsigned long long)w->chunk);
	if (w->blocks == 0)
		FUZZ_CHECK(b->type == PCAPNG_SHB, "the data starts with block type 0x%x", b->type);
	else if (w->blocks == 1)
		FUZZ_CHECK(b->type == PCAPNG_IDB && b->linktype == w->r->linktype,
			   "block type 0x%x (link type %u) after the section header", b->type,
			   b->linktype);
	else
		FUZZ_CHECK(b->type == PCAPNG_EPB || b->type == PCAPNG_PAD || b->type == PCAPNG_ISB,
			   "block type 0x%x among the packets", b->type);
	FUZZ_CHECK(!w->isb, "a block after the statistics block");
	w->blocks++;
	if (b->type == PCAPNG_ISB) {
		w->isb = true;
		w->isb_recv = b->isb_recv;
		w->isb_drop = b->isb_drop;
		w->isb_have = b->isb_have;
	}
	if (b->type != PCAPNG_EPB)
		return 0;
	FUZZ_CHECK(w->packets < w->r->n, "more packets than were committed");
	const struct pk *p = &w->r->v[w->packets];
	uint8_t *want = malloc(p->caplen ? p->caplen : 1);
	FUZZ_CHECK(want, "out of memory");
	fill(want, p->caplen, p->seed);
	FUZZ_CHECK(b->ts_ns == p->ts && b->caplen == p->caplen && b->origlen == p->origlen &&
			   !memcmp(b->data, want, p->caplen),
		   "packet %zu is not the one committed (time %llu / %llu, %u / %u bytes)",
		   w->packets, (unsigned long long)b->ts_ns, (unsigned long long)p->ts, b->caplen,
		   p->caplen);
	free(want);
	w->packets++;
	return 0;
}

static void check(const char *path, const struct run *run, const struct nvt_pktw *pw,
		  uint64_t size_limit, const struct nvt_record_result *res)
{
	struct nvt_layout l;
	struct nvt_recording rec;
	struct nvt_index ix;
	struct nvt_err err = {0};
	struct nvt_pcapng_reader rd;
	struct walk w = {.r = run, .chunk = run->chunk, .rd = &rd};
	struct nvt_verify_opts vo;
	struct nvt_verify_result *v = calloc(1, sizeof(*v));
	uint64_t sum;
	size_t n;
	uint8_t *file = fuzz_read_file(path, &n);

	FUZZ_CHECK(file && v, "read back %s", path);
	nvt_layout_single(&l, path);
	FUZZ_CHECK(nvt_recording_open(&l, &rec, &err) == 0, "the recording does not open: %s",
		   err.msg);
	fuzz_check_open(&rec, n);
	FUZZ_CHECK(rec.complete, "the recording is incomplete (%s)", res->err.msg);
	FUZZ_CHECK(rec.data_bytes == pw->bytes, "%llu data bytes, the writer committed %llu",
		   (unsigned long long)rec.data_bytes, (unsigned long long)pw->bytes);
	FUZZ_CHECK(!size_limit || rec.data_bytes <= size_limit,
		   "%llu data bytes, the size limit is %llu", (unsigned long long)rec.data_bytes,
		   (unsigned long long)size_limit);
	nvt_pcapng_reader_init(&rd);
	FUZZ_CHECK(nvt_pcapng_feed(&rd, file + rec.data_offset, rec.data_bytes, on_block, &w,
				   &err) == 0,
		   "the data is not pcapng: %s", err.msg);
	FUZZ_CHECK(nvt_pcapng_reader_clean(&rd), "the data ends inside a block");
	nvt_pcapng_reader_free(&rd);
	FUZZ_CHECK(w.packets == run->n && pw->packets == run->n,
		   "%zu packets in the data, %llu written, %zu committed", w.packets,
		   (unsigned long long)pw->packets, run->n);
	FUZZ_CHECK(pw->begun == (w.blocks >= 2), "begun %d with %zu blocks", pw->begun, w.blocks);
	if (w.isb)
		FUZZ_CHECK(
			w.isb_have == (NVT_PCAPNG_ISB_RECV | NVT_PCAPNG_ISB_DROP) &&
				w.isb_recv == run->offered && w.isb_drop == run->full + run->lost,
			"the statistics block says %llu received, %llu dropped (0x%x)",
			(unsigned long long)w.isb_recv, (unsigned long long)w.isb_drop, w.isb_have);
	FUZZ_CHECK(nvt_recording_read_index_all(&l, &rec, &ix, &err) == 0,
		   "the index does not read: %s", err.msg);
	sum = fuzz_drop_events_sum(&ix, rec.data_bytes);
	FUZZ_CHECK(sum == rec.drop_count && rec.drop_count == run->full + run->lost,
		   "%llu packets dropped in the index, %llu in the header, %llu reported",
		   (unsigned long long)sum, (unsigned long long)rec.drop_count,
		   (unsigned long long)(run->full + run->lost));
	nvt_index_clear(&ix);
	nvt_verify_opts_default(&vo);
	vo.path = path;
	vo.chunk_bytes = run->chunk;
	vo.chunks = 4;
	vo.qd = 2;
	FUZZ_CHECK(nvt_verify(&vo, v) == 0, "the recording does not verify: %s", v->err.msg);
	FUZZ_CHECK(v->packets_walked && v->packets == run->n, "verify walked %d, %llu packets",
		   v->packets_walked, (unsigned long long)v->packets);
	FUZZ_CHECK(!(v->problems & ~(unsigned)(NVT_VP_DROPS | NVT_VP_NO_DATA)),
		   "verify finds problems 0x%x", v->problems);
	free(v);
	free(file);
}

/* The captured length of a packet step: 15 bits, and 65536 more with the step's top bit. */
static uint32_t step_caplen(const uint8_t *s)
{
	return (uint32_t)(s[1] | (s[2] & 0x7f) << 8) + (s[0] & 0x80 ? 65536u : 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_record_opts o;
	struct nvt_record_result *res;
	struct nvt_recorder *r;
	struct nvt_source_args a = {0};
	struct nvt_pktw w;
	struct nvt_err err = {0};
	struct run run = {0};
	const char *path = fuzz_path("packets.nvt");
	uint64_t ts = 1700000000000000000ull;
	uint16_t limit16;
	bool live, stopped = false;
	int rc;

	if (size < SETUP || (size - SETUP) / 4 > MAX_STEPS)
		return -1;
	res = calloc(1, sizeof(*res));
	FUZZ_CHECK(res, "out of memory");
	run.chunk = (1u + data[0] % 8) * 4096u;
	live = data[1] & 0x80;
	memcpy(&limit16, data + 2, 2);
	memcpy(&run.linktype, data + 4, 2);
	unlink(path);
	nvt_record_opts_init(&o);
	o.path = path;
	o.chunk_bytes = run.chunk;
	o.chunks = 2 + (data[1] & 0x7f) % 6;
	o.qd = 2;
	o.stats_ns = 0;
	/* the recording's own limit: the script's, or room for every packet it may offer (a block,
	 * and the padding it may cost before it), not the GiB an open-ended one reserves */
	o.size_bytes = (uint64_t)limit16 * 64;
	for (size_t at = SETUP; !limit16 && at + 4 <= size; at += 4)
		if ((data[at] & 3) < 2)
			o.size_bytes += nvt_pcapng_epb_bytes(step_caplen(data + at)) + run.chunk;
	if (!limit16)
		o.size_bytes += 2 * run.chunk;
	o.source_kind = NVT_SRC_UDP;
	o.source_name = "udp";
	o.producer_times_duration = true;
	rc = nvt_recorder_open(&o, &r, &err);
	FUZZ_CHECK(rc == 0, "the recording does not open: %s", err.msg);
	a.size_bytes = (uint64_t)limit16 * 64;
	nvt_pktw_init(&w, r, &a, live);
	if (nvt_pktw_start(&w, run.linktype, 65535, "udp:4000", "fuzz") != 0)
		stopped = true;
	for (size_t at = SETUP; at + 4 <= size && !stopped; at += 4) {
		const uint8_t *s = data + at;
		switch (s[0] & 3) {
		case 0:
		case 1: { /* a packet */
			uint32_t caplen =
				(uint32_t)(s[1] | (s[2] & 0x7f) << 8) + (s[0] & 0x80 ? 65536u : 0);
			uint8_t *p;
			enum nvt_pktw_status st;
			ts += (uint64_t)s[3] << ((s[0] >> 2) & 31);
			run.offered++;
			st = nvt_pktw_reserve(&w, caplen, &p);
			if (st == NVT_PKTW_FULL) {
				run.full++;
				nvt_pktw_dropped(&w, 1);
			} else if (st == NVT_PKTW_STOP) {
				run.refused++;
				stopped = true;
				if (w.too_big_bytes)
					FUZZ_CHECK(
						w.too_big_bytes == nvt_pcapng_epb_bytes(caplen) &&
							w.too_big_bytes + PCAPNG_MIN > run.chunk,
						"a %u-byte packet too big for a %llu-byte chunk: "
						"%zu",
						caplen, (unsigned long long)run.chunk,
						w.too_big_bytes);
			} else {
				struct pk k = {ts, caplen, caplen + (s[2] & 0x80 ? s[3] : 0u),
					       (uint8_t)(s[1] ^ s[3])};
				fill(p, caplen, k.seed);
				nvt_pktw_commit(&w, ts, caplen, k.origlen);
				if (run.n == run.cap) {
					struct pk *m = realloc(
						run.v, (run.cap = run.cap ? run.cap * 2 : 256) *
							       sizeof(*m));
					FUZZ_CHECK(m, "out of memory");
					run.v = m;
				}
				run.v[run.n++] = k;
			}
			break;
		}
		case 2: /* packets lost upstream */
			nvt_pktw_dropped(&w, s[1] + 1u);
			run.lost += s[1] + 1u;
			break;
		default: /* a pause: a live source lets the drive catch up */
			if (live)
				sched_yield();
		}
	}
	FUZZ_CHECK(run.offered == run.n + run.full + run.refused,
		   "%llu packets offered, %zu written, %llu dropped, %llu refused",
		   (unsigned long long)run.offered, run.n, (unsigned long long)run.full,
		   (unsigned long long)run.refused);
	nvt_pktw_finish(&w, run.offered, run.full + run.lost);
	rc = nvt_recorder_close(r, res);
	FUZZ_CHECK(rc == 0, "the recording did not end cleanly: %s", res->err.msg);
	check(path, &run, &w, o.size_bytes - o.size_bytes % 4, res);
	free(run.v);
	free(res);
	return 0;
}
