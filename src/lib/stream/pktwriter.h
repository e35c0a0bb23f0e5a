/* SPDX-License-Identifier: MIT */
/* Packet sources write a pcapng stream into the ring through the push API (format/pcapng.h):
 * the section and interface header first, one block per packet, a padding block where the next
 * packet does not fit the chunk, the statistics block at the end. The writer also keeps the
 * recording's own limits (size and duration) with room for that last block, and counts. */
#ifndef NVT_STREAM_PKTWRITER_H
#define NVT_STREAM_PKTWRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "nvtape/recorder.h"
#include "nvtape/source.h"

struct nvt_pktw {
	struct nvt_recorder *r;
	unsigned flags; /* NVT_ACQUIRE_NOWAIT for a live source, 0 for a file */
	uint8_t *p;     /* acquired room */
	size_t room;
	uint64_t size_limit, duration_ns, t0_mono; /* 0: none */
	uint64_t bytes;                            /* committed */
	uint64_t packets;                          /* written */
	uint64_t ring_drops;                       /* packets that found no free chunk */
	uint64_t first_ns, last_ns;                /* capture times of the first and last packet */
	bool at_limit;                             /* the size or duration was reached */
	bool size_limit_hit;                       /* the limit reached was the size */
	bool begun;           /* the section and interface blocks are written */
	size_t too_big_bytes; /* a block larger than a ring chunk (use larger chunks), 0: none */
};

enum nvt_pktw_status { NVT_PKTW_OK, NVT_PKTW_FULL, NVT_PKTW_STOP };

/* Set up for the recording r (live: a capture that drops rather than waits; the limits count
 * from now). */
void nvt_pktw_init(struct nvt_pktw *w, struct nvt_recorder *r, const struct nvt_source_args *a,
		   bool live);
/* Begin the stream: the section and interface blocks (waiting for room). 0, or NVT_PKTW_STOP
 * when the recording stopped before they were written. */
int nvt_pktw_start(struct nvt_pktw *w, uint16_t linktype, uint32_t snaplen, const char *ifname,
		   const char *desc);
/* Room for a packet of caplen captured bytes: *data is where its bytes go. FULL: no free
 * chunk (live sources drop the packet: nvt_pktw_dropped); STOP: the recording is stopping or
 * at its limit. */
enum nvt_pktw_status nvt_pktw_reserve(struct nvt_pktw *w, uint32_t caplen, uint8_t **data);
/* The size or duration limit was reached (checked while the source is idle, too). */
bool nvt_pktw_at_limit(struct nvt_pktw *w);
/* The packet reserved is in place. */
void nvt_pktw_commit(struct nvt_pktw *w, uint64_t ts_ns, uint32_t caplen, uint32_t origlen);
/* Packets lost at this position (counted in the drop index). */
void nvt_pktw_dropped(struct nvt_pktw *w, uint64_t packets);
/* The statistics block (received, dropped), written when there is room, also after a stop. */
void nvt_pktw_finish(struct nvt_pktw *w, uint64_t recv, uint64_t drop);
/* A source's check: -EINVAL with err set when a ring chunk of a->chunk_bytes cannot hold the
 * block of its largest packet (hdr bytes of headers before up to snaplen bytes; what: the
 * source and its argument, unit: "datagram" or "frame"), naming both fixes; 0 when it can. */
int nvt_pktw_check_chunk(const struct nvt_source_args *a, const char *what, const char *unit,
			 uint32_t hdr, uint32_t snaplen, struct nvt_err *err);
/* A live source's error when a packet's block did not fit a whole ring chunk (what: the
 * source's name, unit: "datagram" or "frame"): -EMSGSIZE with err set, or 0. */
int nvt_pktw_fit_error(const struct nvt_pktw *w, const char *what, const char *unit,
		       uint32_t snaplen, struct nvt_err *err);

#endif
