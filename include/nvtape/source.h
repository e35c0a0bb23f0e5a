/* SPDX-License-Identifier: MIT */
/* Sources: a producer that fills ring chunks through the push API (recorder.h) on its own
 * thread. The built-in sources (the test pattern, stdin) are ordinary clients of that API; a
 * program registers its own with nvt_source_register() and records with it by name exactly as
 * the CLI records with "tpg". */
#ifndef NVTAPE_SOURCE_H
#define NVTAPE_SOURCE_H

#include <stdint.h>

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_recorder;

/* nvt_source_ops.run(): the source stopped at the recording's duration limit itself */
#define NVT_SOURCE_AT_LIMIT 1

/* nvt_source_ops.caps */
#define NVT_SOURCE_NEVER_STALLS (1u << 0) /* drops (counted, indexed) instead of waiting */
#define NVT_SOURCE_PACED        (1u << 1) /* honours a rate */
#define NVT_SOURCE_PATTERN      (1u << 2) /* test pattern: verify and play check every beat */
#define NVT_SOURCE_NEEDS_ARG    (1u << 3) /* named "NAME:ARG" (a path, a port...) */
#define NVT_SOURCE_DROPS_FROM   (1u << 4) /* reads a loss counter (nvt_record_opts.drops_from) */
#define NVT_SOURCE_SHARED_RING  (1u << 5) /* needs the ring in shared memory (shared_ring) */
/* writes packets as a pcapng stream (docs/packets.md): drops count packets; the source keeps
 * the size and duration limits itself (to end the stream with its statistics block) and
 * checks the --check counter packet by packet (nvt_source_args.check) */
#define NVT_SOURCE_PACKETS (1u << 6)

struct nvt_source_args {
	uint64_t rate_bps;      /* paced sources; 0 = unpaced */
	uint64_t duration_ns;   /* the recording's duration limit, 0 = none */
	uint64_t first_seq;     /* test-pattern sources: the seq of the first beat */
	int fd;                 /* descriptor to read (stdin source) */
	const char *arg;        /* text after "NAME:", "" when none */
	void *ctx;              /* nvt_record_opts.source_ctx */
	const char *drops_from; /* nvt_record_opts.drops_from: a loss counter file, or NULL */
	uint64_t size_bytes;    /* NVT_SOURCE_PACKETS: the recording's size limit, 0 = none */
	const char *check;      /* NVT_SOURCE_PACKETS: nvt_record_opts.check, or NULL */
	void (*notice)(const char *msg, void *arg); /* one-time notes (nvt_record_opts) */
	void *notice_arg;
	uint64_t chunk_bytes; /* the ring's chunk (a packet source refuses one its largest packet
				 does not fit: a block never straddles two chunks) */
	unsigned chunks;      /* the ring's chunks (the fdrec source: one driver buffer each) */
};

/* What a source reports besides its data (optional: zeros when it has nothing to say). */
struct nvt_source_report {
	uint64_t pace_steps, pace_steps_long, pace_max_step_bytes; /* paced sources */
	uint64_t packets, kernel_drops; /* packet sources: kept, and lost in the kernel */
};

struct nvt_source_ops {
	const char *name; /* registry name, [a-z0-9_-], at most 15 characters */
	const char *help; /* one line */
	uint32_t kind;    /* enum nvt_source_kind stored in the header */
	uint32_t
		unit_bytes; /* stream unit (16 = test-pattern beat, 1 = bytes): drops count units */
	unsigned caps;      /* NVT_SOURCE_* */
	/* optional: refuse arguments before anything is opened (nvt_err_param) */
	int (*check)(const struct nvt_source_args *a, struct nvt_err *err);
	/* the source thread's body: acquire / commit / drop until acquire() returns NULL with
	 * ECANCELED or the input ends; 0, NVT_SOURCE_AT_LIMIT when it stopped at the recording's
	 * duration itself (a paced source), or -errno with err set when the source failed */
	int (*run)(struct nvt_recorder *r, const struct nvt_source_args *a,
		   struct nvt_source_report *rep, struct nvt_err *err);
	/* optional: what the source knows of its stream before it runs (a device's clock,
	 * design version...), as metadata lines: meta with the source's keys set
	 * (nvt_meta_set(), nvtape/meta.h), malloc'ed; NULL when it has nothing to add (a
	 * device it cannot open now is reported by run()). Keys the caller gave win. */
	char *(*describe)(const struct nvt_source_args *a, const char *meta);
};

/* Add a source to the registry (ops must stay valid). -EEXIST for a taken name, -ENOSPC when
 * the registry is full, -EINVAL for a bad entry. */
NVT_API int nvt_source_register(const struct nvt_source_ops *ops, struct nvt_err *err);
/* The source named by name or "name:arg"; NULL when unknown. */
NVT_API const struct nvt_source_ops *nvt_source_find(const char *name);
/* The i-th registered source (built-in first); NULL past the end. */
NVT_API const struct nvt_source_ops *nvt_source_at(unsigned i);
/* "tpg, stdin, ..." for messages. */
NVT_API const char *nvt_source_names(void);

#ifdef __cplusplus
}
#endif

#endif
