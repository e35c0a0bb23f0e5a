/* SPDX-License-Identifier: MIT */
/* Verification of a recording: header, sizes and index; for test-pattern recordings every beat,
 * for other data with a counter check every record's counter; every gap matched against the drop
 * index, and the bytes missing against the header's drop count. */
#ifndef NVTAPE_VERIFY_H
#define NVTAPE_VERIFY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "counter.h"
#include "format.h"
#include "layout.h"
#include "nvtape.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nvt_verify_problem {
	NVT_VP_INCOMPLETE = 1u << 0, /* no COMPLETE flag: writer died (see `recover`) */
	NVT_VP_DROPS = 1u << 1,      /* the header counts dropped beats */
	NVT_VP_GAPS = 1u << 2,       /* seq jumps forward in the data */
	NVT_VP_CORRUPT = 1u << 3,    /* beats with hi != ~lo */
	NVT_VP_BACKWARD = 1u << 4,   /* seq jumps backward */
	NVT_VP_MISMATCH = 1u << 5,   /* gaps do not match the drop count / index */
	NVT_VP_FIRST_SEQ = 1u << 6,  /* first beat is not the header's first seq */
	NVT_VP_NO_DATA = 1u << 7,
	NVT_VP_TAIL = 1u << 8,     /* data length not a whole number of beats */
	NVT_VP_CHECKSUM = 1u << 9, /* chunks whose data does not match their CRC32C */
	NVT_VP_INDEX = 1u << 10,   /* the index is damaged (its CRC): drops and checksums unread */
	NVT_VP_KIND = 1u << 11,    /* the header says the data is not the test pattern, but it is
				    * (an fdrec TPG flag cleared): checked as the pattern */
};

struct nvt_verify_opts {
	const char *path;         /* one file or device, or ... */
	struct nvt_layout layout; /* ... several members (n > 0) */
	uint64_t chunk_bytes;     /* read size, default 8 MiB */
	unsigned chunks;          /* read buffers, default 16 */
	unsigned qd;              /* reads in flight, default 8 (nvme: commands per drive) */
	const char *engine;       /* "file" (default, the stripe engine for several) or "nvme" */
	/* events (offset = file offset), called for every gap / corrupt / backward beat */
	void (*on_event)(const struct nvt_check_event *ev, void *arg);
	void (*progress)(uint64_t done, uint64_t total, void *arg);
	void (*notice)(const char *msg, void *arg);
	void *arg;
	/* a counter check (nvtape/counter.h) for data that is not the test pattern, instead of the
	 * one the recording's header names; NULL or "": the header's, if any */
	const char *check;
	/* non-zero: stop reading, -EINTR (as nvt_record_opts.interrupt; NULL: not stopped) */
	const volatile sig_atomic_t *interrupt;
	/* a chunk whose data does not match its checksum (optional) */
	void (*on_bad_chunk)(const struct nvt_chunk_crc *span, uint32_t found, void *arg);
};

struct nvt_verify_result {
	struct nvt_recording rec;
	bool pattern_checked;
	uint64_t checked_bytes;
	struct nvt_checker chk;    /* beats, corrupt, gaps, gap_beats, backward, first/last */
	uint64_t drops_after_end;  /* drop events at the end of the data (no gap to see) */
	uint64_t gaps_matched;     /* gaps found exactly where the index says */
	uint64_t gaps_unmatched;   /* gaps with no matching drop event */
	uint64_t events_unmatched; /* drop events with no matching gap */
	bool drops_match;          /* gap beats == drop count (less drops after the end) */
	unsigned problems;         /* enum nvt_verify_problem */
	double seconds;
	uint64_t cpu_ns;
	struct nvt_err err;
	/* the data's counter was checked (chk counts records, gap_beats records missing) */
	bool counter_checked;
	struct nvt_counter_spec counter;
	/* the chunk checksums of the index (every recording written since they exist) */
	bool sums_checked;
	uint64_t sums_good, sums_bad, sums_bad_bytes; /* spans that match, that do not */
	uint64_t sums_unchecked_bytes;                /* data bytes no checksum covers (none: 0) */
	bool sums_damaged;                            /* the spans do not follow each other */
	/* packet recordings (docs/packets.md): the pcapng blocks walked (a broken stream is
	 * corrupt), the packets counted, and with a packet check (--check counter:..., vita49,
	 * vdif, or the one recorded) chk counts packets checked and gap_beats packets missing,
	 * each gap matched against the drop events between it and the packet before */
	bool packets_walked, packet_checked;
	uint64_t packets;
	/* packet recordings: the Interface Statistics Blocks' isb_ifdrop (packets the kernel or a
	 * full ring lost, as the recorder counted them; the drop count less these were seen only
	 * as sequence gaps: lost upstream), isb_seen when the stream has one */
	bool isb_seen;
	uint64_t isb_drop;
};

NVT_API void nvt_verify_opts_default(struct nvt_verify_opts *o);
/* 0 when the recording could be checked (res->problems lists what was found), -errno with
 * res->err saying why it could not. */
NVT_API int nvt_verify(const struct nvt_verify_opts *o, struct nvt_verify_result *res);

#ifdef __cplusplus
}
#endif

#endif
