/* SPDX-License-Identifier: MIT */
/* The push API's producer side: opening a recording (checks, ring, engine, space, first header,
 * I/O thread), handing the producer free ring memory, publishing full chunks, recording where
 * and how much the producer lost, and closing (drain, finalize, result). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "control/recorder_int.h"
#include "nvtape/meta.h"
#include "format/lifecycle.h"
#include "storage/engine.h"
#include "sys/devcheck.h"
#include "util/opts.h"
#include "util/sysutil.h"

#define EXTEND_STEP (1ull << 30) /* open-ended recordings reserve the first GiB up front */

static int check_opts(const struct nvt_record_opts *o, struct nvt_err *err)
{
	const struct nvt_engine_ops *e = nvt_engine_find(o->engine ? o->engine : "");

	if (!e) {
		nvt_err_param(err, "unknown engine \"%s\" (engines: %s)",
			      o->engine ? o->engine : "", nvt_engine_names());
		return -EINVAL;
	}
	if (o->chunk_bytes < NVT_BLOCK || o->chunk_bytes % NVT_BLOCK ||
	    o->chunk_bytes > (1u << 30)) {
		nvt_err_param(err, "chunk size must be a multiple of 4 KiB between 4K and 1G");
		return -EINVAL;
	}
	if (o->chunks < 2 || o->chunks > 65536) {
		nvt_err_param(err, "ring chunks must be between 2 and 65536");
		return -EINVAL;
	}
	if (o->qd < 1 || o->qd > 1024) {
		nvt_err_param(err, "queue depth must be between 1 and 1024");
		return -EINVAL;
	}
	if (e->max_qd && o->qd > e->max_qd) {
		nvt_err_param(err, "the %s engine keeps 1 to %u %s in flight", e->name, e->max_qd,
			      e->caps & NVT_ENGINE_QD_PER_DRIVE ? "commands per drive" : "I/Os");
		return -EINVAL;
	}
	if (o->unit_bytes < 1 || o->unit_bytes > NVT_BLOCK || NVT_BLOCK % o->unit_bytes) {
		nvt_err_param(err, "a stream unit must divide 4096 bytes (got %u)", o->unit_bytes);
		return -EINVAL;
	}
	if (o->format == NVT_FMT_FDREC && !nvt_source_kind_is_pattern(o->source_kind)) {
		nvt_err_param(err,
			      "the FPGA Drive Recorder format holds 16-byte test-pattern beats "
			      "only: record the test pattern with it");
		return -EINVAL;
	}
	if (o->timeout_ns == 0) {
		nvt_err_param(err, "the stall timeout must be > 0");
		return -EINVAL;
	}
	if (o->check && o->check[0] && nvt_source_kind_is_pattern(o->source_kind)) {
		nvt_err_param(err, "the test pattern is checked beat by beat: a counter check is "
				   "for other data");
		return -EINVAL;
	}
	if (o->meta && nvt_meta_check(o->meta, err))
		return -EINVAL;
	if (o->check && o->check[0]) {
		struct nvt_counter_spec spec;
		return nvt_counter_parse(o->check, &spec, err) ? -EINVAL : 0;
	}
	return 0;
}

/* Bytes the recording takes at most (header included), 0 = unknown. */
static uint64_t planned_bytes(const struct nvt_recorder *r)
{
	const struct nvt_record_opts *o = &r->o;

	if (r->limit_bytes)
		return NVT_HEADER_SIZE + r->limit_bytes;
	if (o->rate_bps && o->duration_ns) {
		unsigned __int128 b = (unsigned __int128)o->rate_bps * o->duration_ns / 1000000000u;
		if (b < UINT64_MAX / 2)
			return NVT_HEADER_SIZE + align_up((uint64_t)b, NVT_BLOCK);
	}
	return 0;
}

static int check_targets(struct nvt_recorder *r, uint64_t reserve, struct nvt_err *err)
{
	const struct nvt_engine_ops *e = nvt_engine_find(r->o.engine);

	if (e->caps & NVT_ENGINE_DISKLESS)
		return 0;
	if ((e->caps & NVT_ENGINE_FILE_NEEDS_SIZE) && !reserve && r->layout.n == 1 &&
	    strncmp(r->layout.path[0], "/dev/", 5)) {
		nvt_err_param(err,
			      "the %s engine into a file needs its length up front: the file is "
			      "allocated and mapped before the first write",
			      e->name);
		nvt_err_set_hint(err, NVT_HINT_GIVE_SIZE, 0, 0, 0);
		return -EINVAL;
	}
	for (unsigned m = 0; m < r->layout.n; m++) {
		struct statfs sfs;
		struct stat st;
		/* a device node sits on devtmpfs: what it names is a drive, not memory */
		if (stat(r->layout.path[m], &st) == 0 &&
		    (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)))
			sfs.f_type = 0;
		else if (statfs(r->layout.path[m], &sfs) != 0) {
			char dir[4096];
			snprintf(dir, sizeof(dir), "%s", r->layout.path[m]);
			if (statfs(dirname(dir), &sfs) != 0)
				sfs.f_type = 0;
		}
		if (sfs.f_type == 0x01021994) /* TMPFS_MAGIC */
			nvt_rec_notice(r,
				       "%s is on tmpfs: the recording lives in memory and is lost "
				       "at a reboot or a power cut",
				       r->layout.path[m]);
		uint64_t need = r->limit_bytes ? r->layout.member_offset +
							 nvt_layout_share(&r->layout, m, reserve)
					       : 0;
		if (nvt_target_check_output(r->layout.path[m], need, r->o.force, e->name, err))
			return -(err->code ? err->code : EIO);
	}
	return 0;
}

static uint64_t free_space(const char *path)
{
	struct statvfs vfs;

	return statvfs(path, &vfs) == 0 ? (uint64_t)vfs.f_bavail * vfs.f_frsize : 0;
}

/* A file deleted a moment ago is freed in the background on some filesystems (XFS): while the
 * free space keeps growing, ask again; give up once it has stood still for half a second. */
static int reserve_while_freeing(struct nvt_recorder *r, uint64_t reserve, struct nvt_err *rerr)
{
	uint64_t last = free_space(r->layout.path[0]);
	int rc = -ENOSPC, still = 0;

	for (int i = 0; i < 100 && rc == -ENOSPC && still < 5; i++) {
		uint64_t now;
		sync();
		nvt_sleep_until(nvt_mono_ns() + 100000000ull);
		now = free_space(r->layout.path[0]);
		still = now > last ? 0 : still + 1;
		last = now;
		nvt_err_clear(rerr);
		rc = r->eng.ops->reserve(&r->eng, reserve, rerr);
	}
	return rc;
}

static int reserve_space(struct nvt_recorder *r, uint64_t reserve, struct nvt_err *err)
{
	struct nvt_err rerr = {0};
	uint64_t t0 = nvt_mono_ns();
	int rc;

	if (!r->eng.can_reserve)
		return 0;
	r->extend = !reserve; /* open-ended: the first step now, the next ones ahead of writes */
	if (!reserve)
		reserve = EXTEND_STEP;
	rc = r->eng.ops->reserve(&r->eng, reserve, &rerr);
	if (rc == -ENOSPC && r->limit_bytes)
		rc = reserve_while_freeing(r, reserve, &rerr);
	if (rc == -ENOSPC && r->limit_bytes) {
		struct statvfs vfs;
		r->eng.ops->truncate(&r->eng, 0, &rerr);
		if (statvfs(r->layout.path[0], &vfs) == 0)
			nvt_err_set(err, ENOSPC,
				    "not enough free space for %s: need %llu bytes, %llu available",
				    r->layout.path[0], (unsigned long long)reserve,
				    (unsigned long long)vfs.f_bavail * vfs.f_frsize);
		else
			nvt_err_set(err, ENOSPC, "%s: %s", r->layout.path[0], rerr.msg);
		nvt_err_set_hint(err, NVT_HINT_LESS_DATA, 0, 0, 0);
		return -ENOSPC;
	}
	if (rc)
		nvt_rec_notice(r, "space not reserved up front (%s)", rerr.msg);
	/* worth a note when it took time (a reused file may only grow by the index's room) */
	if (r->eng.zero_filled >= (1u << 20) && r->eng.zero_filled_unwritten)
		nvt_rec_notice(
			r,
			"the file's blocks were allocated, then %llu MB of unwritten extents "
			"zero-filled through the filesystem in %.1f s: an unwritten extent "
			"reads back as zeros whatever the drive holds, so NVMe commands "
			"written beneath the filesystem must land in written blocks",
			(unsigned long long)(r->eng.zero_filled / 1000000),
			(nvt_mono_ns() - t0) / 1e9);
	else if (r->eng.zero_filled >= (1u << 20))
		nvt_rec_notice(r,
			       "this filesystem does not preallocate for this engine: %llu MB "
			       "zero-filled up front in %.1f s, so that recording overwrites "
			       "instead of extending%s",
			       (unsigned long long)(r->eng.zero_filled / 1000000),
			       (nvt_mono_ns() - t0) / 1e9,
			       r->extend ? "; beyond that the file grows slowly: give a size" : "");
	r->prealloc_end = reserve;
	return 0;
}

static int open_engine(struct nvt_recorder *r, uint64_t reserve, struct nvt_err *err)
{
	struct nvt_engine_params ep = {0};

	ep.path = r->layout.path[0];
	ep.layout = &r->layout;
	ep.write = true;
	ep.qd = r->o.qd;
	ep.prealloc = reserve;
	ep.cmd_timeout_ns = r->o.timeout_ns;
	ep.bufs = r->ring.mem;
	ep.buf_bytes = r->o.chunk_bytes;
	ep.nbufs = r->o.chunks;
	ep.buf_phase = NVT_HEADER_SIZE;
	ep.wake_fd = nvt_ring_consumer_fd(&r->ring);
	ep.force = r->o.force;
	if (nvt_engine_open(&r->eng, nvt_engine_for(r->o.engine, &r->layout), &ep, err))
		return -(err->code ? err->code : EIO);
	char note[512];
	if (nvt_engine_fixed_bufs_note(&r->eng, r->ring.map_bytes, note, sizeof(note)))
		nvt_rec_notice(r, "%s", note);
	snprintf(r->res.engine_desc, sizeof(r->res.engine_desc), "%s", r->eng.desc);
	return reserve_space(r, reserve, err);
}

static void describe(struct nvt_recorder *r)
{
	const struct nvt_record_opts *o = &r->o;
	struct nvt_recording *rec = &r->rec;

	rec->format = o->format;
	rec->beat_bytes = r->unit;
	rec->source_kind = o->source_kind;
	snprintf(rec->source_name, sizeof(rec->source_name), "%s",
		 o->source_name ? o->source_name : "");
	rec->chunk_bytes = (uint32_t)o->chunk_bytes;
	rec->chunk_count = o->chunks;
	if (r->layout.n > 1) {
		rec->members = r->layout.n;
		rec->stripe_bytes = r->layout.stripe;
		rec->member_offset = r->layout.member_offset;
	}
	rec->io_path = r->eng.io_path;
	rec->drive_count = r->eng.ndrives;
	memcpy(rec->drive, r->eng.drive, sizeof(rec->drive));
	rec->rate_bps = o->rate_bps;
	rec->first_seq = o->first_seq;
	if (r->counting)
		nvt_counter_format(&r->cc.spec, rec->check, sizeof(rec->check));
	nvt_recording_begin(rec, nvt_real_ns());
}

static int setup(struct nvt_recorder *r, struct nvt_err *err)
{
	uint64_t reserve;
	int rc;

	nvt_layout_resolve(&r->o.layout, r->o.path, &r->layout);
	if (nvt_layout_check(&r->layout, err)) {
		err->flags |= NVT_ERR_PARAM;
		return -EINVAL;
	}
	if (r->o.check && r->o.check[0]) { /* checked by check_opts */
		struct nvt_counter_spec spec;
		r->counting = nvt_counter_parse(r->o.check, &spec, err) == 0;
		nvt_counter_check_init(&r->cc, &spec);
	}
	reserve = planned_bytes(r);
	rc = check_targets(r, reserve, err);
	if (rc)
		return rc;
	/* the two slots of the checkpoints' index (an event and a checksum per chunk at most) are
	 * reserved with the data: an engine that maps a file before the first write cannot grow
	 * it afterwards, and a filesystem without holes (exFAT) would fill the gap to them */
	if (reserve)
		reserve += nvt_rec_index_reserve(reserve, r->o.chunk_bytes);
	rc = nvt_ring_create(&r->ring, r->o.chunks, r->o.chunk_bytes,
			     r->o.shared_ring ? NVT_RING_SHARED : 0, err);
	if (rc)
		return rc;
	r->chunk_t = calloc(r->ring.nchunks, sizeof(*r->chunk_t));
	if (!r->chunk_t) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (r->ring.notice[0])
		nvt_rec_notice(r, "%s", r->ring.notice);
	rc = open_engine(r, reserve, err);
	if (rc == -ENOSPC) {
		for (unsigned m = 0; m < r->layout.n; m++)
			unlink(r->layout.path[m]);
		return rc;
	}
	if (rc)
		return rc;
	rc = nvt_pump_init(&r->pump, &r->ring, &r->eng, NVT_IO_WRITE, err);
	if (rc)
		return rc;
	if (posix_memalign(&r->hdr, NVT_BLOCK, NVT_HEADER_SIZE) ||
	    posix_memalign(&r->ckpt_hdr, NVT_BLOCK, NVT_HEADER_SIZE)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	describe(r);
	nvt_rec_index_setup(r);
	nvt_recording_encode(&r->rec, r->hdr);
	return r->eng.ops->write_sync(&r->eng, r->hdr, NVT_HEADER_SIZE, 0, err);
}

static void destroy(struct nvt_recorder *r)
{
	nvt_engine_close(&r->eng);
	nvt_ring_destroy(&r->ring);
	pthread_mutex_destroy(&r->ev_lock);
	pthread_mutex_destroy(&r->open_lock);
	pthread_cond_destroy(&r->open_cv);
	free(r->ev);
	nvt_rec_index_free(r);
	nvt_sums_free(&r->sums);
	free(r->chunk_t);
	free(r->meta);
	nvt_pump_free(&r->pump);
	free(r->hdr);
	free(r->ckpt_hdr);
	free(r);
}

int nvt_recorder_open(const struct nvt_record_opts *o, struct nvt_recorder **out,
		      struct nvt_err *err)
{
	struct nvt_recorder *r;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	nvt_record_opts_init(&r->o);
	rc = nvt_opts_merge(&r->o, sizeof(r->o), o, "nvt_record_opts_init", err);
	if (!rc)
		rc = check_opts(&r->o, err);
	if (rc) {
		free(r);
		return rc;
	}
	nvt_ring_init(&r->ring);
	nvt_sums_init(&r->sums, NVT_SUMS_MAX);
	r->part_seq = UINT64_MAX;
	r->meta = strdup(r->o.meta ? r->o.meta : "");
	if (!r->meta) {
		free(r);
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	r->meta_len = strlen(r->meta);
	pthread_mutex_init(&r->ev_lock, NULL);
	pthread_mutex_init(&r->open_lock, NULL);
	pthread_cond_init(&r->open_cv, NULL);
	r->unit = r->o.unit_bytes;
	r->limit_bytes = r->o.size_bytes;
	if (r->unit > 1 && r->limit_bytes % NVT_BLOCK) {
		r->limit_bytes = align_up(r->limit_bytes, NVT_BLOCK);
		nvt_rec_notice(r, "size rounded up to %llu bytes (whole 4 KiB blocks for O_DIRECT)",
			       (unsigned long long)r->limit_bytes);
	}
	/* the I/O thread opens the engine itself: its io_uring has a single issuer */
	rc = -pthread_create(&r->io_thread, NULL, nvt_rec_io_thread, r);
	if (rc) {
		nvt_err_set(err, -rc, "cannot start the I/O thread: %s", strerror(-rc));
		destroy(r);
		return rc;
	}
	pthread_mutex_lock(&r->open_lock);
	while (!r->opened)
		pthread_cond_wait(&r->open_cv, &r->open_lock);
	pthread_mutex_unlock(&r->open_lock);
	if (r->open_rc) {
		pthread_join(r->io_thread, NULL);
		*err = r->err;
		rc = r->open_rc;
		destroy(r);
		return rc;
	}
	*out = r;
	return 0;
}

int nvt_rec_setup(struct nvt_recorder *r)
{
	int rc = setup(r, &r->err);

	pthread_mutex_lock(&r->open_lock);
	r->open_rc = rc ? rc : 0;
	r->opened = true;
	pthread_cond_signal(&r->open_cv);
	pthread_mutex_unlock(&r->open_lock);
	return rc;
}

static void mark_start(struct nvt_recorder *r)
{
	if (!atomic_load_explicit(&r->t0_mono, memory_order_relaxed)) {
		r->t0_real = nvt_real_ns();
		atomic_store(&r->t0_mono, nvt_mono_ns());
	}
}

static uint64_t since_start(struct nvt_recorder *r)
{
	uint64_t t0 = atomic_load(&r->t0_mono);
	return t0 ? nvt_mono_ns() - t0 : 0;
}

/* The pending losses become event number nev; stats() reads nev and pending_event under the
 * same lock, so it never counts that event twice or not at all. */
static void add_event(struct nvt_recorder *r, uint64_t offset, uint64_t units, uint64_t t)
{
	pthread_mutex_lock(&r->ev_lock);
	atomic_store(&r->pending_event, 0);
	if (r->nev == NVT_REC_EVENTS_MAX) {
		/* bounded memory: the count stays exact, these positions join the last event */
		uint64_t b = r->ev[r->nev - 1].beats;
		r->ev[r->nev - 1].beats = b > UINT64_MAX - units ? UINT64_MAX : b + units;
		bool first = !r->ev_full;
		r->ev_full = true;
		pthread_mutex_unlock(&r->ev_lock);
		if (first)
			nvt_rec_notice(r,
				       "%u drop events: later drops are added to the last one (the "
				       "count stays exact, their positions are not kept)",
				       NVT_REC_EVENTS_MAX);
		return;
	}
	if (r->nev == r->ev_cap) {
		uint64_t cap = r->ev_cap ? r->ev_cap * 2 : 256;
		struct nvt_drop_event *n = realloc(r->ev, cap * sizeof(*n));
		if (!n) {
			/* the count stays exact in drops; only the position list is cut short */
			pthread_mutex_unlock(&r->ev_lock);
			return;
		}
		r->ev = n;
		r->ev_cap = cap;
	}
	r->ev[r->nev++] =
		(struct nvt_drop_event){.data_offset = offset, .beats = units, .time_ns = t};
	pthread_mutex_unlock(&r->ev_lock);
}

/* Losses reported since the last data become one index event at the current position. */
static void settle_drops(struct nvt_recorder *r)
{
	if (!r->pending_drop)
		return;
	add_event(r, atomic_load_explicit(&r->produced, memory_order_relaxed), r->pending_drop,
		  r->pending_time);
	r->pending_drop = 0;
}

struct nvt_drop_event *nvt_rec_drop_events(struct nvt_recorder *r, uint64_t *n)
{
	struct nvt_drop_event *copy;

	pthread_mutex_lock(&r->ev_lock);
	*n = r->nev;
	copy = malloc((r->nev ? r->nev : 1) * sizeof(*copy));
	if (copy && r->nev)
		memcpy(copy, r->ev, r->nev * sizeof(*copy));
	if (!copy)
		*n = 0;
	pthread_mutex_unlock(&r->ev_lock);
	return copy;
}

static bool limit_reached(struct nvt_recorder *r)
{
	if (r->limit_bytes &&
	    atomic_load_explicit(&r->produced, memory_order_relaxed) >= r->limit_bytes)
		return true;
	return r->o.duration_ns && !r->o.producer_times_duration &&
	       since_start(r) >= r->o.duration_ns;
}

static void publish(struct nvt_recorder *r)
{
	if (r->cur && r->cur_fill)
		nvt_ring_publish(&r->ring, (uint32_t)r->cur_fill);
	r->cur = NULL;
	r->cur_fill = 0;
}

/* the recording takes no more data: stopping, unless only a stop() was asked and the
 * producer drains what its device already captured */
static bool refuses(struct nvt_recorder *r, unsigned flags)
{
	if (!atomic_load(&r->stopping))
		return false;
	return !(flags & NVT_ACQUIRE_DRAIN) || !atomic_load(&r->stop_req) ||
	       atomic_load(&r->failed) || r->limit_hit || limit_reached(r);
}

void *nvt_recorder_acquire(struct nvt_recorder *r, size_t *room, unsigned flags)
{
	uint64_t left;

	*room = 0;
	if (!atomic_load(&r->stopping) && limit_reached(r)) {
		r->limit_hit = true;
		atomic_store(&r->stopping, 1);
	}
	while (!r->cur) {
		if (refuses(r, flags) || nvt_ring_aborted(&r->ring)) {
			errno = ECANCELED;
			return NULL;
		}
		if (nvt_ring_can_produce(&r->ring)) {
			r->cur = nvt_ring_next_free(&r->ring);
			r->cur_fill = 0;
			break;
		}
		if (flags & NVT_ACQUIRE_NOWAIT) {
			errno = EAGAIN;
			return NULL;
		}
		nvt_ring_wait_free(&r->ring, 100);
	}
	if (refuses(r, flags)) {
		errno = ECANCELED;
		return NULL;
	}
	left = r->ring.chunk_bytes - r->cur_fill;
	if (r->limit_bytes) {
		uint64_t to_limit =
			r->limit_bytes - atomic_load_explicit(&r->produced, memory_order_relaxed);
		if (to_limit < left)
			left = to_limit;
	}
	*room = r->room = (size_t)(left - left % r->unit);
	return r->cur + r->cur_fill;
}

int nvt_recorder_commit(struct nvt_recorder *r, size_t bytes)
{
	if (!r->cur || bytes % r->unit || bytes > r->room)
		return -EINVAL;
	if (!bytes)
		return 0;
	r->room -= bytes;
	mark_start(r);
	settle_drops(r);
	if (!r->cur_fill) /* the chunk's first byte: when it was captured */
		r->chunk_t[(uint64_t)(r->cur - r->ring.mem) / r->ring.chunk_bytes] = nvt_real_ns();
	r->cur_fill += bytes;
	atomic_fetch_add(&r->produced, bytes);
	if (r->cur_fill == r->ring.chunk_bytes ||
	    (r->limit_bytes && atomic_load(&r->produced) >= r->limit_bytes)) {
		publish(r);
		return 0;
	}
	/* a checkpoint can make this much of the chunk durable before it is full */
	uint64_t seq = atomic_load_explicit(&r->ring.head, memory_order_relaxed);
	atomic_store_explicit(&r->part, (seq & 0xffffffffu) << 32 | r->cur_fill,
			      memory_order_release);
	return 0;
}

int nvt_recorder_drop(struct nvt_recorder *r, uint64_t units)
{
	if (!units)
		return 0;
	mark_start(r);
	if (!r->pending_drop)
		r->pending_time = since_start(r);
	if (r->pending_drop > UINT64_MAX - units ||
	    atomic_load_explicit(&r->drops, memory_order_relaxed) > UINT64_MAX - units)
		return -EOVERFLOW; /* a count no stream can reach: the producer is broken */
	r->pending_drop += units;
	atomic_store(&r->pending_event, 1);
	atomic_fetch_add(&r->drops, units);
	return 0;
}

void nvt_rec_limit_reached(struct nvt_recorder *r)
{
	r->limit_hit = true;
}

void nvt_recorder_fail(struct nvt_recorder *r, const struct nvt_err *why)
{
	nvt_rec_fail(r, NVT_STOP_SOURCE_ERROR, why && why->code ? why->code : EIO, "%s",
		     why && why->msg[0] ? why->msg : "the producer failed");
}

void nvt_recorder_check_counts(struct nvt_recorder *r, const struct nvt_checker *k)
{
	atomic_store_explicit(&r->st_ck[0], k->beats, memory_order_relaxed);
	atomic_store_explicit(&r->st_ck[1], k->gaps, memory_order_relaxed);
	atomic_store_explicit(&r->st_ck[2], k->gap_beats, memory_order_relaxed);
	atomic_store_explicit(&r->st_ck[3], k->backward, memory_order_relaxed);
	atomic_store_explicit(&r->st_ck[4], k->corrupt, memory_order_relaxed);
}

void nvt_recorder_source_records(struct nvt_recorder *r, uint64_t records)
{
	atomic_store_explicit(&r->st_records, records, memory_order_relaxed);
}

void nvt_recorder_source_fifo(struct nvt_recorder *r, uint64_t level, uint64_t hwm, uint64_t depth)
{
	atomic_store_explicit(&r->st_fifo[0], level, memory_order_relaxed);
	atomic_store_explicit(&r->st_fifo[1], hwm, memory_order_relaxed);
	atomic_store_explicit(&r->st_fifo[2], depth, memory_order_relaxed);
}

void nvt_recorder_stop(struct nvt_recorder *r)
{
	atomic_store(&r->stop_req, 1);
	atomic_store(&r->stopping, 1);
	nvt_ring_wake_producer(&r->ring);
}

int nvt_recorder_stopping(struct nvt_recorder *r)
{
	return atomic_load(&r->stopping) || limit_reached(r);
}

void nvt_recorder_stats(struct nvt_recorder *r, struct nvt_record_stats *st)
{
	nvt_rec_fill_stats(r, st, nvt_mono_ns(), false);
}

enum nvt_stop_reason nvt_rec_end_reason(struct nvt_recorder *r)
{
	if (atomic_load(&r->failed))
		return r->reason;
	if (r->signalled)
		return NVT_STOP_SIGNAL;
	if (atomic_load(&r->stop_req))
		return NVT_STOP_REQUEST;
	if (r->limit_hit || limit_reached(r) ||
	    (r->o.duration_ns && since_start(r) >= r->o.duration_ns))
		return NVT_STOP_LIMIT;
	return NVT_STOP_EOF;
}

static void fill_result(struct nvt_recorder *r, uint64_t t_end)
{
	struct nvt_record_result *res = &r->res;

	nvt_rec_fill_stats(r, &res->st, t_end, true);
	res->st.drop_events = r->rec.drop_events;
	res->rec = r->rec;
	res->seconds = r->rec.duration_ns / 1e9;
	res->source_bytes = atomic_load(&r->produced);
	res->io_cpu_ns = r->io_cpu_ns;
	res->hugetlb = r->ring.hugetlb;
	res->part_writes = r->part_writes;
	res->data_io_bytes = r->data_io_bytes;
}

int nvt_recorder_close(struct nvt_recorder *r, struct nvt_record_result *out)
{
	int rc;

	settle_drops(r);
	publish(r);
	r->latched = nvt_rec_end_reason(r); /* before the drain: its time is not the producer's */
	nvt_ring_close(&r->ring);
	pthread_join(r->io_thread, NULL); /* it drains, then finalizes */
	fill_result(r, r->t_end);
	r->res.reason = r->reason;
	r->res.err = r->err;
	rc = atomic_load(&r->failed) || r->err.code ? -(r->err.code ? r->err.code : EIO) : 0;
	if (r->at_close)
		r->at_close(r->at_close_arg, rc, &r->res);
	if (out)
		*out = r->res;
	destroy(r);
	return rc;
}
