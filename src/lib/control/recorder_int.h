/* SPDX-License-Identifier: MIT */
/* The recorder's state, shared by its producer side (recorder.c: the push API) and its I/O
 * thread (record_io.c: in-order writes, checkpoints, watchdog, finalization). */
#ifndef NVT_CONTROL_RECORDER_INT_H
#define NVT_CONTROL_RECORDER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "control/record_index.h"
#include "control/recorder_ring.h"
#include "format/sums.h"
#include "nvtape/recorder.h"
#include "ring/pump.h"
#include "ring/ring.h"
#include "storage/engine.h"
#include "util/hist.h"

struct nvt_recorder {
	struct nvt_record_opts o;     /* the caller's options (its strings must outlive close) */
	struct nvt_record_result res; /* filled as the recording ends, copied out by close */
	struct nvt_ring ring;
	struct nvt_engine eng;
	struct nvt_layout layout;
	struct nvt_recording rec;
	uint64_t limit_bytes; /* size limit in bytes (rounded to whole units), 0 = none */
	uint32_t unit;        /* bytes of one stream unit */

	/* producer side: the producer thread only */
	uint8_t *cur;
	uint64_t cur_fill;
	uint64_t pending_drop; /* units lost since the last data, not yet an index event */
	uint64_t pending_time; /* when the first of them was lost (ns since t0) */
	bool limit_hit;
	size_t room; /* bytes the last acquire() handed out, not yet committed */

	/* shared between the producer, the I/O thread and stats() */
	_Atomic uint64_t produced; /* bytes committed into chunks, published or not */
	/* the chunk being filled: the low 32 bits of its ring sequence number << 32 | its bytes
	 * committed so far (stored after each commit that does not publish it) */
	_Atomic uint64_t part;
	_Atomic uint64_t drops;    /* units dropped */
	_Atomic uint64_t t0_mono;  /* first commit or drop (0 until then) */
	_Atomic int pending_event; /* pending_drop != 0 (cleared under ev_lock) */
	_Atomic int stop_req;      /* stop() or a signal */
	_Atomic int stopping;      /* acquire() refuses from now on */
	uint64_t t0_real;
	struct nvt_source_stamp stamp; /* nvt_recorder_source_stamp(), once stamped is set */
	_Atomic int stamped;
	pthread_mutex_t ev_lock; /* drop events, appended by the producer */
	struct nvt_drop_event *ev;
	uint64_t nev, ev_cap;

	/* I/O thread */
	pthread_t io_thread;
	pthread_mutex_t open_lock; /* open_cv: the I/O thread has opened the storage */
	pthread_cond_t open_cv;
	bool opened;
	int open_rc;
	uint64_t t_end;
	/* 4 KiB aligned header blocks: hdr as last written (sync writes), ckpt_hdr the copy a
	 * checkpoint writes while hdr stays the reference for the next one */
	void *hdr, *ckpt_hdr;
	struct nvt_pump pump; /* chunk writes in order */
	uint64_t issue_off, written, durable;
	uint64_t prealloc_end;
	bool extend;                /* reserve ahead (size unknown) */
	_Atomic int failed;         /* the recording ends on an error (err, reason) */
	_Atomic int storage_failed; /* ... and the storage takes no more writes */
	/* published by the I/O thread for stats() on other threads */
	_Atomic uint64_t st_written, st_durable;
	_Atomic unsigned st_inflight, st_max_inflight;
	_Atomic uint32_t st_checkpoints;
	_Atomic uint64_t st_fifo[3];  /* nvt_recorder_source_fifo: level, hwm, depth */
	_Atomic uint64_t st_records;  /* nvt_recorder_source_records */
	enum nvt_stop_reason latched; /* why the producer stopped, fixed at close() */
	/* set by the I/O thread, read by close() on the producer's thread while it runs; a reason
	 * read there right after a failure may still be the old one: finish() then keeps its own */
	_Atomic bool signalled;
	_Atomic enum nvt_stop_reason reason;
	bool ckpt_busy;
	/* writing the filled prefix of the chunk being filled; the index; data sync queued */
	enum { CKPT_PART, CKPT_INDEX, CKPT_SYNC } ckpt_phase;
	/* the prefix of chunk part_seq (the next to be written) that checkpoints wrote ahead of
	 * its full write (docs/file-format.md, "Slow streams"): part_landed bytes are on the
	 * target, part_crc is the CRC32C of its first part_crc_len bytes; part_want is the end
	 * of the prefix write in flight */
	uint64_t part_seq, part_landed, part_crc_len, part_want;
	struct nvt_io part_io; /* that write, asked again as a blocking one after EAGAIN */
	uint32_t part_crc;
	bool part_inflight, part_staged;
	uint64_t part_writes,
		data_io_bytes; /* checkpoint prefix writes; bytes of all data writes */
	uint64_t ckpt_target, ckpt_last;
	/* a due checkpoint waiting for what was committed when it fell due to land (defer()):
	 * since when (0: not waiting), and the committed bytes it waits for */
	uint64_t ckpt_due_at, ckpt_due_produced;
	struct nvt_rec_index ix; /* the drop index written with each checkpoint */
	struct nvt_sums sums;    /* CRC32C of every chunk queued (I/O thread) */
	uint64_t *chunk_t;       /* CLOCK_REALTIME of each ring chunk's first commit (producer) */
	char *meta;              /* metadata text for the index ("" none) */
	uint64_t meta_len;
	bool ev_full; /* NVT_REC_EVENTS_MAX reached: drops join the last event */
	struct nvt_hist ckpt_hist;
	bool counting; /* cc: the data's counter, checked as chunks are queued */
	struct nvt_counter_check cc;
	_Atomic uint64_t st_ck[5]; /* cc's records, gaps, missing, backward, bad, for stats() */
	uint64_t io_cpu_ns;
	struct nvt_err err;
	/* nvt_recorder_at_close(): told the outcome by close() */
	void (*at_close)(void *arg, int rc, const struct nvt_record_result *res);
	void *at_close_arg;
};

static inline uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

void nvt_rec_notice(struct nvt_recorder *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void nvt_rec_fail(struct nvt_recorder *r, enum nvt_stop_reason reason, int code, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));
void *nvt_rec_io_thread(void *arg);
/* the header block blk from r->rec, with the source's stamp (I/O thread) */
void nvt_rec_encode(struct nvt_recorder *r, void *blk);
/* The I/O thread's first duty: checks, ring, engine, space, first header; tells the opener. */
int nvt_rec_setup(struct nvt_recorder *r);
enum nvt_stop_reason nvt_rec_end_reason(struct nvt_recorder *r);
/* The producer stopped at its own limit (a paced source that emitted all that was due). */
void nvt_rec_limit_reached(struct nvt_recorder *r);
void nvt_rec_fill_stats(struct nvt_recorder *r, struct nvt_record_stats *st, uint64_t now,
			bool final);
/* Drop events so far, copied (malloc'ed; NULL and *n = 0 when there are none or no memory). */
struct nvt_drop_event *nvt_rec_drop_events(struct nvt_recorder *r, uint64_t *n);
/* Index, trim, the header as complete, made durable. */
int nvt_rec_finalize(struct nvt_recorder *r, struct nvt_err *err);

#endif
