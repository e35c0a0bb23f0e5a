/* SPDX-License-Identifier: MIT */
/* Unit tests: pcapng blocks written by nvtape read back whole and in pieces of every size
 * (padding, statistics, nanosecond and microsecond resolutions, a big-endian section); the
 * IPv4/UDP header the udp source builds is found again; the packet sequence checks (a counter
 * in the payload, VITA-49, VDIF with its rate given or learned) count the packets missing. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/netpkt.h"
#include "format/pcapng.h"
#include "stream/pktcheck.h"

struct got {
	uint32_t type[64];
	uint64_t ts[64];
	uint32_t caplen[64];
	uint64_t drops[64];
	unsigned n;
	uint64_t recv, drop;
};

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct got *g = arg;
	if (g->n < 64) {
		g->type[g->n] = b->type;
		g->ts[g->n] = b->ts_ns;
		g->caplen[g->n] = b->caplen;
		g->drops[g->n] = b->drops;
		g->n++;
	}
	if (b->type == PCAPNG_ISB) {
		g->recv = b->isb_recv;
		g->drop = b->isb_drop;
	}
	return 0;
}

/* SHB, IDB, three packets (the second cut at a padding block), ISB */
static size_t build(uint8_t *buf)
{
	size_t n = nvt_pcapng_shb(buf, "nvtape test", "Linux");
	n += nvt_pcapng_idb(buf + n, LINKTYPE_RAW, 65535, "udp:4000", "test");
	for (unsigned i = 0; i < 3; i++) {
		uint32_t cap = 28 + 5 + i;
		nvt_ipv4_udp_header(buf + n + PCAPNG_EPB_HDR, htonl(0x0a000001), htons(1000),
				    htonl(0x0a000002), htons(4000), 5 + i);
		memset(buf + n + PCAPNG_EPB_HDR + 28, 'a' + (int)i, 5 + i);
		nvt_pcapng_epb_start(buf + n, 1700000000123456789ull + i, cap, cap);
		n += nvt_pcapng_epb_end(buf + n, cap);
		if (i == 0) {
			nvt_pcapng_pad(buf + n, 40);
			n += 40;
		}
	}
	n += nvt_pcapng_isb(buf + n, 5, 10, 2, 1, 2);
	return n;
}

static void test_round_trip_in_pieces(void **state)
{
	uint8_t buf[2048];
	size_t len = build(buf);
	(void)state;

	for (size_t piece = 1; piece <= len; piece++) {
		struct nvt_pcapng_reader r;
		struct got g = {0};
		struct nvt_err err = {0};
		nvt_pcapng_reader_init(&r);
		for (size_t at = 0; at < len; at += piece)
			assert_int_equal(nvt_pcapng_feed(&r, buf + at,
							 len - at < piece ? len - at : piece,
							 on_block, &g, &err),
					 0);
		assert_true(nvt_pcapng_reader_clean(&r));
		assert_int_equal(g.n, 7);
		assert_int_equal(g.type[0], PCAPNG_SHB);
		assert_int_equal(g.type[1], PCAPNG_IDB);
		assert_int_equal(g.type[2], PCAPNG_EPB);
		assert_int_equal(g.type[3], PCAPNG_PAD);
		assert_int_equal(g.type[6], PCAPNG_ISB);
		assert_true(g.ts[5] == 1700000000123456789ull + 2);
		assert_int_equal(g.caplen[4], 28 + 6);
		assert_true(g.recv == 10 && g.drop == 2);
		nvt_pcapng_reader_free(&r);
	}
}

static int find_udp(const struct nvt_pcapng_block *b, void *arg)
{
	struct nvt_udp_view u;
	unsigned *n = arg;

	if (b->type != PCAPNG_EPB)
		return 0;
	assert_true(nvt_udp_find(b->linktype, b->data, b->caplen, &u));
	assert_int_equal(ntohs(u.dport), 4000);
	assert_int_equal(ntohs(u.sport), 1000);
	assert_int_equal(u.len, 5 + *n);
	assert_int_equal(u.payload[0], 'a' + (int)*n);
	(*n)++;
	return 0;
}

/* IPv6: the header built is found again (raw and behind Ethernet, with a destination options
 * header in the way); a later fragment, a cut header and a loop of extension headers are not
 * UDP. */
/* the packets of a run of whole blocks (an unwritten ring chunk): padding and statistics not
 * counted; the walk stops at a length that is no block's */
static void test_count_packets(void **state)
{
	uint8_t buf[2048];
	size_t len = build(buf);
	uint32_t bad = 6;
	(void)state;

	assert_int_equal(nvt_pcapng_count_packets(buf, len), 3);
	assert_int_equal(nvt_pcapng_count_packets(buf, len - 1), 3); /* the ISB cut: not a block */
	assert_int_equal(nvt_pcapng_count_packets(buf, 0), 0);
	memcpy(buf + 4, &bad, 4); /* the section header's length: 6 */
	assert_int_equal(nvt_pcapng_count_packets(buf, len), 0);
}

static void test_ipv6_udp(void **state)
{
	uint8_t src[16] = {0xfd, 0, 2, [15] = 1}, dst[16] = {0xfd, 0, 2, [15] = 2};
	uint8_t f[256] = {0}, e[256] = {0};
	struct nvt_udp_view u;

	(void)state;
	nvt_ipv6_udp_header(f, src, htons(1000), dst, htons(4000), 10);
	memcpy(f + NVT_IPV6_UDP_HDR, "0123456789", 10);
	assert_true(nvt_udp_find(LINKTYPE_RAW, f, NVT_IPV6_UDP_HDR + 10, &u));
	assert_int_equal(u.ip, 6);
	assert_memory_equal(u.src6, src, 16);
	assert_memory_equal(u.dst6, dst, 16);
	assert_int_equal(ntohs(u.sport), 1000);
	assert_int_equal(ntohs(u.dport), 4000);
	assert_int_equal(u.len, 10);
	assert_int_equal(u.orig_len, 10);
	assert_memory_equal(u.payload, "0123456789", 10);
	/* behind Ethernet, with an 8-byte destination options header before UDP */
	e[12] = 0x86;
	e[13] = 0xdd;
	memcpy(e + 14, f, 40);
	e[14 + 6] = 60;
	e[14 + 40] = 17; /* its next header; length 0: 8 bytes */
	memcpy(e + 14 + 48, f + 40, 8 + 10);
	assert_true(nvt_udp_find(LINKTYPE_ETHERNET, e, 14 + 48 + 18, &u));
	assert_int_equal(u.ip, 6);
	assert_int_equal(ntohs(u.dport), 4000);
	assert_memory_equal(u.payload, "0123456789", 10);
	/* a fragment after the first */
	e[14 + 6] = 44;
	e[14 + 42] = 0x01; /* offset 32 */
	assert_false(nvt_udp_find(LINKTYPE_ETHERNET, e, 14 + 48 + 18, &u));
	/* cut short, and options headers that never reach UDP */
	assert_false(nvt_udp_find(LINKTYPE_RAW, f, 40 + 7, &u));
	memset(e + 14 + 40, 0, 200);
	e[14 + 6] = 0;
	assert_false(nvt_udp_find(LINKTYPE_ETHERNET, e, 14 + 40 + 200, &u));
	/* IPv4 in an IPv6 ethertype is not taken */
	nvt_ipv4_udp_header(e + 14, htonl(0x0a000001), htons(1), htonl(0x0a000002), htons(2), 0);
	assert_false(nvt_udp_find(LINKTYPE_ETHERNET, e, 14 + 28, &u));
}

static void test_udp_headers(void **state)
{
	uint8_t buf[2048];
	size_t len = build(buf);
	struct nvt_pcapng_reader r;
	struct nvt_err err = {0};
	unsigned n = 0;
	(void)state;

	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf, len, find_udp, &n, &err), 0);
	assert_int_equal(n, 3);
	nvt_pcapng_reader_free(&r);
}

static void test_bad_streams(void **state)
{
	uint8_t buf[2048];
	size_t len = build(buf);
	struct nvt_pcapng_reader r;
	struct nvt_err err = {0};
	uint32_t v;
	(void)state;

	/* a stream that does not start with a section header */
	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf + 28 * 0 + 60, len - 60, NULL, NULL, &err),
			 -EPROTO);
	nvt_pcapng_reader_free(&r);
	/* the two lengths of a block differ */
	memset(&err, 0, sizeof(err));
	memcpy(&v, buf + 4, 4);
	buf[v - 4] ^= 4;
	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf, len, NULL, NULL, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "lengths differ"));
	nvt_pcapng_reader_free(&r);
}

/* a big-endian section with microsecond timestamps (the default resolution) */
static void test_big_endian_microseconds(void **state)
{
	static const uint8_t be[] = {
		0x0a, 0x0d, 0x0d, 0x0a, 0,    0,    0,    28,   0x1a, 0x2b, 0x3c, 0x4d, 0,  1, 0,
		0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,    0,    0,    28, /* SHB
											     */
		0,    0,    0,    1,    0,    0,    0,    20,   0,    1,    0,    0,    0,  0, 0xff,
		0xff, 0,    0,    0,    20, /* IDB */
		0,    0,    0,    6,    0,    0,    0,    36,   0,    0,    0,    0,    0,  0, 0,
		1,    0,    0,    0,    2,    0,    0,    0,    4,    0,    0,    0,    4,  1, 2,
		3,    4,    0,    0,    0,    36 /* EPB: ts (1 << 32) + 2 us */
	};
	struct nvt_pcapng_reader r;
	struct nvt_err err = {0};
	struct got g = {0};
	(void)state;

	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, be, sizeof(be), on_block, &g, &err), 0);
	assert_int_equal(g.n, 3);
	assert_true(g.ts[2] == ((1ull << 32) + 2) * 1000);
	assert_int_equal(g.caplen[2], 4);
	nvt_pcapng_reader_free(&r);
}

/* a time past 2^64 ns (microsecond ticks near 2^64) is refused, not wrapped */
static void test_time_past_2554(void **state)
{
	uint8_t be[] = {0x0a, 0x0d, 0x0d, 0x0a, 0,    0,    0,    28,   0x1a, 0x2b, 0x3c, 0x4d,
			0,    1,    0,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0,    0,    0,    28,   0,    0,    0,    1,    0,    0,    0,    20,
			0,    1,    0,    0,    0,    0,    0xff, 0xff, 0,    0,    0,    20,
			0,    0,    0,    6,    0,    0,    0,    36,   0,    0,    0,    0,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0, 0,    0,    0,    4,
			0,    0,    0,    4,    1,    2,    3,    4,    0,    0,    0,    36};
	struct nvt_pcapng_reader r;
	struct nvt_err err = {0};
	struct got g = {0};
	(void)state;

	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, be, sizeof(be), on_block, &g, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "2554"));
	assert_int_equal(g.n, 2); /* the section and the interface, no packet */
	nvt_pcapng_reader_free(&r);
	/* 2^64 - 1 ns exactly (nanosecond ticks) still fits */
	memset(&err, 0, sizeof(err));
	memset(&g, 0, sizeof(g));
	uint8_t buf[512];
	size_t n = nvt_pcapng_shb(buf, "t", "Linux");
	n += nvt_pcapng_idb(buf + n, LINKTYPE_RAW, 65535, "x", "y");
	nvt_pcapng_epb_start(buf + n, UINT64_MAX, 4, 4);
	memset(buf + n + PCAPNG_EPB_HDR, 7, 4);
	n += nvt_pcapng_epb_end(buf + n, 4);
	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf, n, on_block, &g, &err), 0);
	assert_true(g.n == 3 && g.ts[2] == UINT64_MAX);
	nvt_pcapng_reader_free(&r);
}

/* epb_dropcount (what nvtape's export writes on a packet that follows a loss) is read */
static void test_epb_dropcount(void **state)
{
	uint8_t buf[512];
	uint32_t len = PCAPNG_EPB_HDR + 4 + 12 + 4 + 4, w;
	uint64_t drops = 12345678901ull;
	size_t n = nvt_pcapng_shb(buf, "t", "Linux"), epb;
	struct nvt_pcapng_reader r;
	struct nvt_err err = {0};
	struct got g = {0};
	(void)state;

	n += nvt_pcapng_idb(buf + n, LINKTYPE_RAW, 65535, "x", "y");
	epb = n;
	nvt_pcapng_epb_start(buf + n, 1000, 4, 4);
	memset(buf + n + PCAPNG_EPB_HDR, 7, 4);
	memcpy(buf + n + 4, &len, 4);
	w = 4u | 8u << 16; /* code 4, 8 bytes */
	memcpy(buf + n + PCAPNG_EPB_HDR + 4, &w, 4);
	memcpy(buf + n + PCAPNG_EPB_HDR + 8, &drops, 8);
	memset(buf + n + PCAPNG_EPB_HDR + 16, 0, 4);
	memcpy(buf + n + len - 4, &len, 4);
	n += len;
	nvt_pcapng_epb_start(buf + n, 2000, 4, 4);
	memset(buf + n + PCAPNG_EPB_HDR, 8, 4);
	n += nvt_pcapng_epb_end(buf + n, 4);
	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf, n, on_block, &g, &err), 0);
	assert_int_equal(g.n, 4);
	assert_true(g.drops[2] == drops && g.drops[3] == 0);
	assert_true(g.ts[2] == 1000 && g.caplen[2] == 4);
	nvt_pcapng_reader_free(&r);
	/* an option that runs past its block: refused */
	w = 4u | 16u << 16;
	memcpy(buf + epb + PCAPNG_EPB_HDR + 4, &w, 4);
	memset(&err, 0, sizeof(err));
	nvt_pcapng_reader_init(&r);
	assert_int_equal(nvt_pcapng_feed(&r, buf, n, NULL, NULL, &err), -EPROTO);
	assert_non_null(strstr(err.msg, "option"));
	nvt_pcapng_reader_free(&r);
}

static uint64_t u32be(struct nvt_pktcheck *c, uint32_t v)
{
	uint8_t p[8] = {0};
	v = htonl(v);
	memcpy(p + 2, &v, 4);
	return nvt_pktcheck_packet(c, p, sizeof(p));
}

static void test_counter_in_payload(void **state)
{
	struct nvt_pktcheck c;
	struct nvt_err err = {0};
	(void)state;

	assert_int_equal(nvt_pktcheck_parse("counter:u32be@2", &c, &err), 0);
	assert_true(u32be(&c, 10) == 0 && u32be(&c, 11) == 0);
	assert_true(u32be(&c, 15) == 3);
	assert_true(u32be(&c, 16) == 0);
	assert_true(c.cc.counts.gaps == 1 && c.cc.counts.gap_beats == 3);
	uint8_t shortp[3] = {0};
	assert_true(nvt_pktcheck_packet(&c, shortp, 3) == 0 && c.short_packets == 1);
	assert_int_equal(nvt_pktcheck_parse("vdif:0", &c, &err), -EINVAL);
	assert_int_equal(nvt_pktcheck_parse("bogus", &c, &err), -EINVAL);
}

static uint64_t vita(struct nvt_pktcheck *c, unsigned type, unsigned count)
{
	uint8_t p[8] = {(uint8_t)(type << 4), (uint8_t)(count & 15), 0, 4};
	return nvt_pktcheck_packet(c, p, sizeof(p));
}

static void test_vita49(void **state)
{
	struct nvt_pktcheck c;
	struct nvt_err err = {0};
	uint64_t missing = 0;
	(void)state;

	assert_int_equal(nvt_pktcheck_parse("vita49", &c, &err), 0);
	for (unsigned i = 0; i < 40; i++)
		if (i != 20 && i != 21 && i != 22)
			missing += vita(&c, 1, i);
	assert_true(vita(&c, 4, 7) == 0 && c.other_packets == 1); /* a context packet */
	assert_true(missing == 3);
}

static uint64_t vdif(struct nvt_pktcheck *c, uint32_t sec, uint32_t frame)
{
	uint8_t p[32] = {0};
	uint32_t w0 = htole32(sec), w1 = htole32(frame);
	memcpy(p, &w0, 4);
	memcpy(p + 4, &w1, 4);
	return nvt_pktcheck_packet(c, p, sizeof(p));
}

static void test_vdif(void **state)
{
	struct nvt_pktcheck c;
	struct nvt_err err = {0};
	uint64_t missing = 0;
	(void)state;

	/* the rate learned at the first change of second; a gap across the next one */
	assert_int_equal(nvt_pktcheck_parse("vdif", &c, &err), 0);
	for (uint64_t s = 100; s < 103; s++)
		for (uint32_t f = 0; f < 50; f++)
			if (!(s == 101 && f >= 48) && !(s == 102 && f < 2) &&
			    !(s == 100 && f == 10))
				missing += vdif(&c, (uint32_t)s, f);
	assert_true(c.fps == 50);
	assert_true(missing == 5);
	/* learned from a second that lost its last frame, then corrected when a frame number
	 * beyond it comes: no false gap of a second's count times the seconds (the frame lost
	 * before the rate was known is not seen: at most 1) */
	assert_int_equal(nvt_pktcheck_parse("vdif", &c, &err), 0);
	missing = 0;
	for (uint32_t f = 0; f < 49; f++)
		missing += vdif(&c, 12000000, f);
	for (uint32_t f = 0; f < 50; f++)
		missing += vdif(&c, 12000001, f);
	assert_true(c.fps == 50);
	assert_true(missing <= 1 && c.cc.counts.backward == 0);
	/* the rate given */
	assert_int_equal(nvt_pktcheck_parse("vdif:50", &c, &err), 0);
	missing = vdif(&c, 7, 49) + vdif(&c, 9, 0);
	assert_true(missing == 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_in_pieces),
		cmocka_unit_test(test_count_packets),
		cmocka_unit_test(test_udp_headers),
		cmocka_unit_test(test_ipv6_udp),
		cmocka_unit_test(test_bad_streams),
		cmocka_unit_test(test_big_endian_microseconds),
		cmocka_unit_test(test_time_past_2554),
		cmocka_unit_test(test_epb_dropcount),
		cmocka_unit_test(test_counter_in_payload),
		cmocka_unit_test(test_vita49),
		cmocka_unit_test(test_vdif),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
