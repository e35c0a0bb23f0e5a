/* SPDX-License-Identifier: MIT */
/* fdrec sink: playback into the FPGA Drive Recorder's driver (/dev/fdrec0, FDREC_API_VERSION 1,
 * fdrec_uapi.h, docs/fdrec-abi.md). The data is copied into nvtape's own buffers, registered
 * with the driver as a play set (2 MiB hugepages where the pool has them: the driver needs 2 MiB
 * aligned buffers of a multiple of 2 MiB, and its DMA at most 511 descriptors for all of them),
 * submitted in order to its MM2S DMA and checked by the design's pattern checker
 * (PLAY_START with FDREC_PLAY_CHECK: the checker starts on the first beat played) at the sink
 * rate the device is programmed with (sysfs chk_rate_bps). At the end nvtape waits until the
 * device has read every buffer, stops it and reports the checker's counts (beats, errors,
 * gaps, gap beats) as the playback's check, and its underflows (the sink was ready, no data
 * came) as the playback's underflows, so both decide the exit code as for the built-in
 * checker. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "nvtape/sink.h"
#include "stream/fdrec_dev.h"
#include "stream/fdrec_uapi.h"
#include "util/sysutil.h"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif

#define FDS_NBUFS    8
#define FDS_WAIT_MS  100
#define FDS_STALL_MS 10000 /* the device took no buffer for this long: an error */

struct fdrec_sink {
	const char *path;
	int fd;
	uint8_t *map, *mem; /* the mapping, and the first buffer in it (aligned) */
	size_t map_bytes;
	uint64_t buf_size;
	uint32_t free[FDS_NBUFS], nfree; /* buffers nvtape owns */
	int cur;                         /* buffer being filled, -1 none */
	uint64_t cur_off, first_seq;
	uint64_t submitted;     /* bytes handed to the DMA */
	struct nvt_err fin_err; /* the first failure at the end (the last buffers, the stop) */
	bool finished;
	struct fdrec_play_stats st;
	struct nvt_checker chk;
};

static int fds_err(struct fdrec_sink *s, struct nvt_err *err, int e, const char *what)
{
	nvt_err_set(err, e, "fdrec %s: %s: %s", s->path, what, strerror(e));
	return -e;
}

/* wait for one buffer the device has played; 0, or -errno with err set */
static bool is_free(const struct fdrec_sink *s, uint32_t index)
{
	for (uint32_t i = 0; i < s->nfree; i++)
		if (s->free[i] == index)
			return true;
	return (int)index == s->cur;
}

/* the device's progress: beats into the egress FIFO and through the checker */
static uint64_t progress(struct fdrec_sink *s)
{
	struct fdrec_play_stats st;

	if (ioctl(s->fd, FDREC_IOC_GET_PLAY_STATS, &st))
		return 0;
	return st.egr_beats_in + st.chk.beats;
}

static int take_done(struct fdrec_sink *s, struct nvt_err *err)
{
	unsigned waited = 0;
	uint64_t moved = progress(s);

	for (;;) {
		struct fdrec_play_done d = {.timeout_ms = FDS_WAIT_MS, .index = UINT32_MAX};
		int rc = ioctl(s->fd, FDREC_IOC_PLAY_WAIT_DONE, &d) ? errno : 0;

		if (!rc || (rc == EIO && d.index != UINT32_MAX)) {
			if (d.index >= FDS_NBUFS || is_free(s, d.index)) {
				nvt_err_set(err, EPROTO,
					    "fdrec %s: the driver returned buffer %u, which is not "
					    "one of the %u it was playing: reload the driver",
					    s->path, d.index, FDS_NBUFS);
				return -EPROTO;
			}
			s->free[s->nfree++] = d.index;
			if (rc || (d.flags & FDREC_DONE_ERROR)) {
				nvt_err_set(
					err, EIO,
					"fdrec %s: the DMA reported an error reading buffer %u "
					"(#%llu): the playback stops; check the design's DMA and "
					"reload the driver",
					s->path, d.index, (unsigned long long)d.seq);
				return -EIO;
			}
			return 0;
		}
		if (rc != ETIMEDOUT && rc != EINTR)
			return fds_err(s, err, rc, "PLAY_WAIT_DONE failed");
		waited += FDS_WAIT_MS;
		if (waited >= FDS_STALL_MS) { /* a slow sink still takes beats: not a stall */
			uint64_t now = progress(s);
			if (now != moved) {
				moved = now;
				waited = 0;
				continue;
			}
			nvt_err_set(err, ETIMEDOUT,
				    "fdrec %s: playback stalled: the device took no beat for %u s "
				    "(sink not accepting? check chk_enable and chk_rate_bps)",
				    s->path, FDS_STALL_MS / 1000);
			return -ETIMEDOUT;
		}
	}
}

static int submit_cur(struct fdrec_sink *s, struct nvt_err *err)
{
	struct fdrec_play_submit p = {.index = (uint32_t)s->cur, .bytes = s->cur_off};

	if (ioctl(s->fd, FDREC_IOC_PLAY_SUBMIT, &p))
		return fds_err(s, err, errno, "PLAY_SUBMIT failed");
	s->submitted += s->cur_off;
	s->cur = -1;
	s->cur_off = 0;
	return 0;
}

/* FDS_NBUFS buffers of buf_size on align: hugepages, else ordinary memory placed on align */
static int map_bufs(struct fdrec_sink *s, uint64_t align, struct nvt_err *err)
{
	size_t len = (size_t)FDS_NBUFS * s->buf_size;

	s->map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB | MAP_POPULATE, -1,
		      0);
	if (s->map != MAP_FAILED && (uintptr_t)s->map % align == 0) {
		s->mem = s->map;
		s->map_bytes = len;
		return 0;
	}
	if (s->map != MAP_FAILED)
		munmap(s->map, len);
	s->map_bytes = len + align;
	s->map = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (s->map == MAP_FAILED)
		return fds_err(s, err, errno, "cannot map the DMA buffers");
	s->mem = s->map + (align - (uintptr_t)s->map % align) % align;
	madvise(s->mem, len, MADV_HUGEPAGE);
	memset(s->mem, 0, len); /* populated before the driver pins them */
	return 0;
}

static int register_bufs(struct fdrec_sink *s, struct nvt_err *err)
{
	uint64_t addrs[FDS_NBUFS];
	struct fdrec_bufs b = {.addrs = (uint64_t)(uintptr_t)addrs,
			       .buf_size = s->buf_size,
			       .count = FDS_NBUFS,
			       .flags = FDREC_DIR_PLAY};

	for (unsigned i = 0; i < FDS_NBUFS; i++) {
		addrs[i] = (uint64_t)(uintptr_t)(s->mem + (size_t)i * s->buf_size);
		s->free[s->nfree++] = i;
	}
	if (!ioctl(s->fd, FDREC_IOC_REGISTER_BUFS, &b))
		return 0;
	if (errno == E2BIG) {
		nvt_err_set(err, E2BIG,
			    "fdrec %s: %u playback buffers of %llu bytes in ordinary memory need "
			    "more DMA descriptors than the channel has (511): reserve 2 MiB "
			    "hugepages (echo %u > /proc/sys/vm/nr_hugepages)",
			    s->path, FDS_NBUFS, (unsigned long long)s->buf_size,
			    (unsigned)((uint64_t)FDS_NBUFS * s->buf_size >> 21));
		return -E2BIG;
	}
	return fds_err(s, err, errno, "REGISTER_BUFS of the playback buffers failed");
}

static int fds_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	struct fdrec_sink *s = calloc(1, sizeof(*s));
	struct fdrec_info info;
	struct fdrec_play_start ps = {.flags = FDREC_PLAY_CHECK};
	uint64_t align;
	int rc = 0;

	if (!s) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	s->path = *a->arg ? a->arg : FDREC_DEFAULT_DEV;
	s->cur = -1;
	s->first_seq = a->first_seq;
	s->map = MAP_FAILED;
	s->fd = nvt_fdrec_open(s->path, err);
	if (s->fd < 0) {
		rc = s->fd;
		goto out;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(s->fd, FDREC_IOC_GET_INFO, &info)) {
		rc = fds_err(s, err, errno, "GET_INFO failed (not an fdrec device?)");
		goto out;
	}
	if (info.api_version != FDREC_API_VERSION) {
		nvt_err_set(err, EPROTONOSUPPORT,
			    "fdrec %s: the driver speaks API version %u, nvtape speaks version %u "
			    "(the FPGA Drive Recorder driver of docs/fdrec-abi.md): install that "
			    "driver, or an nvtape built for API version %u",
			    s->path, info.api_version, FDREC_API_VERSION, info.api_version);
		rc = -EPROTONOSUPPORT;
		goto out;
	}
	if ((info.caps & (FDREC_CAP_MM2S | FDREC_CAP_CHECK)) !=
	    (FDREC_CAP_MM2S | FDREC_CAP_CHECK)) {
		nvt_err_set(err, EOPNOTSUPP,
			    "fdrec %s: the device cannot play into its checker (capabilities 0x%x: "
			    "playback (MM2S, 0x%x, a \"tx\" DMA channel) and the checker (CHECK, "
			    "0x%x, design 1.1 or later) are needed)",
			    s->path, info.caps, FDREC_CAP_MM2S, FDREC_CAP_CHECK);
		rc = -EOPNOTSUPP;
		goto out;
	}
	align = info.buf_align ? info.buf_align : FDREC_BUF_ALIGN;
	if (align > FDREC_MAX_BUF_SIZE || align % 4096) {
		nvt_err_set(err, EPROTO, "fdrec %s: the driver reports a buffer alignment of %llu",
			    s->path, (unsigned long long)align);
		rc = -EPROTO;
		goto out;
	}
	s->buf_size = align; /* the smallest buffer it takes */
	rc = map_bufs(s, align, err);
	if (!rc)
		rc = register_bufs(s, err);
	if (!rc && ioctl(s->fd, FDREC_IOC_PLAY_START, &ps))
		rc = fds_err(s, err, errno, "PLAY_START failed");
out:
	if (rc) {
		if (s->map != MAP_FAILED)
			munmap(s->map, s->map_bytes);
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static int fds_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t offset,
		       struct nvt_err *err)
{
	struct fdrec_sink *s = state;
	int rc;

	(void)offset;
	while (bytes) {
		uint64_t k;

		if (s->cur < 0) {
			if (!s->nfree && (rc = take_done(s, err)))
				return rc;
			s->cur = (int)s->free[--s->nfree];
			s->cur_off = 0;
		}
		k = s->buf_size - s->cur_off < bytes ? s->buf_size - s->cur_off : bytes;
		memcpy(s->mem + (size_t)s->cur * s->buf_size + s->cur_off, buf, k);
		s->cur_off += k;
		buf += k;
		bytes -= k;
		if (s->cur_off == s->buf_size && (rc = submit_cur(s, err)))
			return rc;
	}
	return 0;
}

/* A buffer is done once the DMA has read it; its last beats may still be in the egress FIFO on
 * their way to the checker, and PLAY_STOP freezes the checker: wait until the FIFO is empty (as
 * long as it takes at the sink's rate, and a second more), while the checker still takes beats. */
static void drain_egress(struct fdrec_sink *s)
{
	uint64_t t0 = nvt_mono_ns(), limit = 1000000000ull, last = UINT64_MAX;
	struct fdrec_play_stats st;

	while (!ioctl(s->fd, FDREC_IOC_GET_PLAY_STATS, &st) && st.egr_level) {
		uint64_t level =
			st.egr_depth && st.egr_level > st.egr_depth ? st.egr_depth : st.egr_level;
		double t = st.chk.rate_bps ? (double)level * 16 * 1e9 / (double)st.chk.rate_bps : 0;
		/* the time the FIFO takes at the sink's rate, within the stall limit */
		limit = 1000000000ull +
			(t < FDS_STALL_MS * 1e6 ? (uint64_t)t : FDS_STALL_MS * 1000000ull);
		if (st.chk.beats != last) { /* progress: the wait starts again */
			last = st.chk.beats;
			t0 = nvt_mono_ns();
		}
		if (nvt_mono_ns() - t0 > limit)
			return;
		nvt_sleep_until(nvt_mono_ns() + 2000000);
	}
}

/* the end of the playback: the last buffer submitted, every buffer played, the device
 * stopped; its checker's counts become the playback's */
static void finish(struct fdrec_sink *s)
{
	struct nvt_err err;
	bool all_done;

	if (s->finished)
		return;
	s->finished = true;
	memset(&err, 0, sizeof(err));
	if (s->cur >= 0 && s->cur_off)
		submit_cur(s, &err);
	while (!err.code && s->nfree + (s->cur >= 0) < FDS_NBUFS && !take_done(s, &err))
		;
	all_done = s->nfree + (s->cur >= 0) == FDS_NBUFS;
	if (all_done)
		drain_egress(s);
	if (err.code)
		s->fin_err = err;
	if (ioctl(s->fd, FDREC_IOC_PLAY_STOP, &s->st)) {
		if (!s->fin_err.code)
			fds_err(s, &s->fin_err, errno,
				"PLAY_STOP failed (the checker's counts are unknown)");
		memset(&s->st, 0, sizeof(s->st));
		nvt_checker_init(&s->chk, s->first_seq);
		return;
	}
	const struct fdrec_chk_stats *c = &s->st.chk;
	nvt_checker_init(&s->chk, s->first_seq);
	s->chk.beats = c->beats;
	s->chk.corrupt = c->errors;
	s->chk.gaps = c->gaps;
	s->chk.gap_beats = c->gap_beats;
	s->chk.seen_good = c->beats > c->errors;
	s->chk.last_seen = c->last_seq;
	s->chk.expected = c->last_seq + 1;
	if (s->chk.seen_good)
		s->chk.first_seen = c->last_seq + 1 - c->beats - c->gap_beats;
	/* beats played that never reached the checker (flushed by the stop) are missing there */
	if (c->beats < s->submitted / 16) {
		s->chk.gaps++;
		s->chk.gap_beats += s->submitted / 16 - c->beats;
	}
}

static const struct nvt_checker *fds_checker(void *state)
{
	finish(state);
	return &((struct fdrec_sink *)state)->chk;
}

static uint64_t fds_underflows(void *state)
{
	finish(state);
	return ((struct fdrec_sink *)state)->st.chk.underflows;
}

/* a failure at the end of the playback fails it (a runtime error, not a data problem) */
static void fds_report(void *state, struct nvt_sink_report *rep)
{
	struct fdrec_sink *s = state;

	finish(s);
	rep->err = s->fin_err;
}

static void fds_close(void *state)
{
	struct fdrec_sink *s = state;

	finish(s);
	close(s->fd); /* the driver unpins the buffers */
	munmap(s->map, s->map_bytes);
	free(s);
}

const struct nvt_sink_ops nvt_sink_fdrec = {
	.name = "fdrec",
	.help = "the FPGA Drive Recorder's driver (fdrec[:/dev/fdrec0]): MM2S DMA into the "
		"design's pattern checker at the device's sink rate; its errors, gaps and "
		"underflows are the playback's",
	.caps = NVT_SINK_NEEDS_PATTERN | NVT_SINK_CAN_BLOCK,
	.open = fds_open,
	.consume = fds_consume,
	.checker = fds_checker,
	.close = fds_close,
	.underflows = fds_underflows,
	.report = fds_report,
};
