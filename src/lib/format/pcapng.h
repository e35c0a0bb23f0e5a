/* SPDX-License-Identifier: MIT */
/* pcapng, the data section of a packet recording (docs/packets.md): a Section Header Block,
 * one Interface Description Block (nanosecond timestamps), Enhanced Packet Blocks, and a
 * Interface Statistics Block at the end. A block never straddles a ring chunk: the tail of a
 * chunk that the next packet does not fit is one padding block of a local-use type, which
 * pcapng readers skip. Little-endian writer, reader of both byte orders for imports.
 *
 * The stream reader takes the data in pieces of any size (a block may straddle two pieces of
 * the player's or the exporter's reads) and hands out whole blocks. */
#ifndef NVT_FORMAT_PCAPNG_H
#define NVT_FORMAT_PCAPNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape/nvtape.h"

#define PCAPNG_SHB       0x0A0D0D0Au
#define PCAPNG_IDB       0x00000001u
#define PCAPNG_SPB       0x00000003u
#define PCAPNG_EPB       0x00000006u
#define PCAPNG_ISB       0x00000005u
#define PCAPNG_PAD       0x80004E56u /* local use ("NV"): chunk tail padding, readers skip it */
#define PCAPNG_BOM       0x1A2B3C4Du
#define PCAPNG_EPB_HDR   28u /* type, length, interface, ts high, ts low, captured, original */
#define PCAPNG_MIN       12u /* the smallest block: type, length, length */
#define PCAPNG_MAX_BLOCK (16u << 20) /* larger blocks are refused when reading */

#define LINKTYPE_ETHERNET 1u
#define LINKTYPE_RAW      101u /* an IPv4 or IPv6 packet, no link header */

/* The fixed part of an Enhanced Packet Block, as written (host byte order). */
struct __attribute__((packed)) nvt_pcapng_epb {
	uint32_t type;    /*  0 PCAPNG_EPB */
	uint32_t len;     /*  4 the whole block's bytes */
	uint32_t ifid;    /*  8 interface 0 */
	uint32_t ts_high; /* 12 ns since the epoch, high 32 bits (if_tsresol 9) */
	uint32_t ts_low;  /* 16 ... low 32 bits */
	uint32_t caplen;  /* 20 bytes captured, then padded to 4, then len again */
	uint32_t origlen; /* 24 bytes the packet had */
};
_Static_assert(sizeof(struct nvt_pcapng_epb) == PCAPNG_EPB_HDR, "EPB header is 28 bytes");

/* Bytes an EPB of caplen captured bytes takes. */
static inline uint32_t nvt_pcapng_epb_bytes(uint32_t caplen)
{
	return PCAPNG_EPB_HDR + ((caplen + 3u) & ~3u) + 4u;
}

/* Writers: each returns the block's bytes written at p (which must hold them; all lengths are
 * multiples of 4). */
size_t nvt_pcapng_shb(void *p, const char *appl, const char *os);
size_t nvt_pcapng_idb_bytes(const char *name, const char *desc);
size_t nvt_pcapng_idb(void *p, uint16_t linktype, uint32_t snaplen, const char *name,
		      const char *desc);
/* an EPB's header for caplen bytes captured (of origlen) at ts_ns; the caller puts the packet
 * at p + PCAPNG_EPB_HDR and then calls nvt_pcapng_epb_end */
void nvt_pcapng_epb_start(void *p, uint64_t ts_ns, uint32_t caplen, uint32_t origlen);
size_t nvt_pcapng_epb_end(void *p, uint32_t caplen);
/* a padding block of bytes (>= 12, multiple of 4) */
void nvt_pcapng_pad(void *p, size_t bytes);
#define PCAPNG_ISB_BYTES 76u
/* the interface's counts: received, dropped (by the kernel or on the way), first and last
 * packet times */
size_t nvt_pcapng_isb(void *p, uint64_t ts_ns, uint64_t recv, uint64_t drop, uint64_t start_ns,
		      uint64_t end_ns);

/* The packet blocks (EPB, SPB) in len bytes of whole blocks as nvtape writes them (a ring
 * chunk's data: host byte order, no block straddles its end); stops at anything that is not a
 * block. */
uint64_t nvt_pcapng_count_packets(const void *p, size_t len);

/* A block, as the reader hands it out (body in host byte order where it says so). */
struct nvt_pcapng_block {
	uint32_t type;
	uint32_t len;     /* total block bytes */
	const uint8_t *p; /* the whole block, in the file's byte order */
	/* EPB / SPB */
	uint32_t ifid, caplen, origlen;
	uint64_t ts_ns; /* in ns, from the interface's resolution */
	uint64_t drops; /* EPB: its epb_dropcount (packets lost right before it), 0 none */
	const uint8_t *data;
	/* IDB */
	uint16_t linktype;
	uint32_t snaplen;
	/* ISB: NVT_PCAPNG_ISB_* set in isb_have */
	uint64_t isb_recv, isb_drop;
	unsigned isb_have;
};
#define NVT_PCAPNG_ISB_RECV (1u << 0)
#define NVT_PCAPNG_ISB_DROP (1u << 1)

#define NVT_PCAPNG_IFACES 16

struct nvt_pcapng_reader {
	uint8_t *carry; /* a block that straddles two pieces */
	size_t have, need, cap;
	bool swap;    /* the section is big-endian */
	bool started; /* a section header was read */
	uint64_t pos; /* stream bytes taken */
	unsigned nif; /* interfaces of the section */
	struct {
		uint16_t linktype;
		uint32_t snaplen;
		uint64_t ts_div, ts_mul; /* ticks -> ns: ticks * mul / div */
	} ifs[NVT_PCAPNG_IFACES];
};

void nvt_pcapng_reader_init(struct nvt_pcapng_reader *r);
void nvt_pcapng_reader_free(struct nvt_pcapng_reader *r);
/* Feed the next bytes of the stream; fn is called for every whole block, in order (a non-zero
 * return stops the feed and is returned). 0, the callback's value, or -EPROTO with err set
 * for a stream that is not pcapng (the offset is named). */
int nvt_pcapng_feed(struct nvt_pcapng_reader *r, const void *buf, size_t len,
		    int (*fn)(const struct nvt_pcapng_block *b, void *arg), void *arg,
		    struct nvt_err *err);
/* true when the stream ended on a block boundary */
static inline bool nvt_pcapng_reader_clean(const struct nvt_pcapng_reader *r)
{
	return r->have == 0;
}

#endif
