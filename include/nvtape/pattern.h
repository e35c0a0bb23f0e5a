/* SPDX-License-Identifier: MIT */
/* The test pattern: 16-byte beats {seq, ~seq} (u64 little-endian), the FPGA Drive Recorder's
 * pattern. Filling it, and checking a stream of it beat by beat. */
#ifndef NVTAPE_PATTERN_H
#define NVTAPE_PATTERN_H

#include <stdbool.h>
#include <stdint.h>

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

NVT_API void nvt_pattern_fill(void *buf, uint64_t seq, uint64_t beats);

enum nvt_check_kind { NVT_CHK_GAP, NVT_CHK_CORRUPT, NVT_CHK_BACKWARD };

struct nvt_check_event {
	enum nvt_check_kind kind;
	uint64_t beat;     /* index of the beat in the stream */
	uint64_t offset;   /* data byte offset of the beat */
	uint64_t expected; /* seq expected there */
	uint64_t lo, hi;   /* what was found */
	uint64_t missing;  /* GAP: beats missing */
};

struct nvt_checker {
	uint64_t expected; /* next seq expected */
	uint64_t beats, corrupt, gaps, gap_beats, backward;
	uint64_t first_seen, last_seen;
	bool seen_good;
	void (*on_event)(void *arg, const struct nvt_check_event *ev);
	void *arg;
};

NVT_API void nvt_checker_init(struct nvt_checker *c, uint64_t first_seq);
/* Check `bytes` (a multiple of 16) whose first beat sits at data byte offset `offset`. */
NVT_API void nvt_checker_feed(struct nvt_checker *c, const void *buf, uint64_t bytes,
			      uint64_t offset);

#ifdef __cplusplus
}
#endif

#endif
