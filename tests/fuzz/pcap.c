/* SPDX-License-Identifier: MIT */
/* Fuzz harness: importing a capture (record --source pcap:FILE). The input is the capture
 * file, classic pcap (either byte order, micro- or nanosecond times) or pcapng, recorded into
 * small ring chunks. Whatever the file, the import ends with a message or cleanly, and what it
 * leaves is a complete recording whose data is a clean pcapng stream (nvtape's reader, and
 * verify) holding the capture's first packets, unchanged and in order (times to the
 * nanosecond, lengths, bytes), as many as the import says; all of them when it ended cleanly. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "fuzz.h"
#include "nvtape/record.h"
#include "nvtape/verify.h"

#define MAX_INPUT (1u << 20)
#define CHUNK     (64u << 10)
#define PCAP_MAX  (256u << 10) /* the importer's largest classic record */

struct pk {
	uint64_t ts;
	uint32_t caplen, origlen;
	const uint8_t *data;
};

struct pks {
	struct pk *v;
	size_t n, cap;
	int linktype; /* of the first interface, -1 before one */
	bool isb;     /* a statistics block came (the last one must be last) */
	bool after_isb;
};

static int collect(const struct nvt_pcapng_block *b, void *arg)
{
	struct pks *l = arg;

	if (l->isb && b->type != PCAPNG_PAD)
		l->after_isb = true;
	if (b->type == PCAPNG_IDB && l->linktype < 0)
		l->linktype = b->linktype;
	if (b->type == PCAPNG_ISB)
		l->isb = true;
	if (b->type == PCAPNG_EPB || b->type == PCAPNG_SPB) {
		struct pk p = {b->ts_ns, b->caplen, b->origlen, b->data};
		fuzz_push(&l->v, &l->n, &l->cap, sizeof(*l->v), &p);
	}
	return 0;
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* The packets of a classic pcap, read by the format's rules up to the first record that does
 * not fit the file or that the importer refuses; *clean when that is the end of the file. */
static void classic(const uint8_t *d, size_t n, struct pks *l, bool *clean)
{
	uint32_t magic = rd32(d, false);
	bool swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	bool nano = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	size_t at = 24;

	l->linktype = (uint16_t)rd32(d + 20, swap);
	*clean = false;
	while (n - at >= 16) {
		uint32_t sec = rd32(d + at, swap), frac = rd32(d + at + 4, swap);
		uint32_t cap = rd32(d + at + 8, swap), orig = rd32(d + at + 12, swap);
		if (cap > PCAP_MAX || cap > n - at - 16 || frac >= (nano ? 1000000000u : 1000000u))
			return;
		struct pk p = {(uint64_t)sec * 1000000000u + (nano ? frac : frac * 1000ull), cap,
			       orig < cap ? cap : orig, d + at + 16};
		fuzz_push(&l->v, &l->n, &l->cap, sizeof(*l->v), &p);
		at += 16 + (size_t)cap;
	}
	*clean = at == n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* The recording the import left: complete, a clean pcapng stream of the capture's packets. */
static void check_recording(const char *out, const struct pks *in, bool in_clean,
			    const struct nvt_record_result *res, int rc)
{
	struct nvt_layout l;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct nvt_pcapng_reader rd;
	struct pks got = {.linktype = -1};
	struct nvt_verify_opts vo;
	struct nvt_verify_result *v = calloc(1, sizeof(*v));
	size_t n;
	uint8_t *file = fuzz_read_file(out, &n);

	FUZZ_CHECK(file && v, "read back %s", out);
	nvt_layout_single(&l, out);
	FUZZ_CHECK(nvt_recording_open(&l, &rec, &err) == 0,
		   "the import left a file that does not "
		   "open (exit %d: %s): %s",
		   rc, res->err.msg, err.msg);
	fuzz_check_open(&rec, n);
	FUZZ_CHECK(rec.complete, "the import left an incomplete recording (%s)", res->err.msg);
	FUZZ_CHECK(rec.source_kind == NVT_SRC_PCAP, "source kind %u", rec.source_kind);
	nvt_pcapng_reader_init(&rd);
	FUZZ_CHECK(nvt_pcapng_feed(&rd, file + rec.data_offset, rec.data_bytes, collect, &got,
				   &err) == 0,
		   "the imported data is not pcapng: %s", err.msg);
	FUZZ_CHECK(nvt_pcapng_reader_clean(&rd), "the imported data ends inside a block");
	FUZZ_CHECK(!got.after_isb, "blocks after the statistics block");
	nvt_pcapng_reader_free(&rd);
	FUZZ_CHECK(got.n == res->packets, "%zu packets in the recording, the import says %llu",
		   got.n, (unsigned long long)res->packets);
	FUZZ_CHECK(got.n <= in->n, "%zu packets imported from a capture of %zu", got.n, in->n);
	FUZZ_CHECK(rc || !in_clean || got.n == in->n,
		   "a clean import kept %zu packets of the capture's %zu (it stopped: %s)", got.n,
		   in->n, nvt_stop_reason_name(res->reason));
	if (got.n)
		FUZZ_CHECK(got.linktype == in->linktype, "link type %d, the capture's %d",
			   got.linktype, in->linktype);
	for (size_t i = 0; i < got.n; i++) {
		const struct pk *a = &got.v[i], *b = &in->v[i];
		FUZZ_CHECK(a->ts == b->ts && a->caplen == b->caplen && a->origlen == b->origlen &&
				   !memcmp(a->data, b->data, a->caplen),
			   "packet %zu differs from the capture's (time %llu / %llu, %u / %u bytes "
			   "of %u / %u)",
			   i, (unsigned long long)a->ts, (unsigned long long)b->ts, a->caplen,
			   b->caplen, a->origlen, b->origlen);
	}
	nvt_verify_opts_default(&vo);
	vo.path = out;
	vo.chunk_bytes = CHUNK;
	vo.chunks = 4;
	vo.qd = 2;
	FUZZ_CHECK(nvt_verify(&vo, v) == 0, "the import does not verify: %s", v->err.msg);
	FUZZ_CHECK(v->packets_walked && v->packets == got.n,
		   "verify walked %d, %llu packets of %zu", v->packets_walked,
		   (unsigned long long)v->packets, got.n);
	FUZZ_CHECK(!(v->problems & ~(unsigned)(NVT_VP_DROPS | NVT_VP_NO_DATA)),
		   "verify finds problems 0x%x in an import", v->problems);
	free(got.v);
	free(file);
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_record_opts o;
	struct nvt_record_result *res;
	struct pks in = {.linktype = -1};
	struct stat st;
	char source[700];
	const char *capture, *out = fuzz_path("import.nvt");
	bool clean = false;
	int rc;

	if (size > MAX_INPUT)
		return -1;
	res = calloc(1, sizeof(*res));
	FUZZ_CHECK(res, "out of memory");
	capture = fuzz_file(data, size);
	if (size >= 24 && rd32(data, false) == PCAPNG_SHB) {
		struct nvt_pcapng_reader rd;
		struct nvt_err err = {0};
		nvt_pcapng_reader_init(&rd);
		clean = nvt_pcapng_feed(&rd, data, size, collect, &in, &err) == 0 &&
			nvt_pcapng_reader_clean(&rd);
		nvt_pcapng_reader_free(&rd);
	} else if (size >= 24) {
		classic(data, size, &in, &clean);
	}
	unlink(out);
	snprintf(source, sizeof(source), "pcap:%s", capture);
	nvt_record_opts_init(&o);
	o.path = out;
	o.source = source;
	o.chunk_bytes = CHUNK;
	o.chunks = 4;
	o.qd = 2;
	o.stats_ns = 0;
	/* room for every packet (a block at most twice its record, and the padding it may cost
	 * as much again): an open-ended recording would reserve a GiB ahead */
	o.size_bytes = 8 * (uint64_t)size + 4 * CHUNK;
	rc = nvt_record(&o, res);
	if (rc)
		FUZZ_CHECK(rc < 0 && res->err.code && res->err.msg[0], "a failed import says why");
	if (stat(out, &st) == 0)
		check_recording(out, &in, clean, res, rc);
	else
		FUZZ_CHECK(rc, "a clean import left no recording");
	free(in.v);
	free(res);
	return 0;
}
