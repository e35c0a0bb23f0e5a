/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the pcapng stream reader (capture imports, exports, replay) over arbitrary
 * bytes, fed whole and again in pieces whose size the first byte picks: both feeds hand out
 * the same blocks (types, lengths, packet fields) up to the same error, every block lies
 * inside the data with its packet inside the block, and the UDP finder stays inside the packet. */
#include <string.h>

#include "format/netpkt.h"
#include "format/pcapng.h"
#include "fuzz.h"

struct trace {
	uint64_t sum; /* of what the blocks said, in order */
	uint64_t blocks;
};

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct trace *t = arg;
	struct nvt_udp_view u;

	FUZZ_CHECK(b->len >= PCAPNG_MIN && b->len % 4 == 0, "block length %u", b->len);
	if (b->data) {
		FUZZ_CHECK(b->data >= b->p && b->data + b->caplen <= b->p + b->len,
			   "packet outside its block");
		if (nvt_udp_find(b->linktype, b->data, b->caplen, &u))
			FUZZ_CHECK(u.payload >= b->data && u.payload + u.len <= b->data + b->caplen,
				   "UDP payload outside the packet");
	}
	t->sum = t->sum * 31 + b->type + b->len * 7ull + b->caplen * 13ull + b->ts_ns +
		 b->isb_recv + b->isb_drop;
	t->blocks++;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_pcapng_reader r1, r2;
	struct trace t1 = {0}, t2 = {0};
	struct nvt_err e1 = {0}, e2 = {0};
	size_t piece;
	int rc1, rc2 = 0;

	if (!size)
		return 0;
	piece = data[0] % 64 + 1;
	data++;
	size--;
	nvt_pcapng_reader_init(&r1);
	nvt_pcapng_reader_init(&r2);
	rc1 = nvt_pcapng_feed(&r1, data, size, on_block, &t1, &e1);
	for (size_t at = 0; at < size && !rc2; at += piece)
		rc2 = nvt_pcapng_feed(&r2, data + at, size - at < piece ? size - at : piece,
				      on_block, &t2, &e2);
	FUZZ_CHECK(rc1 == rc2, "whole %d, in pieces %d (%s / %s)", rc1, rc2, e1.msg, e2.msg);
	FUZZ_CHECK(t1.blocks == t2.blocks && t1.sum == t2.sum, "the pieces changed the blocks");
	FUZZ_CHECK(rc1 == 0 || (e1.code && e1.msg[0]), "a refusal says why");
	FUZZ_CHECK(rc1 || r1.pos + r1.have == size, "bytes taken %llu + %zu of %zu",
		   (unsigned long long)r1.pos, r1.have, size);
	nvt_pcapng_reader_free(&r1);
	nvt_pcapng_reader_free(&r2);
	return 0;
}
