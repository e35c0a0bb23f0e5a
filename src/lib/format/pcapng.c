/* SPDX-License-Identifier: MIT */
/* pcapng blocks: written in host byte order (the byte-order magic says which), read in either.
 * The reader accepts what tcpdump, dumpcap and nvtape write: SHB, IDB (if_tsresol), EPB, SPB,
 * ISB; other block types are handed out for the caller to skip. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/pcapng.h"

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* an option with a string value; returns its bytes (0 for NULL or "") */
static size_t opt_str(uint8_t *p, uint16_t code, const char *s)
{
	size_t n = s ? strlen(s) : 0, padded;

	if (!n)
		return 0;
	if (n > 255)
		n = 255;
	padded = (n + 3) & ~(size_t)3;
	if (p) {
		put16(p, code);
		put16(p + 2, (uint16_t)n);
		memset(p + 4, 0, padded);
		memcpy(p + 4, s, n);
	}
	return 4 + padded;
}

static size_t opt_u64(uint8_t *p, uint16_t code, uint64_t v)
{
	put16(p, code);
	put16(p + 2, 8);
	put64(p + 4, v);
	return 12;
}

/* a timestamp as two 32-bit halves (high first), in the interface's units (ns) */
static size_t opt_ts(uint8_t *p, uint16_t code, uint64_t ns)
{
	put16(p, code);
	put16(p + 2, 8);
	put32(p + 4, (uint32_t)(ns >> 32));
	put32(p + 8, (uint32_t)ns);
	return 12;
}

static size_t finish(uint8_t *p, uint32_t type, size_t len)
{
	put32(p + len, 0); /* opt_endofopt */
	len += 4 + 4;
	put32(p, type);
	put32(p + 4, (uint32_t)len);
	put32(p + len - 4, (uint32_t)len);
	return len;
}

size_t nvt_pcapng_shb(void *buf, const char *appl, const char *os)
{
	uint8_t *p = buf;
	size_t len = 24;

	put32(p + 8, PCAPNG_BOM);
	put16(p + 12, 1);
	put16(p + 14, 0);
	put64(p + 16, UINT64_MAX); /* section length unknown */
	len += opt_str(p + len, 3, os);
	len += opt_str(p + len, 4, appl);
	return finish(p, PCAPNG_SHB, len);
}

size_t nvt_pcapng_idb_bytes(const char *name, const char *desc)
{
	return 16 + opt_str(NULL, 2, name) + opt_str(NULL, 3, desc) + 8 + 8;
}

size_t nvt_pcapng_idb(void *buf, uint16_t linktype, uint32_t snaplen, const char *name,
		      const char *desc)
{
	uint8_t *p = buf;
	size_t len = 16;

	put16(p + 8, linktype);
	put16(p + 10, 0);
	put32(p + 12, snaplen);
	len += opt_str(p + len, 2, name);
	len += opt_str(p + len, 3, desc);
	put16(p + len, 9); /* if_tsresol: 10^-9 s */
	put16(p + len + 2, 1);
	put32(p + len + 4, 0);
	p[len + 4] = 9;
	len += 8;
	return finish(p, PCAPNG_IDB, len);
}

void nvt_pcapng_epb_start(void *buf, uint64_t ts_ns, uint32_t caplen, uint32_t origlen)
{
	uint8_t *p = buf;

	put32(p, PCAPNG_EPB);
	put32(p + 4, nvt_pcapng_epb_bytes(caplen));
	put32(p + 8, 0);
	put32(p + 12, (uint32_t)(ts_ns >> 32));
	put32(p + 16, (uint32_t)ts_ns);
	put32(p + 20, caplen);
	put32(p + 24, origlen);
}

size_t nvt_pcapng_epb_end(void *buf, uint32_t caplen)
{
	uint8_t *p = buf;
	uint32_t len = nvt_pcapng_epb_bytes(caplen);

	memset(p + PCAPNG_EPB_HDR + caplen, 0, len - 4 - PCAPNG_EPB_HDR - caplen);
	put32(p + len - 4, len);
	return len;
}

void nvt_pcapng_pad(void *buf, size_t bytes)
{
	uint8_t *p = buf;

	put32(p, PCAPNG_PAD);
	put32(p + 4, (uint32_t)bytes);
	memset(p + 8, 0, bytes - 12);
	put32(p + bytes - 4, (uint32_t)bytes);
}

size_t nvt_pcapng_isb(void *buf, uint64_t ts_ns, uint64_t recv, uint64_t drop, uint64_t start_ns,
		      uint64_t end_ns)
{
	uint8_t *p = buf;
	size_t len = 20;

	put32(p + 8, 0);
	put32(p + 12, (uint32_t)(ts_ns >> 32));
	put32(p + 16, (uint32_t)ts_ns);
	len += opt_ts(p + len, 2, start_ns);
	len += opt_ts(p + len, 3, end_ns);
	len += opt_u64(p + len, 4, recv);
	len += opt_u64(p + len, 5, drop);
	return finish(p, PCAPNG_ISB, len);
}

uint64_t nvt_pcapng_count_packets(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t n = 0;
	uint32_t type, bytes;

	for (size_t at = 0; len - at >= PCAPNG_MIN; at += bytes) {
		memcpy(&type, p + at, 4);
		memcpy(&bytes, p + at + 4, 4);
		if (bytes < PCAPNG_MIN || bytes % 4 || bytes > len - at)
			break;
		n += type == PCAPNG_EPB || type == PCAPNG_SPB;
	}
	return n;
}

/* ---- reading ---- */

void nvt_pcapng_reader_init(struct nvt_pcapng_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void nvt_pcapng_reader_free(struct nvt_pcapng_reader *r)
{
	free(r->carry);
	r->carry = NULL;
	r->cap = r->have = 0;
}

static uint32_t get32(const struct nvt_pcapng_reader *r, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t get16(const struct nvt_pcapng_reader *r, const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint64_t get64(const struct nvt_pcapng_reader *r, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

static int bad(struct nvt_pcapng_reader *r, struct nvt_err *err, uint64_t at, const char *what)
{
	(void)r;
	nvt_err_set(err, EPROTO, "not a pcapng stream at byte %llu of the data: %s",
		    (unsigned long long)at, what);
	return -EPROTO;
}

/* The options of a block: calls fn for each (code, length, value) inside [p, end). */
static int walk_opts(const struct nvt_pcapng_reader *r, const uint8_t *p, const uint8_t *end,
		     void (*fn)(const struct nvt_pcapng_reader *r, uint16_t code, uint16_t len,
				const uint8_t *v, void *arg),
		     void *arg)
{
	while (end - p >= 4) {
		uint16_t code = get16(r, p), len = get16(r, p + 2);
		size_t padded = ((size_t)len + 3) & ~(size_t)3;
		if (code == 0)
			return 0;
		if ((size_t)(end - p - 4) < padded)
			return -EPROTO;
		fn(r, code, len, p + 4, arg);
		p += 4 + padded;
	}
	return 0;
}

static void idb_opt(const struct nvt_pcapng_reader *r, uint16_t code, uint16_t len,
		    const uint8_t *v, void *arg)
{
	uint64_t *res = arg; /* res[0] mul, res[1] div */

	(void)r;
	if (code != 9 || len < 1)
		return;
	unsigned e = v[0] & 0x7f;
	uint64_t per_s = 1;
	if (v[0] & 0x80) {
		if (e > 63)
			return;
		per_s = 1ull << e;
	} else {
		if (e > 19)
			return;
		while (e--)
			per_s *= 10;
	}
	/* ticks per second per_s: ns = ticks * 1e9 / per_s */
	if (per_s <= 1000000000ull && 1000000000ull % per_s == 0) {
		res[0] = 1000000000ull / per_s;
		res[1] = 1;
	} else {
		res[0] = 1000000000ull;
		res[1] = per_s;
	}
}

static void isb_opt(const struct nvt_pcapng_reader *r, uint16_t code, uint16_t len,
		    const uint8_t *v, void *arg)
{
	struct nvt_pcapng_block *b = arg;

	if (len != 8)
		return;
	if (code == 4) {
		b->isb_recv = get64(r, v);
		b->isb_have |= NVT_PCAPNG_ISB_RECV;
	} else if (code == 5) {
		b->isb_drop = get64(r, v);
		b->isb_have |= NVT_PCAPNG_ISB_DROP;
	}
}

static void epb_opt(const struct nvt_pcapng_reader *r, uint16_t code, uint16_t len,
		    const uint8_t *v, void *arg)
{
	struct nvt_pcapng_block *b = arg;

	if (code == 4 && len == 8) /* epb_dropcount */
		b->drops = get64(r, v);
}

/* A time in the interface's ticks as ns since the epoch; false when that is past 2^64 ns (the
 * year 2554): a damaged or foreign timestamp nvtape cannot keep. */
static bool ticks_ns(const struct nvt_pcapng_reader *r, uint32_t ifid, uint64_t t, uint64_t *ns)
{
	unsigned __int128 v = (unsigned __int128)t * r->ifs[ifid].ts_mul / r->ifs[ifid].ts_div;

	if (v > UINT64_MAX)
		return false;
	*ns = (uint64_t)v;
	return true;
}

/* One whole block at p (len bytes, already checked to be one block). */
static int block(struct nvt_pcapng_reader *r, const uint8_t *p, uint32_t len,
		 int (*fn)(const struct nvt_pcapng_block *b, void *arg), void *arg,
		 struct nvt_err *err)
{
	struct nvt_pcapng_block b;
	uint64_t at = r->pos;

	memset(&b, 0, sizeof(b));
	b.p = p;
	b.len = len;
	b.type = get32(r, p);
	switch (b.type) {
	case PCAPNG_SHB:
		r->nif = 0;
		break;
	case PCAPNG_IDB: {
		uint64_t res[2] = {1000, 1}; /* default 10^-6 s */
		if (len < 20)
			return bad(r, err, at,
				   "an interface description block shorter than 20 bytes");
		if (r->nif == NVT_PCAPNG_IFACES) {
			nvt_err_set(err, EPROTO,
				    "pcapng at byte %llu: more than %d interfaces in one section "
				    "(nvtape reads %d)",
				    (unsigned long long)at, NVT_PCAPNG_IFACES, NVT_PCAPNG_IFACES);
			return -EPROTO;
		}
		b.linktype = get16(r, p + 8);
		b.snaplen = get32(r, p + 12);
		if (walk_opts(r, p + 16, p + len - 4, idb_opt, res))
			return bad(r, err, at, "an interface option runs past its block");
		r->ifs[r->nif].linktype = b.linktype;
		r->ifs[r->nif].snaplen = b.snaplen;
		r->ifs[r->nif].ts_mul = res[0];
		r->ifs[r->nif].ts_div = res[1];
		r->nif++;
		break;
	}
	case PCAPNG_EPB:
		if (len < PCAPNG_EPB_HDR + 4)
			return bad(r, err, at, "a packet block shorter than its header");
		b.ifid = get32(r, p + 8);
		b.caplen = get32(r, p + 20);
		b.origlen = get32(r, p + 24);
		if (b.ifid >= r->nif)
			return bad(r, err, at, "a packet of an interface not described");
		if (b.caplen > len - PCAPNG_EPB_HDR - 4)
			return bad(r, err, at, "a packet longer than its block");
		if (!ticks_ns(r, b.ifid, (uint64_t)get32(r, p + 12) << 32 | get32(r, p + 16),
			      &b.ts_ns))
			return bad(r, err, at,
				   "a packet's time is past the year 2554 (more than 2^64 ns since "
				   "1970 in its interface's units): a damaged timestamp");
		b.data = p + PCAPNG_EPB_HDR;
		b.linktype = r->ifs[b.ifid].linktype;
		/* the options after the packet: its drop count */
		if (len - PCAPNG_EPB_HDR - 4 - ((b.caplen + 3u) & ~3u) >= 4 &&
		    walk_opts(r, p + PCAPNG_EPB_HDR + ((b.caplen + 3u) & ~3u), p + len - 4, epb_opt,
			      &b))
			return bad(r, err, at, "a packet option runs past its block");
		break;
	case PCAPNG_SPB:
		if (len < 16)
			return bad(r, err, at, "a simple packet block shorter than 16 bytes");
		if (!r->nif)
			return bad(r, err, at, "a packet before any interface");
		b.origlen = get32(r, p + 8);
		b.caplen = b.origlen;
		if (r->ifs[0].snaplen && b.caplen > r->ifs[0].snaplen)
			b.caplen = r->ifs[0].snaplen;
		if (b.caplen > len - 16)
			return bad(r, err, at, "a packet longer than its block");
		b.data = p + 12;
		b.linktype = r->ifs[0].linktype;
		break;
	case PCAPNG_ISB:
		if (len < 24)
			return bad(r, err, at, "a statistics block shorter than 24 bytes");
		b.ifid = get32(r, p + 8);
		if (walk_opts(r, p + 20, p + len - 4, isb_opt, &b))
			return bad(r, err, at, "a statistics option runs past its block");
		break;
	default:
		break;
	}
	return fn ? fn(&b, arg) : 0;
}

/* The length of the block starting at p (12 bytes there at least); 0 with err set when it is
 * not a block. A section header sets the byte order. */
static uint32_t block_len(struct nvt_pcapng_reader *r, const uint8_t *p, struct nvt_err *err)
{
	uint32_t type, len, bom;

	memcpy(&type, p, 4);
	if (type == PCAPNG_SHB) {
		memcpy(&bom, p + 8, 4);
		if (bom == PCAPNG_BOM)
			r->swap = false;
		else if (bom == __builtin_bswap32(PCAPNG_BOM))
			r->swap = true;
		else {
			bad(r, err, r->pos, "a section header with no byte-order magic");
			return 0;
		}
		r->started = true;
	} else if (!r->started) {
		bad(r, err, r->pos, "the stream does not start with a section header block");
		return 0;
	}
	len = get32(r, p + 4);
	if (len < PCAPNG_MIN || len % 4 || len > PCAPNG_MAX_BLOCK) {
		bad(r, err, r->pos,
		    len > PCAPNG_MAX_BLOCK ? "a block longer than 16 MiB"
					   : "a block length below 12 or not a multiple of 4");
		return 0;
	}
	return len;
}

int nvt_pcapng_feed(struct nvt_pcapng_reader *r, const void *buf, size_t n,
		    int (*fn)(const struct nvt_pcapng_block *b, void *arg), void *arg,
		    struct nvt_err *err)
{
	const uint8_t *p = buf;
	int rc;

	while (n) {
		if (r->have || r->need || n < PCAPNG_MIN) {
			/* gather a straddling block in carry: its first 12 bytes, then the rest */
			size_t want = r->have < PCAPNG_MIN ? PCAPNG_MIN : r->need, take;
			if (want > r->cap) {
				size_t cap = want < 65536 ? 65536 : want;
				uint8_t *c = realloc(r->carry, cap);
				if (!c) {
					nvt_err_set(err, ENOMEM, "no memory for a %zu-byte block",
						    want);
					return -ENOMEM;
				}
				r->carry = c;
				r->cap = cap;
			}
			take = want - r->have < n ? want - r->have : n;
			memcpy(r->carry + r->have, p, take);
			r->have += take;
			p += take;
			n -= take;
			if (r->have < want)
				return 0;
			if (want == PCAPNG_MIN) {
				uint32_t len = block_len(r, r->carry, err);
				if (!len)
					return -EPROTO;
				r->need = len;
				if (len > PCAPNG_MIN)
					continue;
			}
			if (get32(r, r->carry + r->need - 4) != r->need)
				return bad(r, err, r->pos, "a block's two lengths differ");
			rc = block(r, r->carry, (uint32_t)r->need, fn, arg, err);
			r->pos += r->need;
			r->have = r->need = 0;
			if (rc)
				return rc;
			continue;
		}
		uint32_t len = block_len(r, p, err);
		if (!len)
			return -EPROTO;
		if (len > n) {
			r->need = len;
			continue; /* gathered above */
		}
		if (get32(r, p + len - 4) != len)
			return bad(r, err, r->pos, "a block's two lengths differ");
		rc = block(r, p, len, fn, arg, err);
		r->pos += len;
		p += len;
		n -= len;
		if (rc)
			return rc;
	}
	return 0;
}
