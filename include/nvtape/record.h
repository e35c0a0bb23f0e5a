/* Recording: a source thread fills ring chunks, the calling thread writes them in order through
 * a storage engine, checkpoints the durable length once a second, and finalizes the header and
 * drop index whatever ends the recording. */
#ifndef NVTAPE_RECORD_H
#define NVTAPE_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "layout.h"
#include "nvtape.h"

struct nvt_record_stats {
	uint64_t elapsed_ns;
	uint64_t bytes_written; /* data bytes completed on storage, contiguous */
	uint64_t bytes_durable; /* data bytes covered by the last checkpoint */
	uint64_t drops, drop_events;
	unsigned inflight, max_inflight;
	uint64_t ring_fill, ring_hwm, ring_chunks;
	uint64_t checkpoints;
	bool final;
};

struct nvt_record_opts {
	const char *path;
	struct nvt_layout layout; /* several members when n > 0 (stripe engine) */
	const char *engine;       /* "file" (default), "null" or "nvme" */
	const char *source;       /* "tpg" (default) or "stdin" */
	enum nvt_file_format format;
	uint64_t rate_bps;      /* 0 = unpaced */
	uint64_t size_bytes;    /* 0 = no limit */
	uint64_t duration_ns;   /* 0 = no limit */
	uint64_t chunk_bytes;   /* default 8 MiB */
	unsigned chunks;        /* default 32 */
	unsigned qd;            /* default 8 */
	uint64_t timeout_ns;    /* stall watchdog, default 10 s */
	uint64_t checkpoint_ns; /* durable-length checkpoint interval, default 1 s */
	uint64_t stats_ns;      /* progress callback interval, default 1 s, 0 = off */
	int input_fd;           /* stdin source */
	bool force; /* overwrite a block device that carries data (never a mounted one) */
	const volatile sig_atomic_t *interrupt; /* set by a signal handler: stop cleanly */
	void (*progress)(const struct nvt_record_stats *st, void *arg);
	void (*notice)(const char *msg, void *arg); /* one-time notes (hugepages, ...) */
	void *arg;
};

enum nvt_stop_reason {
	NVT_STOP_LIMIT = 0, /* --size / --duration reached */
	NVT_STOP_EOF,       /* the input ended */
	NVT_STOP_SIGNAL,    /* Ctrl-C / SIGTERM */
	NVT_STOP_IO_ERROR,  /* a write failed */
	NVT_STOP_NO_SPACE,  /* the filesystem is full */
	NVT_STOP_STALL,     /* watchdog */
	NVT_STOP_SOURCE_ERROR,
};

struct nvt_record_result {
	struct nvt_record_stats st;
	struct nvt_recording rec; /* the header as finalized */
	enum nvt_stop_reason reason;
	double seconds;          /* first beat to last write done (CLOCK_MONOTONIC) */
	uint64_t source_bytes;   /* bytes the source placed into chunks: all must be written */
	uint64_t lost_unwritten; /* beats filled but never written (failed storage only) */
	uint64_t io_cpu_ns, src_cpu_ns, proc_cpu_ns;
	uint64_t pace_steps, pace_steps_long, pace_max_step_bytes;
	bool hugetlb, fixed_bufs;
	char engine_desc[384];
	struct nvt_err err; /* set when reason is an error */
};

void nvt_record_opts_default(struct nvt_record_opts *o);
/* Returns an nvt_exit code; fills res. Messages for errors are in res->err. */
int nvt_record(const struct nvt_record_opts *o, struct nvt_record_result *res);
const char *nvt_stop_reason_name(enum nvt_stop_reason r);

#endif
