/* SPDX-License-Identifier: MIT */
/* The drop index made durable with every checkpoint, so that a crash keeps the position of every
 * drop the last checkpoint covered (docs/file-format.md, "The index at checkpoints").
 *
 * A checkpoint with drops to record writes the index before its data sync, and the header it
 * writes next points at it. The index cannot go after the data, which is still growing, so it
 * goes where no data write will reach it while a header on the disk may point at it:
 * - the end is known (a size was given, or the target is a device): two slots, each as large as
 *   the largest index, beyond the last data byte; checkpoints alternate between them;
 * - the file grows: ahead of the data by a margin the stream takes several checkpoint intervals
 *   to cover. A data write that would overlap the index of the header on the disk (or of the one
 *   being written) waits, and a checkpoint runs at once: its header points at a new index further
 *   ahead, and once that header is durable the old place is free.
 * Memory stays bounded: past NVT_REC_EVENTS_MAX events, further drops are added to the last one
 * (the count stays exact, those positions coarsen) and the recorder says so once.
 * The environment variable NVT_TEST_INDEX_MARGIN (bytes) replaces the margin, so that tests can
 * make data writes catch up with the index. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/record_index.h"
#include "control/recorder_int.h"
#include "format/index.h"
#include "storage/layout_io.h"
#include "util/sysutil.h"

#define MARGIN_MIN (64ull << 20)
#define MARGIN_MAX (64ull << 30)

uint64_t nvt_rec_index_reserve(uint64_t data_bytes, uint32_t chunk_bytes)
{
	uint64_t events = data_bytes / chunk_bytes + 2, spans = events;

	if (events > NVT_REC_EVENTS_MAX)
		events = NVT_REC_EVENTS_MAX;
	if (spans > NVT_SUMS_MAX)
		spans = NVT_SUMS_MAX;
	return 2 * nvt_index_size(events, spans, NVT_META_MAX);
}

/* The logical size of a target made of block devices only; 0 when any member is a file. */
static uint64_t fixed_capacity(const struct nvt_layout *L)
{
	int fd[NVT_MAX_MEMBERS];
	struct nvt_err err = {0};
	uint64_t size = 0;
	bool blockdev = false;

	if (nvt_layout_open(L, O_RDONLY, fd, &err))
		return 0;
	for (unsigned m = 0; m < L->n; m++)
		if (!nvt_is_blockdev(fd[m])) {
			nvt_layout_close(L, fd);
			return 0;
		}
	if (nvt_layout_size(L, fd, &size, &blockdev, &err))
		size = 0;
	nvt_layout_close(L, fd);
	return size;
}

int nvt_rec_index_setup(struct nvt_recorder *r)
{
	struct nvt_rec_index *x = &r->ix;
	uint64_t cap;

	const char *tm = getenv("NVT_TEST_INDEX_MARGIN");

	x->data_end = UINT64_MAX;
	x->margin_fixed = tm && *tm;
	x->margin_min = x->margin_fixed ? strtoull(tm, NULL, 10) : MARGIN_MIN;
	if ((nvt_engine_find(r->o.engine)->caps & NVT_ENGINE_DISKLESS) ||
	    r->o.format != NVT_FMT_NVTAPE)
		return 0;
	x->enabled = true;
	if (r->limit_bytes) {
		x->slot = nvt_rec_index_reserve(r->limit_bytes, r->o.chunk_bytes) / 2;
		x->base = align_up(NVT_HEADER_SIZE + r->limit_bytes, NVT_BLOCK);
		return 0;
	}
	cap = fixed_capacity(&r->layout);
	if (!cap)
		return 0; /* a file that grows: the index goes ahead of the data */
	x->slot = nvt_rec_index_reserve(cap, r->o.chunk_bytes) / 2;
	if (cap / NVT_BLOCK * NVT_BLOCK < NVT_HEADER_SIZE + 2 * x->slot + r->o.chunk_bytes) {
		x->enabled = false; /* too small to hold both: positions known at the end only */
		return 0;
	}
	x->base = cap / NVT_BLOCK * NVT_BLOCK - 2 * x->slot;
	x->data_end = x->base;
	return 0;
}

void nvt_rec_index_free(struct nvt_recorder *r)
{
	free(r->ix.buf);
	r->ix.buf = NULL;
}

static bool overlaps(uint64_t lo, uint64_t hi, const struct nvt_rec_index *x, int which)
{
	return x->hi[which] > x->lo[which] && lo < x->hi[which] && x->lo[which] < hi;
}

bool nvt_rec_index_blocks(struct nvt_recorder *r, uint64_t off, uint64_t len)
{
	struct nvt_rec_index *x = &r->ix;
	uint64_t hi = off + align_up(len, NVT_BLOCK);

	if (!overlaps(off, hi, x, 0) && !overlaps(off, hi, x, 1))
		return false;
	x->urgent = true;
	return true;
}

/* Bytes the stream may write before a checkpoint started now has moved the index on. */
static uint64_t margin(struct nvt_recorder *r)
{
	uint64_t t0 = atomic_load(&r->t0_mono), now = nvt_mono_ns();
	uint64_t produced = atomic_load(&r->produced), m = r->ix.margin_min;

	if (t0 && now > t0 && !r->ix.margin_fixed) {
		long double rate = (long double)produced * 1e9L / (long double)(now - t0);
		long double want = rate * (2.0L * r->o.checkpoint_ns + 1e9L) / 1e9L;
		if (want > (long double)MARGIN_MAX)
			m = MARGIN_MAX;
		else if (want > (long double)m)
			m = (uint64_t)want;
	}
	m += (uint64_t)r->ring.nchunks * r->ring.chunk_bytes;
	return m >> r->ix.shrink; /* a filesystem short of space: closer to the data */
}

/* Where an index of len bytes may go now: never over a region a header may point at, never
 * where data is or will be written before the next checkpoint. UINT64_MAX: nowhere. */
static uint64_t place(struct nvt_recorder *r, uint64_t len)
{
	struct nvt_rec_index *x = &r->ix;
	uint64_t at;

	if (x->slot) {
		if (len > x->slot)
			return UINT64_MAX;
		at = overlaps(x->base, x->base + x->slot, x, 0) ? x->base + x->slot : x->base;
		return at;
	}
	at = align_up(NVT_HEADER_SIZE + r->issue_off + margin(r), NVT_BLOCK);
	for (int i = 0; i < 2; i++)
		if (x->hi[i] > x->lo[i] && x->hi[i] > at)
			at = align_up(x->hi[i], NVT_BLOCK);
	return at;
}

/* The drop events so far, and the drops not yet an event as one where the next data goes: the
 * index sums to the header's drop_count, like the final one. The checksums of every chunk
 * queued so far (beyond the checkpoint they let recover keep what landed intact), and of the
 * prefix of the chunk being filled that this checkpoint wrote. */
static int build(struct nvt_recorder *r, uint64_t target)
{
	struct nvt_rec_index *x = &r->ix;
	uint64_t n = 0, kept = 0, sum = 0, drops;
	struct nvt_drop_event *ev = nvt_rec_drop_events(r, &n);
	long padded;

	drops = atomic_load(&r->drops); /* after the copy: at least the sum of its events */
	for (uint64_t i = 0; i < n; i++) {
		ev[kept++] = ev[i];
		sum += ev[i].beats;
	}
	if (drops > sum) { /* lost since the last data: where the next data goes */
		struct nvt_drop_event *g = realloc(ev, (kept + 1) * sizeof(*ev));
		if (!g) {
			free(ev);
			return -ENOMEM;
		}
		ev = g;
		uint64_t at = atomic_load(&r->produced);
		ev[kept++] = (struct nvt_drop_event){.data_offset = at > target ? at : target,
						     .beats = drops - sum,
						     .time_ns = nvt_mono_ns() -
								atomic_load(&r->t0_mono)};
	}
	x->len = 0;
	x->drops = drops;
	x->nev = kept;
	uint64_t ncrc = r->sums.n + r->part_staged; /* and the filled prefix of the next chunk */
	if (!kept && !ncrc && !r->meta_len) {
		free(ev);
		return 0;
	}
	struct nvt_index ix = {.ev = ev,
			       .nev = kept,
			       .crc = r->sums.e,
			       .ncrc = ncrc,
			       .tm = r->sums.t,
			       .ntm = ncrc,
			       .meta = r->meta,
			       .meta_len = r->meta_len};
	uint64_t need = nvt_index_bytes(&ix);
	if (need > x->cap) {
		void *b = NULL;
		if (posix_memalign(&b, NVT_BLOCK, need)) {
			free(ev);
			return -ENOMEM;
		}
		free(x->buf);
		x->buf = b;
		x->cap = need;
	}
	padded = nvt_index_build(&ix, x->buf, x->cap, &x->used, &x->crc);
	free(ev);
	if (padded < 0)
		return (int)padded;
	x->len = (uint64_t)padded;
	return 0;
}

static void note_once(struct nvt_recorder *r, const char *why)
{
	if (r->ix.noted)
		return;
	r->ix.noted = true;
	nvt_rec_notice(r,
		       "the drop index could not be written with a checkpoint (%s): until one "
		       "can, a crash keeps the drop count but not the positions",
		       why);
}

int nvt_rec_index_begin(struct nvt_recorder *r, uint64_t target)
{
	struct nvt_rec_index *x = &r->ix;
	int rc;

	x->len = x->sent = 0;
	x->pending = 0;
	x->write_failed = false;
	x->lo[1] = x->hi[1] = 0;
	x->drops = atomic_load(&r->drops);
	x->nev = 0;
	if (!x->enabled)
		return 0;
	rc = build(r, target);
	if (rc) {
		note_once(r, "out of memory");
		x->len = 0;
		return 0;
	}
	if (!x->len)
		return 0;
	x->off = place(r, x->len);
	if (x->off == UINT64_MAX) {
		note_once(r, "no room left for it");
		x->len = 0;
		return 0;
	}
	x->lo[1] = x->off;
	x->hi[1] = x->off + x->len;
	return 0;
}

int nvt_rec_index_send(struct nvt_recorder *r, uint64_t tag)
{
	struct nvt_rec_index *x = &r->ix;

	while (x->sent < x->len) {
		uint64_t k = x->len - x->sent;
		if (k > r->ring.chunk_bytes)
			k = r->ring.chunk_bytes;
		struct nvt_io io = {.dir = NVT_IO_WRITE,
				    .buf = (uint8_t *)x->buf + x->sent,
				    .len = k,
				    .offset = x->off + x->sent,
				    .buf_index = -1,
				    .tag = tag};
		if (r->eng.ops->queue(&r->eng, &io))
			return -EAGAIN; /* the engine is full: again after a completion */
		x->sent += k;
		x->pending++;
	}
	return x->pending ? -EAGAIN : 0;
}

void nvt_rec_index_done(struct nvt_recorder *r, int64_t res)
{
	struct nvt_rec_index *x = &r->ix;

	if (x->pending)
		x->pending--;
	if (res == -ENOSPC && !x->slot && x->shrink < 12 && !x->write_failed) {
		x->write_failed =
			true; /* this checkpoint goes without; the next one tries closer */
		x->shrink++;
		return;
	}
	if (res < 0 && !x->write_failed) {
		x->write_failed = true;
		char why[128];
		snprintf(why, sizeof(why), "write at %llu: %s", (unsigned long long)x->off,
			 strerror((int)-res));
		note_once(r, why);
	}
}

bool nvt_rec_index_ready(const struct nvt_recorder *r)
{
	return r->ix.sent == r->ix.len && r->ix.pending == 0;
}

void nvt_rec_index_apply(struct nvt_recorder *r)
{
	struct nvt_rec_index *x = &r->ix;
	struct nvt_recording *rec = &r->rec;

	x->saved_off = rec->index_offset;
	x->saved_bytes = rec->index_bytes;
	x->saved_crc = rec->index_crc;
	x->saved_events = rec->drop_events;
	if (x->len && !x->write_failed) {
		rec->index_offset = x->off;
		rec->index_bytes = x->used;
		rec->index_crc = x->crc;
		rec->drop_events = x->nev;
	} else {
		rec->index_offset = rec->index_bytes = 0;
		rec->index_crc = 0;
		rec->drop_events = 0;
		x->lo[1] = x->hi[1] = 0;
	}
}

void nvt_rec_index_undo(struct nvt_recorder *r)
{
	struct nvt_rec_index *x = &r->ix;

	r->rec.index_offset = x->saved_off;
	r->rec.index_bytes = x->saved_bytes;
	r->rec.index_crc = x->saved_crc;
	r->rec.drop_events = x->saved_events;
	x->lo[1] = x->hi[1] = 0;
}

void nvt_rec_index_durable(struct nvt_recorder *r)
{
	struct nvt_rec_index *x = &r->ix;

	x->lo[0] = x->lo[1];
	x->hi[0] = x->hi[1];
	x->lo[1] = x->hi[1] = 0;
}

uint64_t nvt_rec_index_final_place(const struct nvt_recorder *r, uint64_t at, uint64_t len)
{
	const struct nvt_rec_index *x = &r->ix;

	at = align_up(at, NVT_BLOCK);
	if (!overlaps(at, at + len, x, 0) && !overlaps(at, at + len, x, 1))
		return at;
	/* beside the index a header on the disk points at: in the other slot, or after it */
	if (x->slot && len <= x->slot) {
		uint64_t other =
			overlaps(x->base, x->base + x->slot, x, 0) ? x->base + x->slot : x->base;
		if (!overlaps(other, other + len, x, 1))
			return other;
	}
	uint64_t end = x->hi[0] > x->hi[1] ? x->hi[0] : x->hi[1];
	return align_up(end > at ? end : at, NVT_BLOCK);
}

uint64_t nvt_rec_index_live_end(const struct nvt_recorder *r)
{
	const struct nvt_rec_index *x = &r->ix;
	return x->hi[0] > x->hi[1] ? x->hi[0] : x->hi[1];
}
