/* SPDX-License-Identifier: MIT */
/* The recorder's I/O thread: one write per filled chunk, in order, up to the engine's depth in
 * flight; chunks go back to the producer strictly in order; once a second the data written so
 * far is made durable (async fdatasync) and then the header records that durable length; a
 * watchdog stops a recording whose storage or producer stalls; finalization writes the drop
 * index and the complete header whatever ended the recording. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "control/export_int.h"
#include "control/recorder_int.h"
#include "ring/pump.h"
#include "format/index.h"
#include "format/lifecycle.h"
#include "format/pcapng.h"
#include "util/sysutil.h"

/* a checkpoint: its drop index written, the data synced, the header written, the header
 * synced */
#define TAG_SYNC     (UINT64_MAX - 2)
#define TAG_HDR      (UINT64_MAX - 3)
#define TAG_HDR_SYNC (UINT64_MAX - 4)
#define TAG_IDX      (UINT64_MAX - 5) /* the checkpoint's drop index, before its sync */
#define TAG_PART     (UINT64_MAX - 6) /* the filled prefix of the chunk being filled */
#define EXTEND_STEP  (1ull << 30)     /* open-ended recordings reserve space 1 GiB ahead */

void nvt_rec_notice(struct nvt_recorder *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!r->o.notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o.notice(msg, r->o.arg);
}

void nvt_rec_fail(struct nvt_recorder *r, enum nvt_stop_reason reason, int code, const char *fmt,
		  ...)
{
	va_list ap;

	if (atomic_exchange(&r->failed, 1))
		return; /* the first error is the cause */
	r->reason = reason;
	/* a write that failed, a full device, storage that stopped completing: no more writes.
	 * A producer that failed or went quiet: what it committed is still written. */
	if (reason == NVT_STOP_IO_ERROR || reason == NVT_STOP_NO_SPACE ||
	    (reason == NVT_STOP_STALL && (nvt_pump_pending(&r->pump) > 0 || r->part_inflight)))
		atomic_store(&r->storage_failed, 1);
	if (!r->err.code) {
		r->err.code = code ? code : EIO;
		va_start(ap, fmt);
		vsnprintf(r->err.msg, sizeof(r->err.msg), fmt, ap);
		va_end(ap);
	}
	atomic_store(&r->stopping, 1);
	nvt_ring_abort(&r->ring);
}

void nvt_rec_fill_stats(struct nvt_recorder *r, struct nvt_record_stats *st, uint64_t now,
			bool final)
{
	uint64_t t0 = atomic_load(&r->t0_mono);

	st->elapsed_ns = t0 && now > t0 ? now - t0 : 0;
	st->bytes_written = atomic_load(&r->st_written);
	st->bytes_durable = atomic_load(&r->st_durable);
	st->drops = atomic_load(&r->drops);
	pthread_mutex_lock(&r->ev_lock);
	st->drop_events = r->nev + (uint64_t)atomic_load(&r->pending_event);
	pthread_mutex_unlock(&r->ev_lock);
	st->inflight = atomic_load(&r->st_inflight);
	st->max_inflight = atomic_load(&r->st_max_inflight);
	st->ring_fill = nvt_ring_fill(&r->ring);
	st->ring_hwm = nvt_ring_hwm(&r->ring);
	st->ring_chunks = r->ring.nchunks;
	st->checkpoints = atomic_load(&r->st_checkpoints);
	st->final = final;
	st->check_records = atomic_load_explicit(&r->st_ck[0], memory_order_relaxed);
	st->check_gaps = atomic_load_explicit(&r->st_ck[1], memory_order_relaxed);
	st->check_missing = atomic_load_explicit(&r->st_ck[2], memory_order_relaxed);
	st->check_backward = atomic_load_explicit(&r->st_ck[3], memory_order_relaxed);
	st->check_bad = atomic_load_explicit(&r->st_ck[4], memory_order_relaxed);
	st->src_fifo_level = atomic_load_explicit(&r->st_fifo[0], memory_order_relaxed);
	st->src_fifo_hwm = atomic_load_explicit(&r->st_fifo[1], memory_order_relaxed);
	st->src_fifo_depth = atomic_load_explicit(&r->st_fifo[2], memory_order_relaxed);
}

/* Reserve space ahead of the write pointer when the final size is unknown. */
static void extend_ahead(struct nvt_recorder *r, uint64_t end)
{
	struct nvt_err err = {0};
	uint64_t want = r->prealloc_end;

	if (!r->extend || !r->eng.can_reserve || end + EXTEND_STEP / 2 <= r->prealloc_end)
		return;
	while (end + EXTEND_STEP / 2 > want) /* the index of a checkpoint may lie further ahead */
		want += EXTEND_STEP;
	if (r->eng.ops->reserve(&r->eng, want, &err)) {
		r->extend = false; /* the writes themselves will meet ENOSPC */
		return;
	}
	r->prealloc_end = want;
}

/* The data's counter in a chunk on its way to the drive (the chunk is not written to while its
 * write is queued), the counts published for stats(). */
static void check_counter(struct nvt_recorder *r, const void *chunk, uint64_t len, uint64_t off)
{
	nvt_counter_check_feed(&r->cc, chunk, len, off);
	nvt_recorder_check_counts(r, &r->cc.counts);
}

/* Data bytes on the target in order: every chunk written, and a prefix of the next one. */
static uint64_t landed(const struct nvt_recorder *r)
{
	return r->written + r->part_landed;
}

static void issue_writes(struct nvt_recorder *r)
{
	/* the chunk whose prefix is being written waits for it: two writes of one block in
	 * flight could land in either order */
	if (r->part_inflight)
		return;
	while (!atomic_load(&r->storage_failed) && nvt_pump_can_queue(&r->pump)) {
		uint64_t k = r->pump.queued;
		uint8_t *chunk = nvt_ring_chunk(&r->ring, k);
		uint64_t len = nvt_pump_next_len(&r->pump), skip = 0;
		uint64_t off = NVT_HEADER_SIZE + r->issue_off;
		bool part = k == r->part_seq;
		if (off + align_up(len, NVT_BLOCK) > r->ix.data_end) {
			nvt_rec_fail(r, NVT_STOP_NO_SPACE, ENOSPC,
				     "the device is full: the write of %llu bytes at offset %llu "
				     "would reach the last %llu KiB, which hold the drop index; "
				     "everything before it is kept",
				     (unsigned long long)align_up(len, NVT_BLOCK),
				     (unsigned long long)off,
				     (unsigned long long)(2 * r->ix.slot >> 10));
			break;
		}
		if (nvt_rec_index_blocks(r, off, len))
			break; /* a checkpoint moves the index on first */
		extend_ahead(r, off + align_up(len, NVT_BLOCK));
		if (part && r->part_landed) { /* the rest, from its last partial block */
			skip = r->part_landed / NVT_BLOCK * NVT_BLOCK;
			if (skip > align_up(len, NVT_BLOCK) - NVT_BLOCK)
				skip = align_up(len, NVT_BLOCK) - NVT_BLOCK;
		}
		if (nvt_pump_queue_rest(&r->pump, off, len, skip))
			break;
		r->data_io_bytes += align_up(len, NVT_BLOCK) - skip;
		if (r->counting)
			check_counter(r, chunk, len, off);
		if (!r->o.no_checksums) {
			uint32_t crc = part && r->part_crc_len
					       ? nvt_crc32c(r->part_crc, chunk + r->part_crc_len,
							    len - r->part_crc_len)
					       : nvt_crc32c(0, chunk, len);
			nvt_sums_add(&r->sums, len, crc, r->chunk_t[k % r->ring.nchunks]);
		}
		r->issue_off += len;
	}
}

/* The chunk being filled will be full within an eighth of the checkpoint interval at the rate
 * it has filled so far: its own write comes as soon, and a prefix write would only hold the
 * chunk's write back (on a drive near its limit, with a small ring, long enough to drop). */
static bool fills_soon(const struct nvt_recorder *r, uint64_t k, uint64_t fill)
{
	uint64_t t0 = r->chunk_t[k % r->ring.nchunks], now = nvt_real_ns();

	if (!t0 || now <= t0)
		return false;
	return (long double)(r->ring.chunk_bytes - fill) * (now - t0) / fill <
	       (long double)r->o.checkpoint_ns / 8;
}

/* At a checkpoint, when every published chunk is written: write what the producer has put
 * into the chunk it is filling, in whole 4 KiB blocks from the last one written before (the
 * bytes past the filled end are rewritten when the chunk is). A slow stream then loses no
 * more than the checkpoint interval in a crash, not a chunk's worth of time. true: queued. */
static bool part_write(struct nvt_recorder *r)
{
	uint64_t k = r->pump.queued, p = atomic_load_explicit(&r->part, memory_order_acquire);
	uint64_t fill = p & 0xffffffffu, from, to, off;
	uint8_t *chunk = nvt_ring_chunk(&r->ring, k);

	if (r->part_inflight || atomic_load(&r->storage_failed) ||
	    k != nvt_ring_published(&r->ring) || nvt_pump_pending(&r->pump) ||
	    (p >> 32) != (k & 0xffffffffu))
		return false;
	if (r->part_seq != k) { /* a new chunk: nothing of it written yet */
		r->part_seq = k;
		r->part_landed = r->part_crc_len = 0;
		r->part_crc = 0;
	}
	if (fill <= r->part_landed || fill > r->ring.chunk_bytes || fills_soon(r, k, fill))
		return false;
	from = r->part_landed / NVT_BLOCK * NVT_BLOCK;
	to = align_up(fill, NVT_BLOCK);
	off = NVT_HEADER_SIZE + r->issue_off + from;
	if (off + (to - from) > r->ix.data_end || nvt_rec_index_blocks(r, off, to - from))
		return false;
	extend_ahead(r, off + (to - from));
	r->part_io = (struct nvt_io){.dir = NVT_IO_WRITE,
				     .buf = chunk + from,
				     .len = to - from,
				     .offset = off,
				     .buf_index = (int)(k % r->ring.nchunks),
				     .tag = TAG_PART};
	if (r->eng.ops->queue(&r->eng, &r->part_io))
		return false;
	if (!r->o.no_checksums && fill > r->part_crc_len) {
		r->part_crc =
			nvt_crc32c(r->part_crc, chunk + r->part_crc_len, fill - r->part_crc_len);
		r->part_crc_len = fill;
	}
	r->part_want = fill;
	r->part_inflight = true;
	r->part_writes++;
	r->data_io_bytes += to - from;
	return true;
}

/* A data write failed or fell short: the recording stops, keeping what landed before it. what
 * names the write ("the write", or a checkpoint's write of the chunk being filled), at where. */
static void fail_write(struct nvt_recorder *r, const char *what, unsigned long long want,
		       const char *where, unsigned long long off, int64_t res)
{
	if (res == -ENOSPC || (res >= 0 && (uint64_t)res < want))
		nvt_rec_fail(r, NVT_STOP_NO_SPACE, ENOSPC,
			     "no space left on the device: %s of %llu bytes at %s %llu %s; "
			     "everything before it is kept",
			     what, want, where, off,
			     res < 0 ? "failed with ENOSPC" : "was cut short");
	else
		nvt_rec_fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO,
			     "%s of %llu bytes at %s %llu failed%s%s%s: %s; everything "
			     "written before it is kept",
			     what, want, where, off, r->eng.fault[0] ? " on " : "", r->eng.fault,
			     r->eng.fault[0] ? " (that drive failed)" : "",
			     res < 0 ? strerror((int)-res) : "short write");
}

/* A write completed: failures stop the recording; landed chunks go back in order. */
static void handle_write(struct nvt_recorder *r, const struct nvt_io_done *d)
{
	uint64_t k, len, off;
	int rc = nvt_pump_complete(&r->pump, d, &k, &len);

	if (rc < 0)
		fail_write(r, "the write", align_up(len, NVT_BLOCK), "offset",
			   r->pump.off[k % r->ring.nchunks], d->res);
	while (nvt_pump_ready(&r->pump, &k, &off, &len)) {
		r->written += len;
		if (k == r->part_seq) { /* written whole: its prefix is part of written */
			r->part_landed = r->part_crc_len = 0;
			r->part_crc = 0;
			r->part_seq = UINT64_MAX;
		}
		nvt_pump_retire(&r->pump, 0);
	}
}

/* The checkpoint's index is written (or there is none): its data sync next. */
static void checkpoint_sync(struct nvt_recorder *r)
{
	if (r->ckpt_phase != CKPT_INDEX || nvt_rec_index_send(r, TAG_IDX))
		return;
	if (r->eng.ops->queue_sync(&r->eng, TAG_SYNC))
		return; /* the engine is full: again after a completion */
	r->ckpt_phase = CKPT_SYNC;
}

/* The checkpoint's data is on the target (its prefix write landed, or none was needed): its
 * index, then its data sync. */
static void checkpoint_index(struct nvt_recorder *r)
{
	r->ckpt_target = landed(r);
	/* a prefix of the chunk being filled has a checksum in this checkpoint's index only,
	 * while no write of the whole chunk has added its own */
	r->part_staged = r->part_landed && r->part_crc_len == r->part_landed &&
			 r->issue_off == r->written && !r->o.no_checksums &&
			 nvt_sums_stage(&r->sums, r->part_landed, r->part_crc,
					r->chunk_t[r->part_seq % r->ring.nchunks]);
	nvt_rec_index_begin(r, r->ckpt_target);
	r->part_staged = false;
	if (r->ix.len) /* a filesystem that cannot leave holes (exFAT) fills them now */
		extend_ahead(r, r->ix.off + r->ix.len);
	r->ckpt_phase = CKPT_INDEX;
	checkpoint_sync(r);
}

/* A due checkpoint that would leave out data committed before it fell due (the chunk being
 * filled when its prefix could not be written: a chunk write in flight, or the chunk about to
 * fill; or a chunk whose write is in flight) waits for that data to land, when it is at most two
 * chunks, for at most an interval. Otherwise that data would wait for the next checkpoint, and a
 * stream of a chunk or so per interval could lose two intervals and a write's time instead of
 * one interval and a write's time. The ring's lag behind a fast stream is not waited for. */
static bool defer(struct nvt_recorder *r, uint64_t now)
{
	uint64_t have = landed(r);

	if (!r->ckpt_due_at) {
		r->ckpt_due_at = now;
		r->ckpt_due_produced = atomic_load_explicit(&r->produced, memory_order_relaxed);
	}
	return have < r->ckpt_due_produced &&
	       r->ckpt_due_produced - have <= 2 * r->ring.chunk_bytes &&
	       now - r->ckpt_due_at < r->o.checkpoint_ns;
}

static void checkpoint_start(struct nvt_recorder *r, uint64_t now)
{
	bool urgent = r->ix.urgent;

	if (r->ckpt_busy || atomic_load(&r->storage_failed) || r->o.format != NVT_FMT_NVTAPE)
		return;
	if (!urgent && now - r->ckpt_last < r->o.checkpoint_ns)
		return;
	if (!urgent && part_write(r)) {
		r->ckpt_busy = true;
		r->ckpt_last = now;
		r->ckpt_due_at = 0;
		r->ckpt_phase = CKPT_PART;
		return; /* the rest when it has landed */
	}
	if (!urgent && (landed(r) == r->durable || defer(r, now)))
		return;
	r->ix.urgent = false;
	r->ckpt_busy = true;
	r->ckpt_last = now;
	r->ckpt_due_at = 0;
	checkpoint_index(r);
}

/* The prefix write landed (or failed): the checkpoint that wrote it goes on. */
static void handle_part(struct nvt_recorder *r, int64_t res)
{
	uint64_t want = r->part_io.len;

	/* a throttled block layer may answer a non-blocking attempt with EAGAIN: ask again */
	if (res == -EAGAIN && !r->part_io.blocking) {
		r->part_io.blocking = true;
		if (r->eng.ops->queue(&r->eng, &r->part_io) == 0)
			return;
	}
	r->part_inflight = false;
	if (res < 0 || (uint64_t)res < want) {
		r->ckpt_busy = false;
		fail_write(r, "a checkpoint's write of the chunk being filled", want, "data offset",
			   r->written, res);
		return;
	}
	r->part_landed = r->part_want;
	if (r->ckpt_busy && r->ckpt_phase == CKPT_PART)
		checkpoint_index(r);
}

static void handle_ckpt(struct nvt_recorder *r, uint64_t tag, int64_t res)
{
	if (tag == TAG_IDX) {
		nvt_rec_index_done(r, res);
		checkpoint_sync(r);
		return;
	}
	if (tag == TAG_SYNC) {
		struct nvt_io io = {.dir = NVT_IO_WRITE,
				    .buf = r->ckpt_hdr,
				    .len = NVT_HEADER_SIZE,
				    .offset = 0,
				    .buf_index = -1,
				    .tag = TAG_HDR};
		if (res < 0) {
			nvt_rec_fail(r, NVT_STOP_IO_ERROR, (int)-res,
				     "fdatasync for the checkpoint: %s", strerror((int)-res));
			r->ckpt_busy = false;
			return;
		}
		nvt_recording_checkpoint(&r->rec, r->ckpt_target, r->ix.drops, nvt_real_ns());
		nvt_rec_index_apply(r);
		memcpy(r->ckpt_hdr, r->hdr, NVT_HEADER_SIZE); /* the block as on disk */
		nvt_rec_encode(r, r->ckpt_hdr);
		if (r->eng.ops->queue(&r->eng, &io)) {
			r->ckpt_busy = false;
			nvt_recording_checkpoint_undo(&r->rec);
			nvt_rec_index_undo(r);
			return;
		}
		memcpy(r->hdr, r->ckpt_hdr, NVT_HEADER_SIZE);
		return;
	}
	if (tag == TAG_HDR) {
		if (res != NVT_HEADER_SIZE) {
			r->ckpt_busy = false;
			nvt_rec_fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO,
				     "checkpoint header write: %s",
				     res < 0 ? strerror((int)-res) : "short write");
			return;
		}
		r->durable = r->ckpt_target; /* the header says so already */
		/* the header itself durable now, not at the next checkpoint's sync: a crash then
		 * costs at most one checkpoint interval, not two */
		if (r->eng.ops->queue_sync(&r->eng, TAG_HDR_SYNC))
			r->ckpt_busy = false;
		return;
	}
	r->ckpt_busy = false;
	if (res < 0) {
		nvt_rec_fail(r, NVT_STOP_IO_ERROR, (int)-res,
			     "fdatasync of the checkpoint header: %s", strerror((int)-res));
		return;
	}
	nvt_rec_index_durable(r);
	nvt_hist_add(&r->ckpt_hist, nvt_mono_ns() - r->ckpt_last);
}

/* The I/O loop's clocks: progress of the storage (the oldest write retiring) and of the
 * producer for the watchdog, the next stats call, the drain limit. */
struct loop_time {
	uint64_t now, t_retired, t_produced, next_stats, drain_deadline;
	uint64_t last_retired, last_produced;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The chunk being filled holds more than a checkpoint wrote of it. */
static bool part_grew(const struct nvt_recorder *r)
{
	uint64_t p = atomic_load_explicit(&r->part, memory_order_acquire);

	return (p >> 32) == (r->pump.queued & 0xffffffffu) &&
	       (p & 0xffffffffu) > (r->part_seq == r->pump.queued ? r->part_landed : 0);
}

/* Sleep until a completion, a published chunk, a signal, or the next timed duty. */
static int64_t wait_ns(const struct nvt_recorder *r, const struct loop_time *lt)
{
	const struct nvt_record_opts *o = &r->o;
	uint64_t now = lt->now, wake = now + 1000000000ull;
	uint64_t progress = lt->t_retired < lt->t_produced ? lt->t_retired : lt->t_produced;

	if (o->stats_ns && lt->next_stats < wake)
		wake = lt->next_stats;
	if (!r->ckpt_busy && (landed(r) > r->durable || part_grew(r)) &&
	    o->format == NVT_FMT_NVTAPE && !atomic_load(&r->storage_failed)) {
		/* when due; past due, it waits on something (a write landing, the chunk about to
		 * fill, defer()) that wakes the loop when it comes: look again in an eighth of the
		 * interval meanwhile (the chunk may fill more slowly than it seemed) */
		uint64_t due = sat_add(r->ckpt_last, o->checkpoint_ns);
		if (due <= now || r->ckpt_due_at)
			due = sat_add(now, o->checkpoint_ns / 8);
		if (due < wake)
			wake = due;
	}
	if (!atomic_load(&r->failed) && sat_add(progress, sat_add(o->timeout_ns, 1000000)) < wake)
		wake = sat_add(progress, sat_add(o->timeout_ns, 1000000));
	if (lt->drain_deadline && lt->drain_deadline < wake)
		wake = lt->drain_deadline;
	return wake > now + 1000000 ? (int64_t)(wake - now) : 1000000;
}

/* The storage stalls when its oldest write does not retire for the timeout (later writes
 * completing do not count); the producer when nothing is left to write and it commits nothing
 * for the timeout, unless it is stopping anyway. */
static void watchdog(struct nvt_recorder *r, struct loop_time *lt)
{
	uint64_t produced = atomic_load(&r->produced), timeout = r->o.timeout_ns;
	bool idle = nvt_pump_pending(&r->pump) == 0 && !r->part_inflight;

	if (produced != lt->last_produced) {
		lt->last_produced = produced;
		lt->t_produced = lt->now;
	}
	if (r->pump.retired != lt->last_retired || idle) {
		lt->last_retired = r->pump.retired;
		lt->t_retired = lt->now;
	}
	if (atomic_load(&r->failed)) {
		/* nothing */
	} else if (!idle && lt->now - lt->t_retired > timeout) {
		char who[256];
		nvt_engine_stuck(&r->eng, who, sizeof(who));
		nvt_rec_fail(r, NVT_STOP_STALL, ETIMEDOUT,
			     "recording stalled: storage completed no write for %.1f s (%u writes "
			     "in flight; drive hung or far slower than expected?)%s",
			     timeout / 1e9, r->eng.inflight, who);
	} else if (idle && r->pump.queued == nvt_ring_published(&r->ring) &&
		   !atomic_load(&r->stopping) && lt->now - lt->t_produced > timeout) {
		nvt_rec_fail(r, NVT_STOP_STALL, ETIMEDOUT,
			     "recording stalled: the %s source produced no data for %.1f s "
			     "(input idle?)",
			     r->rec.source_name, timeout / 1e9);
	}
	if (atomic_load(&r->storage_failed) && !lt->drain_deadline)
		lt->drain_deadline = sat_add(lt->now, timeout);
}

static void report_stats(struct nvt_recorder *r, struct loop_time *lt)
{
	const struct nvt_record_opts *o = &r->o;
	struct nvt_record_stats st;

	if (!o->stats_ns || lt->now < lt->next_stats || !(o->progress || o->progress_input))
		return;
	nvt_rec_fill_stats(r, &st, lt->now, false);
	if (o->progress_input) {
		struct nvt_record_input in = {
			.struct_size = sizeof(in),
			.bytes = atomic_load_explicit(&r->produced, memory_order_relaxed),
			.records = atomic_load_explicit(&r->st_records, memory_order_relaxed),
		};
		o->progress_input(&st, &in, o->arg);
	} else {
		o->progress(&st, o->arg);
	}
	lt->next_stats += o->stats_ns;
	if (lt->next_stats < lt->now)
		lt->next_stats = lt->now + o->stats_ns;
}

static bool drained(struct nvt_recorder *r, const struct loop_time *lt)
{
	if (atomic_load(&r->storage_failed))
		/* what is in flight lands or fails; storage that does not complete: give up */
		return r->eng.inflight == 0 || (lt->drain_deadline && lt->now > lt->drain_deadline);
	/* everything the producer committed is written, whatever ended the recording */
	return r->eng.inflight == 0 && nvt_ring_closed(&r->ring) &&
	       r->pump.queued == nvt_ring_published(&r->ring);
}

static void publish_stats(struct nvt_recorder *r)
{
	atomic_store(&r->st_written, landed(r));
	atomic_store(&r->st_durable, r->durable);
	atomic_store(&r->st_inflight, r->eng.inflight);
	atomic_store(&r->st_max_inflight, r->pump.max_inflight);
	atomic_store(&r->st_checkpoints, r->rec.checkpoints);
}

static void reap(struct nvt_recorder *r, struct loop_time *lt)
{
	struct nvt_io_done done[64];
	int n = r->eng.ops->reap(&r->eng, done, 64, wait_ns(r, lt));

	if (n < 0 && !atomic_load(&r->failed))
		nvt_rec_fail(r, NVT_STOP_IO_ERROR, -n, "waiting for completions: %s", strerror(-n));
	lt->now = nvt_mono_ns();
	for (int i = 0; i < n; i++) {
		if (done[i].tag == NVT_TAG_WAKE)
			continue;
		if (done[i].tag == TAG_PART) {
			handle_part(r, done[i].res);
			continue;
		}
		if (done[i].tag == TAG_SYNC || done[i].tag == TAG_HDR ||
		    done[i].tag == TAG_HDR_SYNC || done[i].tag == TAG_IDX) {
			handle_ckpt(r, done[i].tag, done[i].res);
			continue;
		}
		handle_write(r, &done[i]);
	}
}

static void run_loop(struct nvt_recorder *r)
{
	const struct nvt_record_opts *o = &r->o;
	struct loop_time lt = {.now = nvt_mono_ns()};

	lt.t_retired = lt.t_produced = lt.now;
	lt.next_stats = lt.now + o->stats_ns;
	r->ckpt_last = lt.now;
	for (;;) {
		lt.now = nvt_mono_ns();
		if (!r->signalled && nvt_interrupted(o->interrupt)) {
			r->signalled = true;
			nvt_recorder_stop(r);
		}
		issue_writes(r);
		checkpoint_start(r, lt.now);
		if (r->ckpt_busy)
			checkpoint_sync(r);
		if (r->eng.ops->submit(&r->eng) < 0 && !atomic_load(&r->failed))
			nvt_rec_fail(r, NVT_STOP_IO_ERROR, EIO, "io_uring submit failed");
		if (drained(r, &lt))
			break;
		reap(r, &lt);
		watchdog(r, &lt);
		publish_stats(r);
		report_stats(r, &lt);
	}
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The drop events the index keeps. Units the producer lost that are not in the file: drops
 * inside the data keep their events; drops after the last written unit, and filled chunks a
 * failed storage never wrote, become one event at the end of the data. drop_count is the sum
 * of the events. *ev is malloc'ed (NULL when there are none). */
static uint64_t settle_events(struct nvt_recorder *r, struct nvt_drop_event **evp)
{
	uint64_t nev = 0, kept = 0, after = 0, total = 0;
	struct nvt_drop_event *ev = nvt_rec_drop_events(r, &nev);
	uint64_t unwritten = (atomic_load(&r->produced) - r->written) / r->rec.beat_bytes;

	if (nvt_source_kind_is_packets(r->rec.source_kind)) { /* drops count packets */
		unwritten = 0;
		for (uint64_t k = r->pump.retired; k < nvt_ring_published(&r->ring); k++)
			unwritten += nvt_pcapng_count_packets(nvt_ring_chunk(&r->ring, k),
							      nvt_ring_len(&r->ring, k));
	}
	for (uint64_t i = 0; i < nev; i++) {
		if (ev[i].data_offset < r->written) {
			total = add_sat(total, ev[i].beats);
			ev[kept++] = ev[i];
		} else {
			after = add_sat(after, ev[i].beats);
		}
	}
	after = add_sat(after, unwritten);
	if (after) {
		struct nvt_drop_event *grown = realloc(ev, (kept + 1) * sizeof(*ev));
		if (grown) {
			ev = grown;
			ev[kept++] = (struct nvt_drop_event){.data_offset = r->written,
							     .beats = after,
							     .time_ns = nvt_mono_ns() -
									atomic_load(&r->t0_mono)};
		}
		total = add_sat(total, after);
	}
	r->res.lost_unwritten = unwritten;
	r->rec.drop_count = total;
	r->rec.drop_events = kept;
	*evp = ev;
	return kept;
}

/* The index at off (or beside an index a checkpoint's header points at): the drop events and
 * the checksums of the chunks written; *end moves past it when it was written. */
static void write_index(struct nvt_recorder *r, const struct nvt_drop_event *ev, uint64_t n,
			uint64_t off, uint64_t *end)
{
	struct nvt_index ix = {.ev = (struct nvt_drop_event *)ev,
			       .nev = n,
			       .crc = r->sums.e,
			       .tm = r->sums.t,
			       .meta = r->meta,
			       .meta_len = r->meta_len,
			       .pad_unit = nvt_sigmf_meta_sample_bytes(r->meta)};
	struct nvt_err ierr = {0};
	size_t cap;
	void *buf = NULL;
	uint64_t used;
	uint32_t crc;
	long padded;

	while (ix.ncrc < r->sums.n && /* the spans of what was written */
	       r->sums.e[ix.ncrc].data_offset + r->sums.e[ix.ncrc].length <= r->written)
		ix.ncrc++;
	ix.ntm = ix.ncrc;
	cap = nvt_index_bytes(&ix);
	if (posix_memalign(&buf, NVT_BLOCK, cap)) {
		nvt_rec_notice(r,
			       "the drop index could not be written (out of memory); the header "
			       "still counts %llu drops",
			       (unsigned long long)r->rec.drop_count);
		r->rec.index_offset = r->rec.index_bytes = 0;
		r->rec.index_crc = 0;
		return;
	}
	padded = nvt_index_build(&ix, buf, cap, &used, &crc);
	if (padded > 0) {
		off = nvt_rec_index_final_place(r, off, (uint64_t)padded);
		nvt_index_pad(ix.pad_unit, buf, (uint64_t)padded, off - r->rec.data_offset, &used,
			      &crc);
	}
	if (padded > 0 && r->eng.ops->write_sync(&r->eng, buf, (uint64_t)padded, off, &ierr) == 0) {
		r->rec.index_offset = off;
		r->rec.index_bytes = used;
		r->rec.index_crc = crc;
		*end = off + used;
	} else {
		nvt_rec_notice(r,
			       "the drop index could not be written (%s); the header still counts "
			       "%llu drops",
			       ierr.msg, (unsigned long long)r->rec.drop_count);
		r->rec.index_offset = r->rec.index_bytes = 0; /* not a checkpoint's either */
		r->rec.index_crc = 0;
	}
	free(buf);
}

/* Where the writes issued so far end on the target (a prefix write issued while the chunk's
 * own write was not). */
static uint64_t issued_end(const struct nvt_recorder *r)
{
	uint64_t end = NVT_HEADER_SIZE + r->issue_off;

	return r->part_inflight ? end + align_up(r->part_want, NVT_BLOCK) : end;
}

/* The storage failed before the chunk being filled was written whole: the prefix of it that a
 * checkpoint wrote is data too, with its checksum after those of the chunks written. */
static void keep_landed_part(struct nvt_recorder *r)
{
	struct nvt_sums *s = &r->sums;
	uint64_t i = 0, at = 0;

	if (!r->part_landed || r->part_seq != r->pump.retired)
		return;
	while (i < s->n && s->e[i].data_offset + s->e[i].length <= r->written)
		i++;
	if (i)
		at = s->e[i - 1].data_offset + s->e[i - 1].length;
	if (!r->o.no_checksums && at == r->written && r->part_crc_len == r->part_landed &&
	    (i < s->n || nvt_sums_stage(s, r->part_landed, r->part_crc, 0))) {
		s->t[i] = (struct nvt_chunk_time){
			.data_offset = at, .time_ns = r->chunk_t[r->part_seq % r->ring.nchunks]};
		s->e[i] = (struct nvt_chunk_crc){.data_offset = at,
						 .length = r->part_landed,
						 .crc32c = r->part_crc,
						 .chunks = 1};
		s->n = i + 1;
	}
	r->written += r->part_landed;
	r->part_landed = 0;
}

/* Write index, trim, make them durable, rewrite the header as complete, make it durable. */
int nvt_rec_finalize(struct nvt_recorder *r, struct nvt_err *err)
{
	struct nvt_drop_event *ev = NULL;
	uint64_t kept = settle_events(r, &ev), end = NVT_HEADER_SIZE + r->written;
	/* Writes that never completed (a hung drive) still target the file: the index then goes
	 * after every issued write, always, so that what lands late stays inside the accounted
	 * length and below the index. */
	bool stuck = r->eng.inflight > 0;
	/* until the complete header is durable, the index of the last checkpoint's header stays
	 * in the file: a crash before then still finds it. (An engine that maps its file before
	 * the first write cuts it only once, at its last sync, to the last length it was given.) */
	bool deferred = (r->eng.ops->caps & NVT_ENGINE_FILE_NEEDS_SIZE) != 0;
	uint64_t live = deferred ? 0 : nvt_rec_index_live_end(r);
	int rc = stuck ? 0 : r->eng.ops->truncate(&r->eng, end > live ? end : live, err);

	if (!rc && (kept || stuck || r->sums.n || r->meta_len) && r->o.format == NVT_FMT_NVTAPE) {
		write_index(r, ev, kept, align_up(stuck ? issued_end(r) : end, NVT_BLOCK), &end);
		rc = r->eng.ops->truncate(&r->eng, end > live ? end : live, err);
	}
	if (!rc && !stuck && live > end) {
		/* The last checkpoint's index lies beyond the end: a header that points at the
		 * final index, still without COMPLETE, is made durable before the file is cut, so
		 * that a crash at any moment finds a header whose index is in the file. */
		rc = r->eng.ops->flush_now ? r->eng.ops->flush_now(&r->eng, err)
					   : r->eng.ops->sync_now(&r->eng, err);
		if (!rc) {
			nvt_recording_checkpoint(&r->rec, r->written, r->rec.drop_count,
						 nvt_real_ns());
			nvt_rec_encode(r, r->hdr);
			rc = r->eng.ops->write_sync(&r->eng, r->hdr, NVT_HEADER_SIZE, 0, err);
		}
		if (!rc)
			rc = r->eng.ops->sync_now(&r->eng, err);
		if (!rc)
			rc = r->eng.ops->truncate(&r->eng, end, err);
		live = 0;
	}
	if (stuck)
		nvt_rec_notice(r,
			       "%u writes never completed: the header accounts for the %llu bytes "
			       "written before them",
			       r->eng.inflight, (unsigned long long)r->written);
	free(ev);
	nvt_recording_finish(&r->rec, r->written, atomic_load(&r->failed), nvt_real_ns());
	nvt_rec_encode(r, r->hdr);
	/* The data, the index and the length durable before the header says COMPLETE: a drive's
	 * volatile cache may otherwise keep the header and lose what it accounts for. (Writes that
	 * never completed would hold the barrier up: the header is written without it then.) */
	if (!rc && !stuck)
		rc = r->eng.ops->flush_now ? r->eng.ops->flush_now(&r->eng, err)
					   : r->eng.ops->sync_now(&r->eng, err);
	if (!rc)
		rc = r->eng.ops->write_sync(&r->eng, r->hdr, NVT_HEADER_SIZE, 0, err);
	/* after an earlier failure that error stays the cause: say what this one means */
	if (rc && atomic_load(&r->failed)) {
		nvt_rec_notice(r,
			       "the recording could not be finalized (%s): its header vouches for "
			       "the %llu bytes of its last checkpoint; run nvtape recover once the "
			       "drive answers again",
			       err->msg, (unsigned long long)r->durable);
		return rc;
	}
	if (!rc)
		rc = r->eng.ops->sync_now(&r->eng, err);
	if (rc && atomic_load(&r->failed))
		nvt_rec_notice(r, "the final header is written, but making it durable failed (%s)",
			       err->msg);
	/* a hung drive: the checkpoint's index beyond the end goes after the complete header */
	if (!rc && live > end) {
		rc = r->eng.ops->truncate(&r->eng, end, err);
		if (!rc)
			rc = r->eng.ops->sync_now(&r->eng, err);
	}
	return rc;
}

/* After a failure the loop ends before the producer is done: wait for its close. */
static void wait_producer_closed(struct nvt_recorder *r)
{
	while (!nvt_ring_closed(&r->ring))
		nvt_ring_wait_published(&r->ring, 100);
}

static void finish(struct nvt_recorder *r)
{
	struct nvt_err ferr = {0};
	uint64_t t0 = atomic_load(&r->t0_mono);

	if (!atomic_load(&r->failed))
		r->reason = r->latched;
	keep_landed_part(r);
	r->t_end = nvt_mono_ns();
	if (t0) {
		r->rec.start_ns = r->t0_real;
		r->rec.duration_ns = r->t_end - t0;
	}
	if (nvt_rec_finalize(r, &ferr)) {
		if (!atomic_load(&r->failed))
			r->reason = NVT_STOP_IO_ERROR;
		atomic_store(&r->failed, 1);
		nvt_err_set(&r->err, ferr.code, "finalizing the recording: %s", ferr.msg);
	}
}

void *nvt_rec_io_thread(void *arg)
{
	struct nvt_recorder *r = arg;
	uint64_t c0;

	prctl(PR_SET_NAME, "nvt-io");
	if (nvt_rec_setup(r)) {
		nvt_engine_close(&r->eng);
		return NULL;
	}
	c0 = nvt_thread_cpu_ns();
	run_loop(r);
	publish_stats(r);
	r->io_cpu_ns = nvt_thread_cpu_ns() - c0;
	wait_producer_closed(r);
	finish(r);
	r->res.ckpt_p50_ns = nvt_hist_pct(&r->ckpt_hist, 50);
	r->res.ckpt_p99_ns = nvt_hist_pct(&r->ckpt_hist, 99);
	r->res.ckpt_max_ns = nvt_hist_pct(&r->ckpt_hist, 100);
	/* the thread that set the engine's io_uring up takes it down: only its single issuer
	 * can let go of the registered files at once */
	r->res.fixed_bufs = r->eng.fixed_bufs;
	nvt_engine_close(&r->eng);
	return NULL;
}
