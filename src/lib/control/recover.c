/* SPDX-License-Identifier: MIT */
/* Recovery of a recording whose writer died. The valid length is the last checkpoint's durable
 * length; for the test pattern, blocks that continue the pattern beyond it are kept too (across
 * the forward jumps a drop leaves at a chunk boundary), and the drop index is rebuilt from the
 * gaps. That needs a pattern whose first seq is this run's own (tpg: random); the fdrec
 * device's generator starts at 0 every run, so an earlier run's blocks on the same device
 * continue its sequence exactly: beyond the checkpoint only the chunks whose checksums the
 * checkpoint's index holds are kept for it. FPGA Drive Recorder files (no checkpoints) keep
 * everything up to the last non-zero 4 KiB block. */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "storage/layout_io.h"
#include "nvtape/pattern.h"
#include "nvtape/recover.h"
#include "control/export_int.h"
#include "control/members.h"
#include "control/scan.h"
#include "format/index.h"
#include "format/sums.h"
#include "util/crc32c.h"
#include "util/sysutil.h"

struct rstate {
	struct nvt_recording *rec;
	struct nvt_checker chk;
	uint64_t limit;        /* data bytes vouched for (checkpoint) */
	uint64_t vouched;      /* ... by the checkpoint or, for the fdrec source, its checksums */
	uint64_t valid;        /* data bytes accepted so far */
	uint64_t last_nonzero; /* end of the last non-zero block (fdrec) */
	uint64_t reach;        /* beats the source can have reached since its start (a bound) */
	bool strict_done;
	struct nvt_drop_event *ev;
	uint64_t nev, cap;
	int oom;
	uint64_t old_lo, old_index_end;  /* the index the checkpoint's header points at */
	const struct nvt_chunk_crc *crc; /* the checksums of the data kept, their times */
	const struct nvt_chunk_time *tm;
	uint64_t ncrc, ntm;
	const char *meta; /* the metadata, as it was */
	uint64_t meta_len;
};

void nvt_recover_opts_default(struct nvt_recover_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->chunk_bytes = 8u << 20;
	o->chunks = 16;
	o->qd = 8;
}

/* The pattern's seq numbers are this run's own: an earlier run's blocks cannot continue them.
 * Not for the fdrec device, whose generator starts at 0 at every START. */
static bool seq_own(const struct nvt_recording *rec)
{
	return rec->source_kind != NVT_SRC_FDREC;
}

static void on_gap(void *arg, const struct nvt_check_event *e)
{
	struct rstate *s = arg;

	if (e->kind != NVT_CHK_GAP)
		return;
	/* a source whose jumps are not all drops: up to the checkpoint its index says which are */
	if (!seq_own(s->rec) && e->offset - s->rec->data_offset < s->limit)
		return;
	if (s->nev == s->cap) {
		uint64_t cap = s->cap ? s->cap * 2 : 64;
		struct nvt_drop_event *n = realloc(s->ev, cap * sizeof(*n));
		if (!n) {
			s->oom = 1;
			return;
		}
		s->ev = n;
		s->cap = cap;
	}
	s->ev[s->nev++] = (struct nvt_drop_event){.data_offset = e->offset - s->rec->data_offset,
						  .beats = e->missing};
}

/* n beats at p (any alignment) are exactly seq e, e + 1, ... */
static bool beats_continue(const uint8_t *p, uint64_t n, uint64_t e)
{
	uint64_t diff = 0, w[2];
	for (uint64_t i = 0; i < n; i++) {
		memcpy(w, p + 16 * i, sizeof(w));
		diff |= (w[0] ^ (e + i)) | (w[1] ^ ~(e + i));
	}
	return diff == 0;
}

/* A drop leaves the pattern jumping forward at a chunk boundary (the recorder drops only while no
 * chunk is free, so a drop always falls between two chunks): a block there that starts a run
 * further on in this recording's stream is taken, its gap indexed by the checker. This
 * recording's: ahead of the beats expected, and no further from the first beat than the
 * programmed rate can have reached since the start; an earlier run on the same device started
 * at a random seq, so its blocks fall outside that reach (but for a chance of about reach in
 * 2^64). An unpaced pattern never drops: nothing to resume. */
static bool drop_resumes(const struct rstate *s, const uint8_t *p, uint64_t n, uint64_t pos)
{
	const struct nvt_recording *rec = s->rec;
	uint64_t w[2];

	if (!rec->rate_bps || !rec->chunk_bytes || pos % rec->chunk_bytes)
		return false;
	memcpy(w, p, sizeof(w));
	if (w[1] != ~w[0] || w[0] - rec->first_seq > s->reach ||
	    w[0] - rec->first_seq <= s->chk.expected - rec->first_seq)
		return false;
	return beats_continue(p, n / 16, w[0]);
}

/* nvt_recording.rate_bps over the time since its start, in beats, plus a chunk */
static uint64_t pattern_reach(const struct nvt_recording *rec)
{
	uint64_t now = nvt_real_ns();
	double beats = now > rec->start_ns ? (double)rec->rate_bps / NVT_BEAT_BYTES *
						     ((double)(now - rec->start_ns) / 1e9)
					   : 0;

	beats += (double)rec->chunk_bytes / NVT_BEAT_BYTES;
	return beats >= 0x1p63 ? UINT64_MAX / 2 : (uint64_t)beats;
}

static bool block_nonzero(const uint64_t *p)
{
	uint64_t acc = 0;
	for (unsigned i = 0; i < 512; i++)
		acc |= p[i];
	return acc != 0;
}

static int on_chunk(void *arg, const void *buf, uint64_t bytes, uint64_t off)
{
	struct rstate *s = arg;
	const uint8_t *p = buf;
	uint64_t pos = off - s->rec->data_offset;

	if (s->rec->format == NVT_FMT_FDREC) {
		for (uint64_t b = 0; b + 4096 <= bytes; b += 4096)
			if (block_nonzero((const uint64_t *)(p + b)))
				s->last_nonzero = pos + b + 4096;
		if (nvt_source_kind_is_pattern(s->rec->source_kind))
			nvt_checker_feed(&s->chk, buf, bytes - bytes % 16, off);
		return 0;
	}
	/* nvtape: the checkpointed part is taken as it is, the rest only while it continues; in
	 * whole 4 KiB blocks here (a checkpoint's last partial block: take_checkpoint_tail) */
	if (pos < s->vouched - s->vouched % 4096) {
		uint64_t whole = s->vouched - s->vouched % 4096;
		uint64_t n = whole - pos < bytes ? whole - pos : bytes;
		nvt_checker_feed(&s->chk, p, n, off);
		s->valid = pos + n;
		p += n;
		pos += n;
		bytes -= n;
	}
	if (!seq_own(s->rec))
		return bytes >= 16 ? 1 : 0;
	/* beyond it, whole 4 KiB blocks of the file (what a write leaves complete or not at all),
	 * read at any alignment */
	while (bytes >= 16) {
		uint64_t n = 4096 - (s->rec->data_offset + pos) % 4096;
		if (n > bytes)
			break;
		if (!beats_continue(p, n / 16, s->chk.expected) && !drop_resumes(s, p, n, pos))
			return 1;
		nvt_checker_feed(&s->chk, p, n, s->rec->data_offset + pos);
		s->valid = pos + n;
		p += n;
		pos += n;
		bytes -= n;
	}
	return 0;
}

/* The checkpoint's last bytes when they do not end a whole 4 KiB block that continues the
 * pattern (a checkpoint off a block boundary, a file whose length is not a multiple of 4 KiB):
 * vouched for, so kept as they are, and checked for the gaps to index. */
static int take_checkpoint_tail(const struct nvt_layout *L, struct rstate *s, struct nvt_err *err)
{
	uint64_t buf[512];
	uint64_t n = s->vouched - s->valid, off = s->rec->data_offset + s->valid;
	int fd[NVT_MAX_MEMBERS];
	int rc;

	if (s->valid >= s->vouched)
		return 0;
	if (n > sizeof(buf)) { /* the scan covers every whole block the checkpoint holds */
		nvt_err_set(err, EPROTO, "checkpoint tail of %llu bytes", (unsigned long long)n);
		return -1;
	}
	if (nvt_layout_open(L, O_RDONLY, fd, err))
		return -1;
	rc = nvt_layout_pread(L, fd, buf, n, off);
	nvt_layout_close(L, fd);
	if (rc) {
		nvt_err_set(err, -rc, "read of %llu bytes at %llu: %s", (unsigned long long)n,
			    (unsigned long long)off, strerror(-rc));
		return -1;
	}
	nvt_checker_feed(&s->chk, buf, n - n % 16, off);
	s->valid = s->vouched;
	return 0;
}

/* An FPGA Drive Recorder file ends at its last non-zero 4 KiB block: also a last block shorter
 * than 4 KiB (a file cut off the block grid), which the scan leaves out; and test-pattern data
 * ends at its last well-formed beat, not with the zeros of a preallocated block after it. */
static int fdrec_end(const struct nvt_layout *L, struct rstate *s, uint64_t data_avail,
		     struct nvt_err *err)
{
	const struct nvt_recording *rec = s->rec;
	uint64_t buf[512], tail = data_avail % 4096, from, n;
	const uint8_t *p = (const uint8_t *)buf;
	int fd[NVT_MAX_MEMBERS];
	int rc = 0;

	if (!tail && !s->last_nonzero)
		return 0;
	if (nvt_layout_open(L, O_RDONLY, fd, err))
		return -1;
	if (tail) {
		memset(buf, 0, sizeof(buf));
		rc = nvt_layout_pread(L, fd, buf, tail, rec->data_offset + data_avail - tail);
		if (!rc && block_nonzero(buf)) {
			if (nvt_source_kind_is_pattern(rec->source_kind))
				nvt_checker_feed(&s->chk, buf, tail - tail % 16,
						 rec->data_offset + data_avail - tail);
			s->last_nonzero = data_avail;
		}
	}
	if (!rc && s->last_nonzero && nvt_source_kind_is_pattern(rec->source_kind)) {
		from = (s->last_nonzero - 1) / 4096 * 4096;
		n = s->last_nonzero - from;
		rc = nvt_layout_pread(L, fd, buf, n, rec->data_offset + from);
		while (!rc && n >= 16) { /* back to the last beat {seq, ~seq} */
			uint64_t w[2];
			memcpy(w, p + (n - n % 16) - 16, sizeof(w));
			if (w[1] == ~w[0])
				break;
			n = n - n % 16 - 16;
		}
		if (!rc)
			s->last_nonzero = from + (n - n % 16);
	}
	nvt_layout_close(L, fd);
	if (rc)
		nvt_err_set(err, -rc, "read of the last data block: %s", strerror(-rc));
	return rc ? -1 : 0;
}

/* The data after the header, for the test pattern and fdrec: what continues the pattern beyond
 * the checkpoint, its gaps, the last non-zero block. */
static int scan_data(const struct nvt_recover_opts *o, const struct nvt_layout *L, struct rstate *s,
		     uint64_t data_avail, struct nvt_err *err)
{
	const struct nvt_recording *rec = s->rec;
	struct nvt_scan_stats ss;

	if (!nvt_source_kind_is_pattern(rec->source_kind) && rec->format != NVT_FMT_FDREC)
		return 0;
	struct nvt_scan_opts so = {.layout = L,
				   .offset = rec->data_offset,
				   .len = data_avail - data_avail % 4096,
				   .chunk_bytes = o->chunk_bytes,
				   .chunks = o->chunks,
				   .qd = o->qd,
				   .on_chunk = on_chunk,
				   .progress = o->progress,
				   .notice = o->notice,
				   .user_arg = o->arg,
				   .arg = s};
	/* the checkpointed beats go through the checker too (its gaps are drops to index), by the
	 * scan or, for a last partial block, by take_checkpoint_tail */
	s->valid = 0;
	if (so.len && nvt_scan(&so, &ss, err))
		return -1;
	return rec->format == NVT_FMT_NVTAPE ? take_checkpoint_tail(L, s, err)
					     : fdrec_end(L, s, data_avail, err);
}

/* gaps in what is kept are exactly the drops we can prove */
static void keep_proven_drops(struct rstate *s)
{
	uint64_t kept = 0, beats = 0;

	for (uint64_t i = 0; i < s->nev; i++)
		if (s->ev[i].data_offset < s->valid) {
			s->ev[kept++] = s->ev[i];
			beats += s->ev[i].beats;
		}
	s->nev = kept;
	s->rec->drop_count = beats;
	s->rec->drop_events = kept;
}

/* Other data: the checkpoint's index holds the drops up to it; what it counts beyond what is
 * kept becomes one event at the end, so that the index sums to drop_count. */
static void keep_checkpoint_drops(struct rstate *s)
{
	struct nvt_recording *rec = s->rec;
	uint64_t kept = 0, beats = 0;

	for (uint64_t i = 0; i < s->nev; i++)
		if (s->ev[i].data_offset < s->valid && beats <= UINT64_MAX - s->ev[i].beats) {
			s->ev[kept++] = s->ev[i];
			beats += s->ev[i].beats;
		}
	s->nev = kept;
	if (rec->drop_count > beats) {
		struct nvt_drop_event *n = realloc(s->ev, (kept + 1) * sizeof(*n));
		if (n) {
			s->ev = n;
			s->ev[s->nev++] = (struct nvt_drop_event){
				.data_offset = s->valid,
				.beats = rec->drop_count - beats,
				.time_ns = rec->stop_ns > rec->start_ns
						   ? rec->stop_ns - rec->start_ns
						   : 0};
		} else {
			s->nev = 0;
		}
	}
	rec->drop_events = s->nev;
}

/* The checkpoint's index, for data whose gaps cannot be seen: its drops, and the checksums
 * of the chunks written so far (*ix). */
static void load_checkpoint_index(const struct nvt_recover_opts *o, const struct nvt_layout *L,
				  struct rstate *s, struct nvt_index *ix)
{
	const struct nvt_recording *rec = s->rec;
	struct nvt_err ierr = {0};

	memset(ix, 0, sizeof(*ix));
	if (rec->format != NVT_FMT_NVTAPE || !rec->index_bytes)
		return;
	if (nvt_recording_read_index_all(L, rec, ix, &ierr) == 0) {
		/* the pattern's gaps are found anew, but for a source whose jumps are not all
		 * drops (the fdrec device: beats lost after its FIFO stay data), whose index's
		 * drops up to the checkpoint are kept (on_gap) */
		if (!nvt_source_kind_is_pattern(rec->source_kind) || !seq_own(rec)) {
			uint64_t n = ix->nev;
			if (nvt_source_kind_is_pattern(rec->source_kind))
				while (n && ix->ev[n - 1].data_offset >= s->limit)
					n--;
			s->ev = ix->ev;
			s->nev = n;
			s->cap = ix->nev;
			ix->ev = NULL;
			ix->nev = 0;
		}
		return;
	}
	s->nev = 0;
	if (o->notice) {
		char msg[800];
		snprintf(msg, sizeof(msg),
			 "the checkpoint's drop index cannot be used (%s): its %llu drops are "
			 "counted at the end of the data",
			 ierr.msg, (unsigned long long)rec->drop_count);
		o->notice(msg, o->arg);
	}
}

/* Data past the checkpoint is kept chunk by chunk while it matches the checksum recorded for
 * it, from the span the checkpoint ends in: what landed intact before the crash. */
/* where a checksum's span ends; UINT64_MAX when the index's numbers wrap (never within data) */
static uint64_t span_end(const struct nvt_chunk_crc *e)
{
	uint64_t end;

	return __builtin_add_overflow(e->data_offset, e->length, &end) ? UINT64_MAX : end;
}

static int extend_by_sums(const struct nvt_layout *L, struct rstate *s, const struct nvt_index *ix,
			  uint64_t data_avail, struct nvt_err *err)
{
	const uint64_t piece = 8u << 20;
	struct nvt_sums_check c;
	int fd[NVT_MAX_MEMBERS];
	uint8_t *buf;
	uint64_t i = 0;

	nvt_sums_check_init(&c, ix->crc, ix->ncrc, data_avail);
	while (i < c.n && span_end(&ix->crc[i]) <= s->limit)
		i++;
	if (i == c.n || span_end(&ix->crc[i]) > data_avail)
		return 0;
	buf = malloc(piece);
	if (!buf || nvt_layout_open(L, O_RDONLY, fd, err)) {
		free(buf);
		return buf ? -1 : 0;
	}
	/* spans in order, each starting where what is vouched for ends (no hole) */
	for (; i < c.n && span_end(&ix->crc[i]) <= data_avail && ix->crc[i].data_offset <= s->valid;
	     i++) {
		const struct nvt_chunk_crc *e = &ix->crc[i];
		uint32_t crc = 0;
		for (uint64_t done = 0; done < e->length;) {
			uint64_t k = e->length - done < piece ? e->length - done : piece;
			if (nvt_layout_pread(L, fd, buf, k,
					     s->rec->data_offset + e->data_offset + done))
				goto out;
			crc = nvt_crc32c(crc, buf, k);
			done += k;
		}
		if (crc != e->crc32c)
			break;
		if (e->data_offset + e->length > s->valid)
			s->valid = e->data_offset + e->length;
	}
out:
	nvt_layout_close(L, fd);
	free(buf);
	return 0;
}

/* The checksums of the data kept: the index's spans that end inside it, then spans computed
 * here, a chunk each, for what they leave uncovered (a checkpoint inside a chunk, pattern
 * blocks kept past the checkpoint), so that every byte kept stays checked. Only for a
 * recording that has checksums. *crc is malloc'ed when it is not ix's. */
static int cover_kept(const struct nvt_layout *L, struct rstate *s, const struct nvt_index *ix,
		      struct nvt_chunk_crc **own, struct nvt_err *err)
{
	uint64_t step = s->rec->chunk_bytes ? s->rec->chunk_bytes : 8u << 20;
	uint64_t at = 0, n = 0, extra;
	struct nvt_chunk_crc *e;
	int fd[NVT_MAX_MEMBERS];
	uint8_t *buf;

	*own = NULL;
	s->crc = ix->crc;
	while (n < ix->ncrc && ix->crc[n].data_offset + ix->crc[n].length <= s->valid)
		n++;
	s->ncrc = n;
	if (!ix->ncrc)
		return 0;
	if (n)
		at = ix->crc[n - 1].data_offset + ix->crc[n - 1].length;
	if (at >= s->valid)
		return 0;
	extra = (s->valid - at) / step + 2;
	e = malloc((n + extra) * sizeof(*e));
	buf = malloc(step);
	if (!e || !buf || nvt_layout_open(L, O_RDONLY, fd, err)) {
		free(e);
		free(buf);
		if (!err->code)
			nvt_err_set(err, ENOMEM,
				    "out of memory for the checksums of the data kept");
		return -1;
	}
	memcpy(e, ix->crc, n * sizeof(*e));
	while (at < s->valid) {
		uint64_t k = step - at % step; /* to the next chunk boundary */
		int rc;
		if (k > s->valid - at)
			k = s->valid - at;
		rc = nvt_layout_pread(L, fd, buf, k, s->rec->data_offset + at);
		if (rc) {
			nvt_err_set(err, -rc, "read of %llu bytes at %llu: %s",
				    (unsigned long long)k,
				    (unsigned long long)(s->rec->data_offset + at), strerror(-rc));
			nvt_layout_close(L, fd);
			free(e);
			free(buf);
			return -1;
		}
		e[n++] = (struct nvt_chunk_crc){.data_offset = at,
						.length = k,
						.crc32c = nvt_crc32c(0, buf, k),
						.chunks = 1};
		at += k;
	}
	nvt_layout_close(L, fd);
	free(buf);
	*own = e;
	s->crc = e;
	s->ncrc = n;
	return 0;
}

/* The recording as recovered, in memory: its valid length, its drops, complete, no index yet. */
static void mark_recovered(struct rstate *s, struct nvt_recover_result *res, uint64_t data_avail)
{
	struct nvt_recording *rec = s->rec;

	if (rec->format == NVT_FMT_FDREC)
		s->valid = s->last_nonzero;
	res->extended_bytes = s->valid > s->limit ? s->valid - s->limit : 0;
	res->dropped_tail_bytes = data_avail - s->valid;
	rec->data_bytes = rec->durable_bytes = s->valid;
	if (nvt_source_kind_is_pattern(rec->source_kind))
		keep_proven_drops(s);
	else if (rec->format == NVT_FMT_NVTAPE)
		keep_checkpoint_drops(s);
	rec->flags |= NVT_FLAG_COMPLETE | NVT_FLAG_RECOVERED;
	rec->index_offset = rec->index_bytes = 0;
	rec->index_crc = 0;
}

/* The drop index on the first 4 KiB boundary after the data, or after the checkpoint's index
 * when it would overlap that one (which a crash meanwhile still needs). */
static int write_index(const struct nvt_layout *L, const int *fd, const struct rstate *s,
		       uint64_t end, uint64_t *index_end, struct nvt_err *err)
{
	struct nvt_recording *rec = s->rec;
	struct nvt_index ix = {.ev = s->ev,
			       .nev = s->nev,
			       .crc = (struct nvt_chunk_crc *)s->crc,
			       .ncrc = s->ncrc,
			       .tm = (struct nvt_chunk_time *)s->tm,
			       .ntm = s->ntm,
			       .meta = (char *)s->meta,
			       .meta_len = s->meta_len,
			       .pad_unit = nvt_sigmf_meta_sample_bytes(s->meta)};
	size_t cap = nvt_index_bytes(&ix);
	void *ibuf = malloc(cap);
	uint64_t used, off = (end + 4095) / 4096 * 4096;
	uint32_t crc;

	if (s->old_index_end > off && s->old_lo < off + cap)
		off = (s->old_index_end + 4095) / 4096 * 4096;

	bool built = ibuf && nvt_index_build(&ix, ibuf, cap, &used, &crc) >= 0;

	if (built)
		nvt_index_pad(ix.pad_unit, ibuf, cap, off - rec->data_offset, &used, &crc);
	if (!built || nvt_members_write(L, fd, ibuf, used, off, err)) {
		free(ibuf);
		nvt_err_set(err, EIO, "cannot write the rebuilt drop index");
		return -1;
	}
	free(ibuf);
	rec->index_offset = off;
	rec->index_bytes = used;
	rec->index_crc = crc;
	*index_end = off + used;
	return 0;
}

/* The recovered recording on disk: cut to its valid length, the rebuilt index, the header,
 * every member synced. */
static int rewrite(const struct nvt_layout *L, const struct rstate *s, struct nvt_err *err)
{
	const struct nvt_recording *rec = s->rec;
	uint64_t end = rec->data_offset + s->valid, keep;
	int fd[NVT_MAX_MEMBERS];
	int rc;

	if (nvt_layout_open(L, O_RDWR, fd, err))
		return -1;
	/* the checkpoint's index stays until the complete header is durable */
	keep = end > s->old_index_end ? end : s->old_index_end;
	rc = nvt_members_truncate(L, fd, keep, err);
	if (!rc && rec->format == NVT_FMT_NVTAPE && (s->nev || s->ncrc || s->meta_len)) {
		rc = write_index(L, fd, s, end, &end, err);
		keep = end > s->old_index_end ? end : s->old_index_end;
		if (!rc)
			rc = nvt_members_truncate(L, fd, keep, err);
	}
	if (!rc) /* the cut and the index durable before the header says COMPLETE */
		rc = nvt_members_sync(L, fd, err);
	if (!rc && keep > end && rec->format == NVT_FMT_NVTAPE) {
		/* the checkpoint's index lies beyond the new end: a header that points at the new
		 * index, still without COMPLETE, is made durable before the file is cut, so that a
		 * crash at any moment finds a header whose index is in the file */
		struct nvt_recording mid = *rec;
		mid.flags &= ~(NVT_FLAG_COMPLETE | NVT_FLAG_RECOVERED);
		rc = nvt_members_write_header(L, fd, &mid, err);
		s->rec->generation = mid.generation;
		s->rec->version = mid.version;
		if (!rc)
			rc = nvt_members_sync(L, fd, err);
		if (!rc)
			rc = nvt_members_truncate(L, fd, end, err);
		if (!rc)
			rc = nvt_members_sync(L, fd, err);
		keep = end;
	}
	if (!rc)
		rc = nvt_members_write_header(L, fd, s->rec, err);
	if (!rc)
		rc = nvt_members_sync(L, fd, err);
	if (!rc && keep > end) {
		rc = nvt_members_truncate(L, fd, end, err);
		if (!rc)
			rc = nvt_members_sync(L, fd, err);
	}
	nvt_layout_close(L, fd);
	return rc;
}

/* An fdrec-format recording on a device: the format has no checkpoint and no checksum, so the
 * blocks an earlier recording left after this one's end cannot be told from its own (the fdrec
 * device's generator starts at 0 every run: they continue its sequence exactly). Said, since
 * the length kept may then run past what was recorded. */
static void fdrec_device_note(const struct nvt_recover_opts *o, const struct nvt_layout *L,
			      const struct nvt_recording *rec)
{
	struct stat st;

	if (rec->format != NVT_FMT_FDREC || !o->notice)
		return;
	for (unsigned m = 0; m < L->n; m++)
		if (!stat(L->path[m], &st) && S_ISBLK(st.st_mode)) {
			o->notice(
				"an FPGA Drive Recorder file on a device has no checkpoint: blocks "
				"an "
				"earlier recording left after this one's end cannot be told from "
				"its own, so what is kept (up to the last non-zero block) may run "
				"past what it recorded; record in nvtape format (checkpoints, "
				"checksums) onto devices",
				o->arg);
			return;
		}
}

static int recover_claimed(const struct nvt_recover_opts *o, const struct nvt_layout *L,
			   struct nvt_recover_result *res)
{
	struct rstate s = {0};
	struct nvt_index ix = {0};
	struct nvt_recording *rec = &res->after;
	struct nvt_chunk_crc *own_crc = NULL;
	uint64_t data_avail;

	if (nvt_recording_open(L, &res->before, &res->err))
		return -(res->err.code ? res->err.code : EIO);
	*rec = res->before;
	if (rec->complete) {
		res->already_complete = true;
		return 0;
	}
	data_avail = rec->file_bytes - rec->data_offset;
	res->checkpoint_bytes = rec->format == NVT_FMT_NVTAPE ? rec->durable_bytes : 0;
	s.rec = rec;
	s.limit = res->checkpoint_bytes;
	s.valid = s.limit;
	s.reach = pattern_reach(rec);
	s.chk.on_event = on_gap;
	s.chk.arg = &s;
	if (rec->format == NVT_FMT_NVTAPE && rec->index_bytes) {
		s.old_lo = rec->index_offset;
		s.old_index_end = rec->index_offset + rec->index_bytes;
	}
	load_checkpoint_index(o, L, &s, &ix);
	s.vouched = s.limit;
	if (rec->format == NVT_FMT_NVTAPE && nvt_source_kind_is_pattern(rec->source_kind) &&
	    !seq_own(rec) && ix.ncrc) {
		/* what the checksums vouch for beyond the checkpoint, then scanned as vouched */
		if (extend_by_sums(L, &s, &ix, data_avail, &res->err)) {
			nvt_index_clear(&ix);
			return -(res->err.code ? res->err.code : EIO);
		}
		s.vouched = s.valid;
	}
	nvt_checker_init(&s.chk, rec->first_seq);
	if (scan_data(o, L, &s, data_avail, &res->err) ||
	    (ix.ncrc && !nvt_source_kind_is_pattern(rec->source_kind) &&
	     extend_by_sums(L, &s, &ix, data_avail, &res->err))) {
		nvt_index_clear(&ix);
		free(s.ev);
		return -(res->err.code ? res->err.code : EIO);
	}
	mark_recovered(&s, res, data_avail);
	fdrec_device_note(o, L, rec);
	/* the checksums of what is kept, their times, the metadata go on */
	if (cover_kept(L, &s, &ix, &own_crc, &res->err)) {
		nvt_index_clear(&ix);
		free(s.ev);
		return -(res->err.code ? res->err.code : EIO);
	}
	s.tm = ix.tm;
	while (s.ntm < ix.ntm && ix.tm[s.ntm].data_offset < s.valid)
		s.ntm++;
	s.meta = ix.meta;
	s.meta_len = ix.meta ? ix.meta_len : 0;
	if (rewrite(L, &s, &res->err)) {
		nvt_index_clear(&ix);
		free(own_crc);
		free(s.ev);
		return -(res->err.code ? res->err.code : EIO);
	}
	nvt_index_clear(&ix);
	free(own_crc);
	free(s.ev);
	rec->complete = true;
	rec->valid_bytes = s.valid;
	return 0;
}

int nvt_recover(const struct nvt_recover_opts *o, struct nvt_recover_result *res)
{
	int held[NVT_MAX_MEMBERS];
	struct nvt_layout L;
	int rc;

	memset(res, 0, sizeof(*res));
	nvt_layout_resolve(&o->layout, o->path, &L);
	if (nvt_members_claim(&L, held, "recover it", &res->err))
		return -(res->err.code ? res->err.code : EIO);
	rc = recover_claimed(o, &L, res);
	nvt_layout_close(&L, held);
	return rc;
}
