/* SPDX-License-Identifier: MIT */
/* Sequence checks of packet streams: a counter in each UDP payload found packet by packet
 * (a counter: specification whose OFFSET counts from the payload's first byte; STRIDE is not
 * used), or a preset for a format's own count: "vita49" (the 4-bit packet count of VITA-49
 * signal data packets) and "vdif[:FPS]" (VDIF's seconds and frame number, FPS data frames a
 * second, learned at the first whole second when not given). Missing packets are returned so
 * that the source places them in the drop index where the gap is. */
#ifndef NVT_STREAM_PKTCHECK_H
#define NVT_STREAM_PKTCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "nvtape/counter.h"

enum nvt_pktcheck_kind { NVT_PKTCHECK_COUNTER, NVT_PKTCHECK_VITA49, NVT_PKTCHECK_VDIF };

struct nvt_pktcheck {
	enum nvt_pktcheck_kind kind;
	uint32_t offset; /* COUNTER: the counter's offset in the payload */
	unsigned width;  /* bytes read there */
	struct nvt_counter_check cc;
	uint64_t short_packets; /* too short to hold the counter (or the format's header) */
	uint64_t other_packets; /* VITA-49: not signal data (context, commands): not counted */
	/* VDIF */
	uint64_t fps; /* frames a second, 0 until known */
	bool fps_learned;
	uint64_t max_frame, last_sec, last_frame;
	bool have_sec;
};

/* Parse "counter:...", "vita49" or "vdif[:FPS]"; nvt_err_param for anything else. */
int nvt_pktcheck_parse(const char *text, struct nvt_pktcheck *c, struct nvt_err *err);
/* One packet's payload: the packets missing before it (0 when in step). */
uint64_t nvt_pktcheck_packet(struct nvt_pktcheck *c, const uint8_t *payload, uint32_t len);

#endif
