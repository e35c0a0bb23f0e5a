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

#include "control/recorder_int.h"
#include "ring/pump.h"
#include "format/lifecycle.h"
#include "util/sysutil.h"

#define TAG_SYNC    (UINT64_MAX - 2)
#define TAG_HDR     (UINT64_MAX - 3)
#define EXTEND_STEP (1ull << 30) /* open-ended recordings reserve space 1 GiB ahead */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

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

	if (atomic_load(&r->failed))
		return;
	r->reason = reason;
	atomic_store(&r->failed, 1);
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
	st->bytes_written = r->written;
	st->bytes_durable = r->durable;
	st->drops = atomic_load(&r->drops);
	pthread_mutex_lock(&r->ev_lock);
	st->drop_events = r->nev;
	pthread_mutex_unlock(&r->ev_lock);
	st->drop_events += (uint64_t)atomic_load(&r->pending_event);
	st->inflight = r->eng.inflight;
	st->max_inflight = r->pump.max_inflight;
	st->ring_fill = nvt_ring_fill(&r->ring);
	st->ring_hwm = nvt_ring_hwm(&r->ring);
	st->ring_chunks = r->ring.nchunks;
	st->checkpoints = r->rec.checkpoints;
	st->final = final;
}

/* Reserve space ahead of the write pointer when the final size is unknown. */
static void extend_ahead(struct nvt_recorder *r, uint64_t end)
{
	struct nvt_err err = {0};

	if (!r->extend || !r->eng.can_reserve || end + EXTEND_STEP / 2 <= r->prealloc_end)
		return;
	if (r->eng.ops->reserve(&r->eng, r->prealloc_end + EXTEND_STEP, &err)) {
		r->extend = false; /* the writes themselves will meet ENOSPC */
		return;
	}
	r->prealloc_end += EXTEND_STEP;
}

static void issue_writes(struct nvt_recorder *r)
{
	while (!atomic_load(&r->failed) && nvt_pump_can_queue(&r->pump)) {
		uint64_t len = nvt_pump_next_len(&r->pump);
		uint64_t off = NVT_HEADER_SIZE + r->issue_off;
		extend_ahead(r, off + align_up(len, NVT_BLOCK));
		if (nvt_pump_queue(&r->pump, off, len))
			break;
		r->issue_off += len;
	}
}

static void write_failed(struct nvt_recorder *r, uint64_t k, uint64_t len, int64_t res)
{
	unsigned long long want = align_up(len, NVT_BLOCK);
	unsigned long long off = r->pump.off[k % r->ring.nchunks];

	if (res == -ENOSPC || (res >= 0 && (uint64_t)res < want))
		nvt_rec_fail(r, NVT_STOP_NO_SPACE, ENOSPC,
			     "no space left on the device: the write of %llu bytes at offset %llu "
			     "%s; everything before it is kept",
			     want, off, res < 0 ? "failed with ENOSPC" : "was cut short");
	else
		nvt_rec_fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO,
			     "write of %llu bytes at offset %llu failed%s%s%s: %s; everything "
			     "written before it is kept",
			     want, off, r->eng.fault[0] ? " on " : "", r->eng.fault,
			     r->eng.fault[0] ? " (that drive failed)" : "",
			     res < 0 ? strerror((int)-res) : "short write");
}

/* A write completed: failures stop the recording; landed chunks go back in order. */
static void handle_write(struct nvt_recorder *r, const struct nvt_io_done *d)
{
	uint64_t k, len, off;
	int rc = nvt_pump_complete(&r->pump, d, &k, &len);

	if (rc < 0)
		write_failed(r, k, len, d->res);
	while (nvt_pump_ready(&r->pump, &k, &off, &len)) {
		r->written += len;
		nvt_pump_retire(&r->pump, 0);
	}
}

static void checkpoint_start(struct nvt_recorder *r, uint64_t now)
{
	if (r->ckpt_busy || atomic_load(&r->failed) || r->o.format != NVT_FMT_NVTAPE ||
	    now - r->ckpt_last < r->o.checkpoint_ns || r->written == r->durable)
		return;
	if (r->eng.ops->queue_sync(&r->eng, TAG_SYNC))
		return;
	r->ckpt_busy = true;
	r->ckpt_target = r->written;
	r->ckpt_last = now;
}

static void handle_ckpt(struct nvt_recorder *r, uint64_t tag, int64_t res)
{
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
		nvt_recording_checkpoint(&r->rec, r->ckpt_target, atomic_load(&r->drops),
					 nvt_real_ns());
		nvt_recording_encode(&r->rec, r->ckpt_hdr);
		if (r->eng.ops->queue(&r->eng, &io)) {
			r->ckpt_busy = false;
			nvt_recording_checkpoint_undo(&r->rec);
		}
		return;
	}
	r->ckpt_busy = false;
	if (res != NVT_HEADER_SIZE) {
		nvt_rec_fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO,
			     "checkpoint header write: %s",
			     res < 0 ? strerror((int)-res) : "short write");
		return;
	}
	r->durable = r->ckpt_target; /* durable on the next sync; the header says so already */
}

static void run_loop(struct nvt_recorder *r)
{
	const struct nvt_record_opts *o = &r->o;
	struct nvt_io_done done[64];
	uint64_t now = nvt_mono_ns(), t_progress = now, next_stats = now + o->stats_ns;
	uint64_t last_produced = 0, drain_deadline = 0;

	r->ckpt_last = now;
	for (;;) {
		now = nvt_mono_ns();
		if (!r->signalled && o->interrupt && *o->interrupt) {
			r->signalled = true;
			nvt_recorder_stop(r);
		}
		issue_writes(r);
		checkpoint_start(r, now);
		if (r->eng.ops->submit(&r->eng) < 0 && !atomic_load(&r->failed))
			nvt_rec_fail(r, NVT_STOP_IO_ERROR, EIO, "io_uring submit failed");
		if (r->eng.inflight == 0 &&
		    (atomic_load(&r->failed) ||
		     (nvt_ring_closed(&r->ring) && r->pump.queued == nvt_ring_published(&r->ring))))
			break;
		if (atomic_load(&r->failed) && drain_deadline && now > drain_deadline)
			break; /* storage does not complete: give up the drain */

		/* sleep until a completion, a published chunk, a signal, or the next timed duty */
		uint64_t wake = now + 1000000000ull;
		if (o->stats_ns && next_stats < wake)
			wake = next_stats;
		if (!r->ckpt_busy && r->written > r->durable &&
		    r->ckpt_last + o->checkpoint_ns < wake)
			wake = r->ckpt_last + o->checkpoint_ns;
		if (!atomic_load(&r->failed) && t_progress + o->timeout_ns + 1000000 < wake)
			wake = t_progress + o->timeout_ns + 1000000;
		if (drain_deadline && drain_deadline < wake)
			wake = drain_deadline;
		int64_t wait = wake > now + 1000000 ? (int64_t)(wake - now) : 1000000;
		int n = r->eng.ops->reap(&r->eng, done, 64, wait);
		if (n < 0 && !atomic_load(&r->failed))
			nvt_rec_fail(r, NVT_STOP_IO_ERROR, -n, "waiting for completions: %s",
				     strerror(-n));
		now = nvt_mono_ns();
		for (int i = 0; i < n; i++) {
			if (done[i].tag == NVT_TAG_WAKE)
				continue;
			if (done[i].tag == TAG_SYNC || done[i].tag == TAG_HDR) {
				handle_ckpt(r, done[i].tag, done[i].res);
				continue;
			}
			t_progress = now;
			handle_write(r, &done[i]);
		}
		uint64_t produced = atomic_load(&r->produced);
		if (produced != last_produced) {
			last_produced = produced;
			t_progress = now;
		}
		if (!atomic_load(&r->failed) && now - t_progress > o->timeout_ns) {
			double s = (double)o->timeout_ns / 1e9;
			if (r->eng.inflight)
				nvt_rec_fail(r, NVT_STOP_STALL, ETIMEDOUT,
					     "recording stalled: storage completed no write for "
					     "%.1f s (%u "
					     "writes in flight; drive hung or far slower than "
					     "expected?)",
					     s, r->eng.inflight);
			else
				nvt_rec_fail(r, NVT_STOP_STALL, ETIMEDOUT,
					     "recording stalled: the %s source produced no data "
					     "for %.1f s "
					     "(input idle?)",
					     r->rec.source_name, s);
		}
		if (atomic_load(&r->failed) && !drain_deadline)
			drain_deadline = now + o->timeout_ns;
		if (o->stats_ns && now >= next_stats && o->progress) {
			struct nvt_record_stats st;
			nvt_rec_fill_stats(r, &st, now, false);
			o->progress(&st, o->arg);
			next_stats += o->stats_ns;
			if (next_stats < now)
				next_stats = now + o->stats_ns;
		}
	}
}

/* Write index, trim, rewrite the header as complete, make it durable. */
int nvt_rec_finalize(struct nvt_recorder *r, struct nvt_err *err)
{
	uint64_t nev = 0, kept = 0, end;
	struct nvt_drop_event *ev = nvt_rec_drop_events(r, &nev);
	int rc;

	/* Beats the source emitted that are not in the file: drops inside the data keep their
	 * events; drops after the last written beat, and filled chunks a failed storage never
	 * wrote, become one event at the end of the data. drop_count is the sum of the events. */
	uint64_t unwritten = (atomic_load(&r->produced) - r->written) / r->rec.beat_bytes;
	uint64_t after = 0, total = 0;
	for (uint64_t i = 0; i < nev; i++) {
		if (ev[i].data_offset < r->written) {
			total += ev[i].beats;
			ev[kept++] = ev[i];
		} else {
			after += ev[i].beats;
		}
	}
	after += unwritten;
	if (after) {
		struct nvt_drop_event *grown = realloc(ev, (kept + 1) * sizeof(*ev));
		if (grown) {
			ev = grown;
			ev[kept++] = (struct nvt_drop_event){.data_offset = r->written,
							     .beats = after,
							     .time_ns = nvt_mono_ns() -
									atomic_load(&r->t0_mono)};
		}
		total += after;
	}
	r->res.lost_unwritten = unwritten;
	r->rec.drop_count = total;
	r->rec.drop_events = kept;
	/* Writes that never completed (a hung drive) still target the file: the index then goes
	 * after every issued write, always, so that what lands late stays inside the accounted
	 * length and below the index. */
	bool stuck = r->eng.inflight > 0;
	end = NVT_HEADER_SIZE + r->written;
	rc = stuck ? 0 : r->eng.ops->truncate(&r->eng, end, err);
	if (!rc && (kept || stuck) && r->o.format == NVT_FMT_NVTAPE) {
		size_t cap = align_up(sizeof(struct nvt_index_header) +
					      sizeof(struct nvt_index_record) + kept * sizeof(*ev),
				      NVT_BLOCK);
		void *buf = NULL;
		uint64_t used;
		uint32_t crc;
		uint64_t off = align_up(stuck ? NVT_HEADER_SIZE + r->issue_off : end, NVT_BLOCK);
		if (posix_memalign(&buf, NVT_BLOCK, cap) == 0) {
			long padded = nvt_index_encode(ev, kept, buf, cap, &used, &crc);
			struct nvt_err ierr = {0};
			if (padded > 0 && r->eng.ops->write_sync(&r->eng, buf, (uint64_t)padded,
								 off, &ierr) == 0) {
				r->rec.index_offset = off;
				r->rec.index_bytes = used;
				r->rec.index_crc = crc;
				end = off + used;
			} else {
				nvt_rec_notice(r,
					       "the drop index could not be written (%s); the "
					       "header still "
					       "counts %llu drops",
					       ierr.msg, (unsigned long long)r->rec.drop_count);
			}
			free(buf);
		}
		rc = r->eng.ops->truncate(&r->eng, end, err);
	}
	if (stuck)
		nvt_rec_notice(
			r,
			"%u writes never completed: the header accounts for the %llu bytes written "
			"before them",
			r->eng.inflight, (unsigned long long)r->written);
	free(ev);
	nvt_recording_finish(&r->rec, r->written, atomic_load(&r->failed), nvt_real_ns());
	nvt_recording_encode(&r->rec, r->hdr);
	if (!rc)
		rc = r->eng.ops->write_sync(&r->eng, r->hdr, NVT_HEADER_SIZE, 0, err);
	if (!rc)
		rc = r->eng.ops->sync_now(&r->eng, err);
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

	r->reason = nvt_rec_end_reason(r);
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
	if (nvt_rec_setup(r))
		return NULL;
	c0 = nvt_thread_cpu_ns();
	run_loop(r);
	r->io_cpu_ns = nvt_thread_cpu_ns() - c0;
	wait_producer_closed(r);
	finish(r);
	return NULL;
}
