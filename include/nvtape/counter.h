/* SPDX-License-Identifier: MIT */
/* Counter checks: a frame or packet counter that real data carries (an FPGA frame header, a
 * VITA-49 packet count, a VDIF frame number) checked record by record for gaps and backward
 * jumps, the way the test pattern is checked beat by beat. The specification, stored in a
 * recording's header and given to record, verify and play with --check (docs/checks.md):
 *
 *   counter:TYPE[@OFFSET][/STRIDE][+INC][%WRAP]
 *
 * TYPE u8, u16le, u16be, u32le, u32be, u64le or u64be; OFFSET the counter's byte offset in each
 * record (default 0); STRIDE the record's size in bytes (default the counter's width); INC the
 * step from one record to the next (default 1); WRAP the value the counter wraps at (default
 * 2^width: the counter runs 0 .. WRAP-1). Records follow one another from the first data byte. */
#ifndef NVTAPE_COUNTER_H
#define NVTAPE_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVT_CHECK_SPEC_MAX 48 /* bytes of a specification's text, NUL included */

struct nvt_counter_spec {
	unsigned width;  /* bytes: 1, 2, 4 or 8 */
	bool big_endian; /* else little-endian */
	uint32_t offset; /* of the counter in its record */
	uint32_t stride; /* record bytes */
	uint64_t inc;    /* per record, 1 .. wrap - 1 */
	uint64_t wrap;   /* values run 0 .. wrap - 1; 0 = 2^64 */
};

/* Parse "counter:..." (nvt_err_param on a bad one: a usage error). */
NVT_API int nvt_counter_parse(const char *text, struct nvt_counter_spec *s, struct nvt_err *err);
/* The canonical text of s (fits NVT_CHECK_SPEC_MAX). */
NVT_API void nvt_counter_format(const struct nvt_counter_spec *s, char *buf, size_t cap);

/* A check in progress. counts holds what nvt_checker holds for the pattern, in records:
 * beats = records checked, gaps, gap_beats = records missing, backward (jumps back or out of
 * step), corrupt (values at or above wrap), first_seen / last_seen; its on_event / arg are
 * called for every gap, backward jump and bad value (beat = record index, offset = the
 * record's file offset, missing = records missing). */
struct nvt_counter_check {
	struct nvt_counter_spec spec;
	struct nvt_checker counts;
	uint64_t pos;  /* stream bytes fed so far */
	uint64_t next; /* index of the next record whose counter is read */
	uint8_t part[8];
	unsigned have; /* bytes of that counter read so far (it can straddle two feeds) */
};

/* Set up (keeps counts.on_event and counts.arg). The first counter read sets what is expected. */
NVT_API void nvt_counter_check_init(struct nvt_counter_check *c, const struct nvt_counter_spec *s);
/* The next bytes of the stream, whose first byte is at file offset offset. */
NVT_API void nvt_counter_check_feed(struct nvt_counter_check *c, const void *buf, uint64_t bytes,
				    uint64_t offset);

#ifdef __cplusplus
}
#endif

#endif
