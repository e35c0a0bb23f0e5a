/* SPDX-License-Identifier: MIT */
/* Export of a packet recording as a standalone pcapng or pcap file. The data section is read
 * from its start (for the section and interface blocks) and checked against the chunk
 * checksums; padding blocks are left out; the packets inside the range are written. In pcapng
 * every drop event of the index becomes the epb_dropcount option of the first packet after it,
 * so Wireshark shows where packets were lost; pcap has no place for that (counted in the
 * result). The recording's statistics block goes with an export that reaches its end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/export_int.h"
#include "format/pcapng.h"

#define OUTBUF (4u << 20)

struct pexp {
	const struct nvt_export_opts *o;
	const struct nvt_index *ix;
	struct nvt_export_result *res;
	struct nvt_pcapng_reader rd;
	int fd;
	uint8_t *out;
	size_t fill;
	uint64_t from_ns, to_ns; /* time range, or 0 .. UINT64_MAX */
	uint64_t ev;             /* next drop event */
	uint64_t pending_drop;   /* drops before the next packet written */
	int linktype;            /* pcap: the one link type, -1 before the first interface */
	bool header_done;
	bool ts_relative_from, ts_relative_to;
	uint64_t seen, seen_first_ns, seen_last_ns; /* packets read, in the range or not */
};

static int flush(struct pexp *x)
{
	int rc = nvt_export_write(x->fd, x->out, x->fill, x->o->interrupt, x->res);

	x->fill = 0;
	return rc;
}

static int out(struct pexp *x, const void *p, size_t n)
{
	if (x->fill + n > OUTBUF && flush(x))
		return -EIO;
	if (n > OUTBUF) {
		x->fill = n;
		uint8_t *keep = x->out;
		x->out = (uint8_t *)p;
		int rc = flush(x);
		x->out = keep;
		return rc;
	}
	memcpy(x->out + x->fill, p, n);
	x->fill += n;
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* An EPB as it is, or with an epb_dropcount option when drops come before it (only to a block
 * that has no options of its own; the recording's blocks have none). */
static int out_epb(struct pexp *x, const struct nvt_pcapng_block *b)
{
	uint32_t body = PCAPNG_EPB_HDR + ((b->caplen + 3u) & ~3u);
	uint8_t tail[24];

	if (!x->pending_drop || b->len != body + 4 || x->rd.swap)
		return out(x, b->p, b->len);
	uint32_t len = b->len + 16;
	uint8_t head[8];
	put32(head, PCAPNG_EPB);
	put32(head + 4, len);
	if (out(x, head, 8) || out(x, b->p + 8, body - 8))
		return -EIO;
	put32(tail, 4 | 8u << 16); /* epb_dropcount, 8 bytes */
	memcpy(tail + 4, &x->pending_drop, 8);
	put32(tail + 12, 0); /* opt_endofopt */
	put32(tail + 16, len);
	return out(x, tail, 20);
}

static int out_pcap_header(struct pexp *x, const struct nvt_pcapng_block *b)
{
	uint8_t h[24];
	uint32_t magic = 0xa1b23c4du; /* nanosecond timestamps */
	uint16_t v[2] = {2, 4};
	uint32_t zero = 0, snap = b->snaplen ? b->snaplen : 262144, lt = b->linktype;

	memcpy(h, &magic, 4);
	memcpy(h + 4, v, 4);
	memcpy(h + 8, &zero, 4);
	memcpy(h + 12, &zero, 4);
	memcpy(h + 16, &snap, 4);
	memcpy(h + 20, &lt, 4);
	return out(x, h, 24);
}

static int out_pcap_packet(struct pexp *x, const struct nvt_pcapng_block *b)
{
	uint32_t h[4] = {(uint32_t)(b->ts_ns / 1000000000u), (uint32_t)(b->ts_ns % 1000000000u),
			 b->caplen, b->origlen};

	if (b->ts_ns / 1000000000u > UINT32_MAX) {
		nvt_err_param(&x->res->err,
			      "the packet at data offset %llu is dated %llu s after 1970, past "
			      "pcap's 32-bit seconds (2106-02-07): export it as pcapng",
			      (unsigned long long)x->rd.pos,
			      (unsigned long long)(b->ts_ns / 1000000000u));
		return -EINVAL;
	}
	if (out(x, h, sizeof(h)))
		return -EIO;
	return out(x, b->data, b->caplen);
}

/* The first packet's time sets the start of relative ranges: an empty one is refused. */
static int set_range(struct pexp *x, uint64_t first_ns)
{
	return nvt_export_times(x->o, first_ns, &x->from_ns, &x->to_ns, x->res) ? -EINVAL : 0;
}

static bool in_range(struct pexp *x, uint64_t at, uint64_t ts)
{
	if (x->o->time)
		return ts >= x->from_ns && ts < x->to_ns;
	return at >= x->res->offset && at < x->res->offset + x->res->length;
}

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct pexp *x = arg;
	struct nvt_export_result *res = x->res;
	uint64_t at = x->rd.pos; /* the block's data offset */
	bool pcap = x->o->format == NVT_EXPORT_PCAP;

	/* drop events up to here belong before the next packet */
	while (x->ev < x->ix->nev && x->ix->ev[x->ev].data_offset <= at) {
		if (x->header_done || !x->o->time)
			x->pending_drop += x->ix->ev[x->ev].beats;
		x->ev++;
	}
	switch (b->type) {
	case PCAPNG_SHB:
		if (x->header_done && pcap) {
			nvt_err_param(&res->err, "the data holds a second pcapng section: export "
						 "it as pcapng");
			return -EINVAL;
		}
		return pcap ? 0 : out(x, b->p, b->len);
	case PCAPNG_IDB:
		if (pcap) {
			if (x->linktype >= 0) {
				if (x->linktype == b->linktype)
					return 0;
				nvt_err_param(&res->err,
					      "the recording has interfaces of two link types (%d "
					      "and %u): pcap holds one, export as pcapng",
					      x->linktype, b->linktype);
				return -EINVAL;
			}
			x->linktype = b->linktype;
			return out_pcap_header(x, b);
		}
		return out(x, b->p, b->len);
	case PCAPNG_EPB:
	case PCAPNG_SPB:
		if (!x->header_done) { /* the first packet: relative times count from it */
			if (x->o->time && set_range(x, b->ts_ns))
				return -EINVAL;
			x->header_done = true;
			x->seen_first_ns = b->ts_ns;
		}
		x->seen++;
		x->seen_last_ns = b->ts_ns;
		if (!in_range(x, at, b->ts_ns)) {
			if (!res->packets)
				x->pending_drop = 0; /* drops before the range are not its own */
			return 0;
		}
		if (!res->packets)
			res->first_ns = b->ts_ns;
		res->last_ns = b->ts_ns;
		res->packets++;
		res->packets_dropped += x->pending_drop;
		int rc = pcap                    ? out_pcap_packet(x, b)
			 : b->type == PCAPNG_EPB ? out_epb(x, b)
						 : out(x, b->p, b->len);
		x->pending_drop = 0;
		return rc;
	case PCAPNG_ISB:
		/* the recording's own counts (its last block): kept when the export reaches the
		 * end */
		if (pcap || (x->o->time ? (x->o->time & NVT_EXPORT_TO) != 0 : !in_range(x, at, 0)))
			return 0;
		return out(x, b->p, b->len);
	case PCAPNG_PAD:
		return 0;
	default:
		return pcap ? 0 : out(x, b->p, b->len); /* blocks nvtape does not know */
	}
}

static int feed(void *ctx, const uint8_t *buf, uint64_t k, uint64_t at,
		struct nvt_export_result *res)
{
	struct pexp *x = ctx;

	(void)at;
	return nvt_pcapng_feed(&x->rd, buf, k, on_block, x, &res->err);
}

int nvt_export_packets(const struct nvt_export_opts *o, const struct nvt_layout *L,
		       const struct nvt_index *ix, int fd, struct nvt_export_result *res)
{
	struct pexp x = {.o = o, .ix = ix, .res = res, .fd = fd, .linktype = -1};
	uint64_t end = res->rec.valid_bytes;
	int rc;

	x.out = malloc(OUTBUF);
	if (!x.out) {
		nvt_err_set(&res->err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	nvt_pcapng_reader_init(&x.rd);
	x.to_ns = UINT64_MAX;
	if (o->time) {
		res->offset = 0;
		res->length = end;
	} else if (res->offset + res->length < end) {
		end = res->offset + res->length;
		/* the block that starts last inside the range is read whole */
		end = end + PCAPNG_MAX_BLOCK < res->rec.valid_bytes ? end + PCAPNG_MAX_BLOCK
								    : res->rec.valid_bytes;
	}
	rc = nvt_export_read(L, ix, 0, end, feed, &x, o->interrupt, res);
	if (!rc && !nvt_pcapng_reader_clean(&x.rd) && end == res->rec.valid_bytes) {
		nvt_err_set(&res->err, EPROTO,
			    "the data ends inside a block at byte %llu (the recording was cut "
			    "short): the packets before it were exported",
			    (unsigned long long)x.rd.pos);
		if (o->notice)
			o->notice(res->err.msg, o->arg);
		nvt_err_clear(&res->err);
	}
	if (!rc && x.linktype < 0 && o->format == NVT_EXPORT_PCAP) {
		nvt_err_set(&res->err, EPROTO, "the data holds no interface description: no pcap");
		rc = -EPROTO;
	}
	if (!rc && !res->packets && x.seen && (o->time || o->offset || o->length)) {
		nvt_err_param(&res->err,
			      "no packet lies in that range: nothing was exported (the recording's "
			      "%llu packets span %.3f s)",
			      (unsigned long long)x.seen,
			      (double)(x.seen_last_ns - x.seen_first_ns) / 1e9);
		rc = -EINVAL;
	}
	if (!rc)
		rc = flush(&x);
	if (!rc && res->packets_dropped && o->format == NVT_EXPORT_PCAP && o->notice)
		o->notice("pcap has no place for the drops inside the range: export as pcapng to "
			  "see them (epb_dropcount)",
			  o->arg);
	nvt_pcapng_reader_free(&x.rd);
	free(x.out);
	return rc ? (rc < 0 ? rc : -EIO) : 0;
}
