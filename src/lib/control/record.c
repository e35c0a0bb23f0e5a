/* SPDX-License-Identifier: MIT */
/* Recording controller. The calling thread is the I/O thread: it issues one write per filled
 * chunk, in order, up to qd in flight, releases chunks to the source strictly in order, runs
 * the durable-length checkpoint (async fdatasync, then header rewrite) and the stall watchdog,
 * and finalizes header and drop index whatever ends the recording. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "util/exit_compat.h"
#include "storage/engine.h"
#include "nvtape/record.h"
#include "ring/ring.h"
#include "stream/source.h"
#include "util/sysutil.h"
#include "sys/devcheck.h"

#define TAG_SYNC    (UINT64_MAX - 2)
#define TAG_HDR     (UINT64_MAX - 3)
#define EXTEND_STEP (1ull << 30) /* open-ended recordings reserve space 1 GiB ahead */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

void nvt_record_opts_init(struct nvt_record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->engine = "file";
	o->source = "tpg";
	o->format = NVT_FMT_NVTAPE;
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->timeout_ns = 10000000000ull;
	o->checkpoint_ns = 1000000000ull;
	o->stats_ns = 1000000000ull;
	o->input_fd = 0;
	o->unit_bytes = 1;
	o->source_kind = NVT_SRC_API;
	o->source_name = "api";
}

const char *nvt_stop_reason_name(enum nvt_stop_reason r)
{
	static const char *const names[] = {"limit",    "eof",   "signal",      "io-error",
					    "no-space", "stall", "source-error"};
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

struct recorder {
	const struct nvt_record_opts *o;
	struct nvt_record_result *res;
	struct nvt_ring ring;
	struct nvt_engine eng;
	struct nvt_source src;
	struct nvt_layout layout;
	const struct nvt_source_ops *sops;
	struct nvt_recording rec;
	void *hdr;      /* 4 KiB aligned: header image for synchronous writes */
	void *ckpt_hdr; /* 4 KiB aligned: header image for the async checkpoint write */
	uint64_t *slot_off, *slot_len;
	uint8_t *slot_done;
	uint64_t issued, released, issue_off, written, durable;
	uint64_t prealloc_end;
	bool extend; /* reserve ahead (size unknown) */
	bool failed, stopping;
	enum nvt_stop_reason reason;
	bool ckpt_busy;
	uint64_t ckpt_target, ckpt_last;
	unsigned max_inflight;
	uint64_t eagain_retries;
};

static void notice(struct recorder *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct recorder *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!r->o->notice)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o->notice(msg, r->o->arg);
}

static void encode_header(struct recorder *r, void *buf)
{
	if (r->o->format == NVT_FMT_FDREC)
		fdrec_header_encode(&r->rec, buf);
	else
		nvt_header_encode(&r->rec, buf);
}

static void fail(struct recorder *r, enum nvt_stop_reason reason, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void fail(struct recorder *r, enum nvt_stop_reason reason, int code, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	r->reason = reason;
	va_start(ap, fmt);
	if (!r->res->err.code) {
		r->res->err.code = code ? code : EIO;
		vsnprintf(r->res->err.msg, sizeof(r->res->err.msg), fmt, ap);
	}
	va_end(ap);
	nvt_source_request_stop(&r->src);
	nvt_ring_abort(&r->ring);
}

static void fill_stats(struct recorder *r, struct nvt_record_stats *st, uint64_t now, bool final)
{
	uint64_t t0 = atomic_load(&r->src.t0_mono);

	st->elapsed_ns = t0 && now > t0 ? now - t0 : 0;
	st->bytes_written = r->written;
	st->bytes_durable = r->durable;
	st->drops = atomic_load(&r->src.drops);
	pthread_mutex_lock(&r->src.ev_lock);
	st->drop_events = r->src.nev + (r->src.pending_drop ? 1 : 0);
	pthread_mutex_unlock(&r->src.ev_lock);
	st->inflight = r->eng.inflight;
	st->max_inflight = r->max_inflight;
	st->ring_fill = nvt_ring_fill(&r->ring);
	st->ring_hwm = atomic_load(&r->ring.hwm);
	st->ring_chunks = r->ring.nchunks;
	st->checkpoints = r->rec.checkpoints;
	st->final = final;
}

/* Reserve space ahead of the write pointer when the final size is unknown. */
static void extend_ahead(struct recorder *r, uint64_t end)
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

/* The write of chunk k (its slot's offset and length already set). */
static int queue_chunk(struct recorder *r, uint64_t k, bool retry)
{
	unsigned slot = (unsigned)(k % r->ring.nchunks);
	struct nvt_io io = {.dir = NVT_IO_WRITE,
			    .buf = nvt_ring_chunk(&r->ring, k),
			    .len = align_up(r->slot_len[slot], NVT_BLOCK),
			    .offset = NVT_HEADER_SIZE + r->slot_off[slot],
			    .buf_index = (int)slot,
			    .tag = k,
			    .blocking = retry};

	extend_ahead(r, io.offset + io.len);
	return r->eng.ops->queue(&r->eng, &io);
}

static void issue_writes(struct recorder *r)
{
	uint64_t head = nvt_ring_published(&r->ring);

	while (!r->failed && r->issued < head && r->eng.inflight < r->eng.depth) {
		unsigned slot = (unsigned)(r->issued % r->ring.nchunks);
		uint64_t len = r->ring.fill[slot];
		r->slot_off[slot] = r->issue_off;
		r->slot_len[slot] = len;
		if (queue_chunk(r, r->issued, false))
			break;
		r->issue_off += len;
		r->issued++;
		if (r->eng.inflight > r->max_inflight)
			r->max_inflight = r->eng.inflight;
	}
}

static void handle_write(struct recorder *r, uint64_t k, int64_t res)
{
	unsigned slot = (unsigned)(k % r->ring.nchunks);
	uint64_t want = align_up(r->slot_len[slot], NVT_BLOCK);

	/* a throttled block layer may answer a non-blocking attempt with EAGAIN: ask again */
	if (res == -EAGAIN && !r->failed && queue_chunk(r, k, true) == 0) {
		r->eagain_retries++;
		return;
	}
	if (res != (int64_t)want) {
		unsigned long long off = NVT_HEADER_SIZE + r->slot_off[slot];
		if (res == -ENOSPC || (res >= 0 && res < (int64_t)want))
			fail(r, NVT_STOP_NO_SPACE, ENOSPC,
			     "no space left on the device: the write of %llu bytes at offset %llu "
			     "%s; everything before it is kept",
			     (unsigned long long)want, off,
			     res < 0 ? "failed with ENOSPC" : "was cut short");
		else
			fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO,
			     "write of %llu bytes at offset %llu failed%s%s%s: %s; everything "
			     "written before it is kept",
			     (unsigned long long)want, off, r->eng.fault[0] ? " on " : "",
			     r->eng.fault, r->eng.fault[0] ? " (that drive failed)" : "",
			     res < 0 ? strerror((int)-res) : "short write");
		return;
	}
	r->slot_done[slot] = 1;
	while (r->released < r->issued && r->slot_done[r->released % r->ring.nchunks]) {
		unsigned s = (unsigned)(r->released % r->ring.nchunks);
		r->slot_done[s] = 0;
		r->written += r->slot_len[s];
		r->released++;
		nvt_ring_release(&r->ring);
	}
}

static void checkpoint_start(struct recorder *r, uint64_t now)
{
	if (r->ckpt_busy || r->failed || r->o->format != NVT_FMT_NVTAPE ||
	    now - r->ckpt_last < r->o->checkpoint_ns || r->written == r->durable)
		return;
	if (r->eng.ops->queue_sync(&r->eng, TAG_SYNC))
		return;
	r->ckpt_busy = true;
	r->ckpt_target = r->written;
	r->ckpt_last = now;
}

static void handle_ckpt(struct recorder *r, uint64_t tag, int64_t res)
{
	if (tag == TAG_SYNC) {
		struct nvt_io io = {.dir = NVT_IO_WRITE,
				    .buf = r->ckpt_hdr,
				    .len = NVT_HEADER_SIZE,
				    .offset = 0,
				    .buf_index = -1,
				    .tag = TAG_HDR};
		if (res < 0) {
			fail(r, NVT_STOP_IO_ERROR, (int)-res, "fdatasync for the checkpoint: %s",
			     strerror((int)-res));
			r->ckpt_busy = false;
			return;
		}
		r->rec.durable_bytes = r->ckpt_target;
		r->rec.drop_count = atomic_load(&r->src.drops);
		r->rec.stop_ns = nvt_real_ns();
		r->rec.checkpoints++;
		encode_header(r, r->ckpt_hdr);
		if (r->eng.ops->queue(&r->eng, &io)) {
			r->ckpt_busy = false;
			r->rec.checkpoints--;
		}
		return;
	}
	r->ckpt_busy = false;
	if (res != NVT_HEADER_SIZE) {
		fail(r, NVT_STOP_IO_ERROR, res < 0 ? (int)-res : EIO, "checkpoint header write: %s",
		     res < 0 ? strerror((int)-res) : "short write");
		return;
	}
	r->durable = r->ckpt_target; /* durable on the next sync; the header says so already */
}

static void run_loop(struct recorder *r)
{
	const struct nvt_record_opts *o = r->o;
	struct nvt_io_done done[64];
	uint64_t now = nvt_mono_ns(), t_progress = now, next_stats = now + o->stats_ns;
	uint64_t last_produced = 0, drain_deadline = 0;

	r->ckpt_last = now;
	for (;;) {
		now = nvt_mono_ns();
		if (!r->stopping && !r->failed && o->interrupt && *o->interrupt) {
			r->stopping = true;
			r->reason = NVT_STOP_SIGNAL;
			nvt_source_request_stop(&r->src);
		}
		issue_writes(r);
		checkpoint_start(r, now);
		if (r->eng.ops->submit(&r->eng) < 0 && !r->failed)
			fail(r, NVT_STOP_IO_ERROR, EIO, "io_uring submit failed");
		if (r->eng.inflight == 0 &&
		    (r->failed ||
		     (atomic_load(&r->ring.closed) && r->issued == nvt_ring_published(&r->ring))))
			break;
		if (r->failed && drain_deadline && now > drain_deadline)
			break; /* storage does not complete: give up the drain */

		/* sleep until a completion, a published chunk, a signal, or the next timed duty */
		uint64_t wake = now + 1000000000ull;
		if (o->stats_ns && next_stats < wake)
			wake = next_stats;
		if (!r->ckpt_busy && r->written > r->durable &&
		    r->ckpt_last + o->checkpoint_ns < wake)
			wake = r->ckpt_last + o->checkpoint_ns;
		if (!r->failed && t_progress + o->timeout_ns + 1000000 < wake)
			wake = t_progress + o->timeout_ns + 1000000;
		if (drain_deadline && drain_deadline < wake)
			wake = drain_deadline;
		int64_t wait = wake > now + 1000000 ? (int64_t)(wake - now) : 1000000;
		int n = r->eng.ops->reap(&r->eng, done, 64, wait);
		if (n < 0 && !r->failed)
			fail(r, NVT_STOP_IO_ERROR, -n, "waiting for completions: %s", strerror(-n));
		now = nvt_mono_ns();
		for (int i = 0; i < n; i++) {
			if (done[i].tag == NVT_TAG_WAKE)
				continue;
			if (done[i].tag == TAG_SYNC || done[i].tag == TAG_HDR) {
				handle_ckpt(r, done[i].tag, done[i].res);
				continue;
			}
			t_progress = now;
			handle_write(r, done[i].tag, done[i].res);
		}
		uint64_t produced = atomic_load(&r->src.produced_bytes);
		if (produced != last_produced) {
			last_produced = produced;
			t_progress = now;
		}
		if (!r->failed && now - t_progress > o->timeout_ns) {
			double s = (double)o->timeout_ns / 1e9;
			if (r->eng.inflight)
				fail(r, NVT_STOP_STALL, ETIMEDOUT,
				     "recording stalled: storage completed no write for %.1f s (%u "
				     "writes in flight; drive hung or far slower than expected?)",
				     s, r->eng.inflight);
			else
				fail(r, NVT_STOP_STALL, ETIMEDOUT,
				     "recording stalled: the %s source produced no data for %.1f s "
				     "(input idle?)",
				     r->sops->name, s);
		}
		if (r->failed && !drain_deadline)
			drain_deadline = now + o->timeout_ns;
		if (o->stats_ns && now >= next_stats && o->progress) {
			struct nvt_record_stats st;
			fill_stats(r, &st, now, false);
			o->progress(&st, o->arg);
			next_stats += o->stats_ns;
			if (next_stats < now)
				next_stats = now + o->stats_ns;
		}
	}
}

/* Write index, trim, rewrite the header as complete, make it durable. */
static int finalize(struct recorder *r, struct nvt_err *err)
{
	uint64_t nev = 0, kept = 0, end;
	struct nvt_drop_event *ev = nvt_source_drop_events(&r->src, &nev);
	int rc;

	r->rec.data_bytes = r->written;
	r->rec.durable_bytes = r->written;
	/* Beats the source emitted that are not in the file: drops inside the data keep their
	 * events; drops after the last written beat, and filled chunks a failed storage never
	 * wrote, become one event at the end of the data. drop_count is the sum of the events. */
	uint64_t unwritten = (atomic_load(&r->src.produced_bytes) - r->written) / r->rec.beat_bytes;
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
			ev[kept++] = (struct nvt_drop_event){
				.data_offset = r->written,
				.beats = after,
				.time_ns = nvt_mono_ns() - atomic_load(&r->src.t0_mono)};
		}
		total += after;
	}
	r->res->lost_unwritten = unwritten;
	r->rec.drop_count = total;
	r->rec.drop_events = kept;
	r->rec.stop_ns = nvt_real_ns();
	/* Writes that never completed (a hung drive) still target the file: the index then goes
	 * after every issued write, always, so that what lands late stays inside the accounted
	 * length and below the index. */
	bool stuck = r->eng.inflight > 0;
	end = NVT_HEADER_SIZE + r->written;
	rc = stuck ? 0 : r->eng.ops->truncate(&r->eng, end, err);
	if (!rc && (kept || stuck) && r->o->format == NVT_FMT_NVTAPE) {
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
				notice(r,
				       "the drop index could not be written (%s); the header still "
				       "counts %llu drops",
				       ierr.msg, (unsigned long long)r->rec.drop_count);
			}
			free(buf);
		}
		rc = r->eng.ops->truncate(&r->eng, end, err);
	}
	if (stuck)
		notice(r,
		       "%u writes never completed: the header accounts for the %llu bytes written "
		       "before them",
		       r->eng.inflight, (unsigned long long)r->written);
	free(ev);
	r->rec.flags |= NVT_FLAG_COMPLETE;
	if (r->failed)
		r->rec.flags |= NVT_FLAG_STOP_ERROR;
	encode_header(r, r->hdr);
	if (!rc)
		rc = r->eng.ops->write_sync(&r->eng, r->hdr, NVT_HEADER_SIZE, 0, err);
	if (!rc)
		rc = r->eng.ops->sync_now(&r->eng, err);
	return rc;
}

static int check_opts(const struct nvt_record_opts *o, const struct nvt_source_ops *sops,
		      struct nvt_err *err)
{
	if (!sops) {
		nvt_err_set(err, EINVAL, "unknown source \"%s\" (sources: tpg, stdin)", o->source);
		return -EINVAL;
	}
	if (!nvt_engine_find(o->engine)) {
		nvt_err_set(err, EINVAL, "unknown engine \"%s\" (engines: %s)", o->engine,
			    nvt_engine_names());
		return -EINVAL;
	}
	if (o->chunk_bytes < NVT_BLOCK || o->chunk_bytes % NVT_BLOCK ||
	    o->chunk_bytes > (1u << 30)) {
		nvt_err_set(err, EINVAL, "--chunk must be a multiple of 4 KiB between 4K and 1G");
		return -EINVAL;
	}
	if (o->chunks < 2 || o->chunks > 65536) {
		nvt_err_set(err, EINVAL, "--chunks must be between 2 and 65536");
		return -EINVAL;
	}
	if (o->qd < 1 || o->qd > 1024) {
		nvt_err_set(err, EINVAL, "--qd must be between 1 and 1024");
		return -EINVAL;
	}
	if (!strcmp(o->engine, "nvme") && o->qd > NVT_NVME_MAX_QD) {
		nvt_err_set(
			err, EINVAL,
			"--qd with --engine nvme counts NVMe commands in flight per drive: 1 to "
			"%u",
			NVT_NVME_MAX_QD);
		return -EINVAL;
	}
	if (o->format == NVT_FMT_FDREC && sops->kind != NVT_SRC_TPG) {
		nvt_err_set(err, EINVAL,
			    "--format fdrec holds 16-byte beats only: use it with --source tpg");
		return -EINVAL;
	}
	if (o->timeout_ns == 0) {
		nvt_err_set(err, EINVAL, "--timeout must be > 0");
		return -EINVAL;
	}
	return 0;
}

int nvt_record(const struct nvt_record_opts *o, struct nvt_record_result *res)
{
	struct recorder r;
	struct nvt_err *err = &res->err;
	struct nvt_source_params sp = {0};
	struct nvt_engine_params ep = {0};
	uint64_t size = o->size_bytes, reserve = 0, io_c0, proc_c0;
	bool use_file = strcmp(o->engine, "null") != 0;
	int exitc = NVT_EXIT_RUNTIME;

	memset(res, 0, sizeof(*res));
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.res = res;
	r.ring.prod_efd = r.ring.cons_efd = -1;
	r.sops = nvt_source_find(o->source ? o->source : "");
	if (check_opts(o, r.sops, err))
		return NVT_EXIT_USAGE;
	if (r.sops->kind == NVT_SRC_TPG && size % NVT_BLOCK) {
		size = align_up(size, NVT_BLOCK);
		notice(&r, "--size rounded up to %llu bytes (whole 4 KiB blocks for O_DIRECT)",
		       (unsigned long long)size);
	}
	if (size)
		reserve = NVT_HEADER_SIZE + size;
	else if (o->rate_bps && o->duration_ns)
		reserve = NVT_HEADER_SIZE + align_up((uint64_t)((unsigned __int128)o->rate_bps *
								o->duration_ns / 1000000000ull),
						     NVT_BLOCK);
	nvt_layout_resolve(&o->layout, o->path, &r.layout);
	if (nvt_layout_check(&r.layout, err))
		return NVT_EXIT_USAGE;
	if (!strcmp(o->engine, "nvme") && !reserve && r.layout.n == 1 &&
	    strncmp(r.layout.path[0], "/dev/", 5)) {
		nvt_err_set(err, EINVAL,
			    "--engine nvme into a file needs its length up front (--size, or "
			    "--duration with --rate): the file is allocated and mapped before the "
			    "first write");
		return NVT_EXIT_USAGE;
	}
	for (unsigned m = 0; use_file && m < r.layout.n; m++) {
		uint64_t need =
			size ? r.layout.member_offset + nvt_layout_share(&r.layout, m, reserve) : 0;
		if (nvt_target_check_output(r.layout.path[m], need, o->force, err))
			return NVT_EXIT_RUNTIME;
	}

	if (nvt_ring_create(&r.ring, o->chunks, o->chunk_bytes, err))
		goto out;
	if (r.ring.notice[0])
		notice(&r, "%s", r.ring.notice);
	ep.path = r.layout.path[0];
	ep.layout = &r.layout;
	ep.write = true;
	ep.qd = o->qd;
	ep.prealloc = reserve;
	ep.cmd_timeout_ns = o->timeout_ns;
	ep.bufs = r.ring.mem;
	ep.buf_bytes = o->chunk_bytes;
	ep.nbufs = o->chunks;
	ep.buf_phase = NVT_HEADER_SIZE;
	ep.wake_fd = r.ring.cons_efd;
	if (nvt_engine_open(&r.eng, nvt_engine_for(o->engine, &r.layout), &ep, err))
		goto out;
	snprintf(res->engine_desc, sizeof(res->engine_desc), "%s", r.eng.desc);
	if (r.eng.can_reserve) {
		/* open-ended: the first step now, the next ones ahead of the writes */
		r.extend = !reserve;
		if (!reserve)
			reserve = EXTEND_STEP;
		{
			struct nvt_err rerr = {0};
			uint64_t t0 = nvt_mono_ns();
			int rc = r.eng.ops->reserve(&r.eng, reserve, &rerr);
			if (rc == -ENOSPC && size) {
				nvt_err_set(err, ENOSPC, "%s: %s; free space or lower --size",
					    o->path, rerr.msg);
				r.eng.ops->truncate(&r.eng, 0, &rerr);
				goto out_unlink;
			}
			if (rc)
				notice(&r, "space not reserved up front (%s)", rerr.msg);
			if (r.eng.zero_filled)
				notice(&r,
				       "this filesystem cannot preallocate (exFAT?): %llu MB "
				       "zero-filled "
				       "up front in %.1f s, so that recording overwrites instead "
				       "of "
				       "extending (extending O_DIRECT writes there are 10-20x "
				       "slower)%s",
				       (unsigned long long)(reserve / 1000000),
				       (nvt_mono_ns() - t0) / 1e9,
				       r.extend ? "; beyond that the file grows slowly: give --size"
						: "");
			r.prealloc_end = reserve;
		}
	}
	r.slot_off = calloc(o->chunks, sizeof(*r.slot_off));
	r.slot_len = calloc(o->chunks, sizeof(*r.slot_len));
	r.slot_done = calloc(o->chunks, 1);
	if (!r.slot_off || !r.slot_len || !r.slot_done ||
	    posix_memalign(&r.hdr, NVT_BLOCK, NVT_HEADER_SIZE) ||
	    posix_memalign(&r.ckpt_hdr, NVT_BLOCK, NVT_HEADER_SIZE)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	r.rec.format = o->format;
	r.rec.beat_bytes = r.sops->beat_bytes;
	r.rec.source_kind = r.sops->kind;
	r.rec.chunk_bytes = (uint32_t)o->chunk_bytes;
	r.rec.chunk_count = o->chunks;
	if (r.layout.n > 1) {
		r.rec.members = r.layout.n;
		r.rec.stripe_bytes = r.layout.stripe;
		r.rec.member_offset = r.layout.member_offset;
	}
	r.rec.io_path = r.eng.io_path;
	r.rec.drive_count = r.eng.ndrives;
	memcpy(r.rec.drive, r.eng.drive, sizeof(r.rec.drive));
	r.rec.rate_bps = o->rate_bps;
	r.rec.start_ns = nvt_real_ns();
	nvt_hostname(r.rec.hostname, sizeof(r.rec.hostname));
	snprintf(r.rec.writer, sizeof(r.rec.writer), "nvtape %s", NVT_VERSION);
	encode_header(&r, r.hdr);
	if (r.eng.ops->write_sync(&r.eng, r.hdr, NVT_HEADER_SIZE, 0, err))
		goto out;

	sp.rate_bps = o->rate_bps;
	sp.limit_bytes = size;
	sp.duration_ns = o->duration_ns;
	sp.fd = o->input_fd;
	prctl(PR_SET_NAME, "nvt-io");
	io_c0 = nvt_thread_cpu_ns();
	proc_c0 = nvt_process_cpu_ns();
	if (nvt_source_start(&r.src, r.sops, &sp, &r.ring, err))
		goto out;
	run_loop(&r);
	nvt_source_join(&r.src);
	res->io_cpu_ns = nvt_thread_cpu_ns() - io_c0;
	res->proc_cpu_ns = nvt_process_cpu_ns() - proc_c0;
	res->src_cpu_ns = r.src.cpu_ns;
	res->source_bytes = atomic_load(&r.src.produced_bytes);

	if (!r.failed) {
		if (r.src.end == NVT_SRC_END_ERROR) {
			r.failed = true;
			r.reason = NVT_STOP_SOURCE_ERROR;
			*err = r.src.err;
		} else if (r.reason != NVT_STOP_SIGNAL) {
			r.reason = r.src.end == NVT_SRC_END_EOF ? NVT_STOP_EOF : NVT_STOP_LIMIT;
		}
	}
	uint64_t t_end = nvt_mono_ns(), t0 = atomic_load(&r.src.t0_mono);
	if (t0) {
		r.rec.start_ns = r.src.t0_real;
		r.rec.duration_ns = t_end - t0;
	}
	r.rec.first_seq = 0;
	struct nvt_err ferr = {0};
	if (finalize(&r, &ferr)) {
		if (!r.failed)
			r.reason = NVT_STOP_IO_ERROR;
		r.failed = true;
		nvt_err_set(err, ferr.code, "finalizing the recording: %s", ferr.msg);
	}
	fill_stats(&r, &res->st, t_end, true);
	res->st.drop_events = r.rec.drop_events;
	r.rec.version = o->format == NVT_FMT_FDREC ? 1 : NVT_FORMAT_VERSION;
	r.rec.data_offset = NVT_HEADER_SIZE;
	r.rec.complete = (r.rec.flags & NVT_FLAG_COMPLETE) != 0;
	r.rec.valid_bytes = r.rec.complete ? r.rec.data_bytes : r.rec.durable_bytes;
	res->rec = r.rec;
	res->reason = r.reason;
	res->seconds = r.rec.duration_ns / 1e9;
	res->pace_steps = r.src.steps;
	res->pace_steps_long = r.src.steps_long;
	res->pace_max_step_bytes = r.src.max_step_bytes;
	res->hugetlb = r.ring.hugetlb;
	res->fixed_bufs = r.eng.fixed_bufs;
	if (r.failed || err->code)
		exitc = NVT_EXIT_RUNTIME;
	else
		exitc = r.rec.drop_count ? NVT_EXIT_DATA : NVT_EXIT_OK;
	goto out;
out_unlink:
	for (unsigned m = 0; use_file && m < r.layout.n; m++)
		unlink(r.layout.path[m]);
out:
	nvt_source_free(&r.src);
	nvt_engine_close(&r.eng);
	nvt_ring_destroy(&r.ring);
	free(r.slot_off);
	free(r.slot_len);
	free(r.slot_done);
	free(r.hdr);
	free(r.ckpt_hdr);
	return exitc;
}
