/* SPDX-License-Identifier: MIT */
/* Recording: a source thread fills ring chunks, the calling thread writes them in order through
 * a storage engine, checkpoints the durable length once a second, and finalizes the header and
 * drop index whatever ends the recording. */
#ifndef NVTAPE_RECORD_H
#define NVTAPE_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "counter.h"
#include "format.h"
#include "layout.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_record_stats {
	uint64_t elapsed_ns;
	uint64_t bytes_written; /* data bytes completed on storage, contiguous */
	uint64_t bytes_durable; /* data bytes covered by the last checkpoint */
	uint64_t drops, drop_events;
	unsigned inflight, max_inflight;
	uint64_t ring_fill, ring_hwm, ring_chunks;
	uint64_t checkpoints;
	bool final;
	/* nvt_record_opts.check: records checked, gaps, records missing, backward jumps, bad
	 * values so far (as the chunks go to the drive) */
	uint64_t check_records, check_gaps, check_missing, check_backward, check_bad;
	/* the source's own buffer ahead of the ring (a device FIFO; nvt_recorder_source_fifo):
	 * level now, high-water mark and depth in the source's units; depth 0 = none reported */
	uint64_t src_fifo_level, src_fifo_hwm, src_fifo_depth;
};

/* What the source has handed to the recording so far, beside what the storage holds
 * (nvt_record_opts.progress_input): a slow stream's data arrives long before a chunk or a
 * checkpoint writes it. struct_size: later versions append members. */
struct nvt_record_input {
	size_t struct_size;
	uint64_t bytes;   /* committed into the ring, the chunk still filling included */
	uint64_t records; /* records received (a packet source's packets, reported with
			   * nvt_recorder_source_records); 0 when the source counts none */
};

/* Options of a recording. Initialize with nvt_record_opts_init() (it sets struct_size, which
 * lets later versions of the library grow this struct without breaking callers). */
struct nvt_record_opts {
	size_t struct_size;
	const char *path;         /* one file or block device, or ... */
	struct nvt_layout layout; /* ... several members, striped (n > 0) */
	const char *engine; /* a registered storage engine: "file" (default), "null", "nvme" */
	enum nvt_file_format format;
	uint64_t size_bytes;    /* stop after this many data bytes, reserved up front (0 = none) */
	uint64_t duration_ns;   /* stop after this long (0 = no limit) */
	uint64_t chunk_bytes;   /* ring chunk = write size, multiple of 4 KiB; default 8 MiB */
	unsigned chunks;        /* ring chunks; default 32 */
	unsigned qd;            /* writes in flight; default 8 (nvme engine: commands per drive) */
	uint64_t timeout_ns;    /* stall watchdog, default 10 s */
	uint64_t checkpoint_ns; /* durable-length checkpoint interval, default 1 s */
	uint64_t stats_ns;      /* progress callback interval, default 1 s, 0 = off */
	bool force;             /* overwrite a block device that carries data (never one in use) */
	/* The stream. nvt_record() runs a registered source by name; a push-API producer
	 * (nvt_recorder_open) is the source itself and describes its stream here. */
	const char *source;      /* nvt_record(): "tpg" (default), "stdin", or "NAME:ARG" */
	void *source_ctx;        /* nvt_record(): handed to the source (out-of-tree sources) */
	uint64_t rate_bps;       /* paced sources: bytes/s (0 = unpaced) */
	int input_fd;            /* the stdin source's descriptor (default 0) */
	uint32_t unit_bytes;     /* push API: bytes of one stream unit; drops count units (1) */
	uint32_t source_kind;    /* push API: header source kind (NVT_SRC_API) */
	const char *source_name; /* push API: stored in the header ("api") */
	uint64_t first_seq;      /* test-pattern data: the seq of the first beat (nvt_record()
				  * draws a random one per run, so that blocks an earlier run
				  * left on a device never pass as this run's data) */
	bool producer_times_duration; /* the producer stops itself at duration_ns (a paced
				       * source emits exactly what was due); the recorder only
				       * sizes the reservation with it */
	/* non-zero: stop cleanly. Set by a signal handler, read by the library's own threads: set
	 * it with an atomic store, __atomic_store_n(&flag, 1, __ATOMIC_RELAXED) (lock-free, so
	 * async-signal-safe); a plain assignment is a data race with those threads. */
	const volatile sig_atomic_t *interrupt;
	void (*progress)(const struct nvt_record_stats *st, void *arg); /* I/O thread */
	void (*notice)(const char *msg, void *arg); /* one-time notes (hugepages, ...) */
	void *arg;
	/* a counter the data carries (nvtape/counter.h, "counter:u32le@0/4096"): checked as
	 * each chunk goes to the drive (stats), and stored in the header for verify and play;
	 * not for the test pattern, which is checked beat by beat */
	const char *check;
	/* nvt_record(), sources with NVT_SOURCE_DROPS_FROM (dev): a file holding the number of
	 * units the device lost (a sysfs counter, or one the producer maintains), read after each
	 * chunk; its increase is counted as dropped at the position reached. NULL = none. */
	const char *drops_from;
	/* no CRC32C of each chunk in the index (they are on by default: verify, play and recover
	 * check any data against them); for measuring what they cost */
	bool no_checksums;
	/* what the data is: "key=value" lines (SigMF names where they exist: core:sample_rate,
	 * core:datatype, core:frequency, ...), kept in the index (docs/file-format.md); NULL or ""
	 * none. The source adds what it knows. */
	const char *meta;
	/* the ring lives in a sealed memfd that another process can map (the shm source hands it
	 * to its producer; nvt_record() sets it for sources with NVT_SOURCE_SHARED_RING) */
	bool shared_ring;
	/* nvt_record(): called once the recording is open (its file created and its space
	 * reserved), before the source starts, so that a caller's "recording to ..." line follows
	 * every refusal of the options rather than coming before one. NULL: none. */
	void (*opened)(void *arg);
	/* the progress callback with the source's figures too (I/O thread, every stats_ns);
	 * called instead of progress when set */
	void (*progress_input)(const struct nvt_record_stats *st, const struct nvt_record_input *in,
			       void *arg);
};

enum nvt_stop_reason {
	NVT_STOP_LIMIT = 0, /* --size / --duration reached */
	NVT_STOP_EOF,       /* the input ended */
	NVT_STOP_SIGNAL,    /* Ctrl-C / SIGTERM */
	NVT_STOP_IO_ERROR,  /* a write failed */
	NVT_STOP_NO_SPACE,  /* the filesystem is full */
	NVT_STOP_STALL,     /* watchdog */
	NVT_STOP_SOURCE_ERROR,
	NVT_STOP_REQUEST, /* nvt_recorder_stop() */
};

struct nvt_record_result {
	struct nvt_record_stats st;
	struct nvt_recording rec; /* the header as finalized */
	enum nvt_stop_reason reason;
	double seconds;          /* first beat to last write done (CLOCK_MONOTONIC) */
	uint64_t source_bytes;   /* bytes the source placed into chunks: all must be written */
	uint64_t lost_unwritten; /* units (packets of a packet recording) filled but never written
				    (failed storage only) */
	uint64_t io_cpu_ns, src_cpu_ns, proc_cpu_ns;
	uint64_t pace_steps, pace_steps_long, pace_max_step_bytes;
	bool hugetlb, fixed_bufs;
	char engine_desc[384];
	struct nvt_err err; /* set when reason is an error */
	/* checkpoint latency, from the data sync issued to the header synced: median, 99th
	 * percentile (within 12.5 %) and maximum, ns; 0 without checkpoints */
	uint64_t ckpt_p50_ns, ckpt_p99_ns, ckpt_max_ns;
	/* packet sources (pcapng data): packets kept, and packets the kernel counted as lost
	 * (a socket's overflows, a capture ring's drops); with a sequence check the drops in
	 * the index are the gaps it found, which should equal this */
	uint64_t packets, kernel_drops;
	/* checkpoints' writes of the chunk being filled (a stream slower than a chunk per
	 * checkpoint interval), and the bytes of every data write (with those rewrites):
	 * data_io_bytes / rec.data_bytes is the write amplification */
	uint64_t part_writes, data_io_bytes;
};

NVT_API void nvt_record_opts_init(struct nvt_record_opts *o);
/* Record from the registered source o->source until it ends, its limit, a stop or an error:
 * the source runs on its own thread through the push API (recorder.h), the caller waits.
 * 0 when the recording ended on its own terms, -errno otherwise (res->err says why; bad
 * options have NVT_ERR_PARAM set). Drops are in res, not in the return code. A source that
 * fails before it commits a byte leaves no recording: its regular files are removed. */
NVT_API int nvt_record(const struct nvt_record_opts *o, struct nvt_record_result *res);
NVT_API const char *nvt_stop_reason_name(enum nvt_stop_reason r);

#ifdef __cplusplus
}
#endif

#endif
