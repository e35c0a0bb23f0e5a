/* SPDX-License-Identifier: MIT */
/* fdrec sink: playback into the FPGA Drive Recorder's driver (/dev/fdrec0, fdrec_uapi.h). The
 * data is copied into nvtape's own buffers registered with the driver, submitted in order to
 * its MM2S DMA and checked by the design's pattern checker at the sink rate the device is
 * programmed with (sysfs chk_rate_bps). At the end nvtape waits until the device has taken
 * every buffer, stops it and reports the checker's counts (beats, errors, gaps, gap beats) as
 * the playback's check, and its underflows (the sink was ready, no data came) as the
 * playback's underflows, so both decide the exit code as for the built-in checker. */
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

#define FDS_NBUFS    8
#define FDS_BUF_SIZE (1u << 20)
#define FDS_WAIT_MS  100
#define FDS_STALL_MS 10000 /* the device took no buffer for this long: an error */

struct fdrec_sink {
	const char *path;
	int fd;
	uint8_t *mem;
	uint32_t free[FDS_NBUFS], nfree; /* buffers nvtape owns */
	int cur;                         /* buffer being filled, -1 none */
	uint64_t cur_off, first_seq;
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
static int take_done(struct fdrec_sink *s, struct nvt_err *err)
{
	unsigned waited = 0;

	for (;;) {
		struct fdrec_play_done d = {.timeout_ms = FDS_WAIT_MS};

		if (!ioctl(s->fd, FDREC_PLAY_WAIT_DONE, &d)) {
			if (d.index >= FDS_NBUFS) {
				nvt_err_set(err, EPROTO,
					    "fdrec %s: the driver returned buffer %u of %u",
					    s->path, d.index, FDS_NBUFS);
				return -EPROTO;
			}
			s->free[s->nfree++] = d.index;
			return 0;
		}
		if (errno != ETIMEDOUT && errno != EINTR)
			return fds_err(s, err, errno, "PLAY_WAIT_DONE failed");
		waited += FDS_WAIT_MS;
		if (waited >= FDS_STALL_MS) {
			nvt_err_set(
				err, ETIMEDOUT,
				"fdrec %s: playback stalled: the device took no buffer for %u s "
				"(sink not accepting? check chk_enable and chk_rate_bps)",
				s->path, FDS_STALL_MS / 1000);
			return -ETIMEDOUT;
		}
	}
}

static int submit_cur(struct fdrec_sink *s, struct nvt_err *err)
{
	struct fdrec_play_submit p = {.index = (uint32_t)s->cur, .bytes = s->cur_off};

	if (ioctl(s->fd, FDREC_PLAY_SUBMIT, &p))
		return fds_err(s, err, errno, "PLAY_SUBMIT failed");
	s->cur = -1;
	s->cur_off = 0;
	return 0;
}

static int fds_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	struct fdrec_sink *s = calloc(1, sizeof(*s));
	struct fdrec_bufs *b = calloc(1, sizeof(*b));
	struct fdrec_info info;
	uint32_t flags = FDREC_PLAY_CHECK;
	int rc = 0;

	if (!s || !b) {
		free(s);
		free(b);
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	s->path = *a->arg ? a->arg : FDREC_DEFAULT_DEV;
	s->cur = -1;
	s->first_seq = a->first_seq;
	s->mem = MAP_FAILED;
	s->fd = nvt_fdrec_open(s->path, err);
	if (s->fd < 0) {
		rc = s->fd;
		goto out;
	}
	if (ioctl(s->fd, FDREC_GET_INFO, &info)) {
		rc = fds_err(s, err, errno, "GET_INFO failed (not an fdrec device?)");
		goto out;
	}
	if (info.api_version != FDREC_API_VERSION || !(info.caps & FDREC_CAP_MM2S) ||
	    !(info.caps & FDREC_CAP_CHECK)) {
		nvt_err_set(
			err, ENODEV,
			"fdrec %s: driver API version %u, capabilities 0x%x: playback needs API "
			"version %u with MM2S and the pattern checker",
			s->path, info.api_version, info.caps, FDREC_API_VERSION);
		rc = -ENODEV;
		goto out;
	}
	s->mem = mmap(NULL, (size_t)FDS_NBUFS * FDS_BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->mem == MAP_FAILED) {
		rc = fds_err(s, err, errno, "cannot map the DMA buffers");
		goto out;
	}
	b->count = FDS_NBUFS;
	b->buf_size = FDS_BUF_SIZE;
	b->flags = FDREC_DIR_PLAY;
	for (unsigned i = 0; i < FDS_NBUFS; i++) {
		b->addrs[i] = (uint64_t)(uintptr_t)(s->mem + (size_t)i * FDS_BUF_SIZE);
		s->free[s->nfree++] = i;
	}
	if (ioctl(s->fd, FDREC_REGISTER_BUFS, b)) {
		rc = fds_err(s, err, errno, "REGISTER_BUFS failed");
		goto out;
	}
	if (ioctl(s->fd, FDREC_PLAY_START, &flags))
		rc = fds_err(s, err, errno, "PLAY_START failed");
out:
	free(b);
	if (rc) {
		if (s->mem != MAP_FAILED)
			munmap(s->mem, (size_t)FDS_NBUFS * FDS_BUF_SIZE);
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
		k = FDS_BUF_SIZE - s->cur_off < bytes ? FDS_BUF_SIZE - s->cur_off : bytes;
		memcpy(s->mem + (size_t)s->cur * FDS_BUF_SIZE + s->cur_off, buf, k);
		s->cur_off += k;
		buf += k;
		bytes -= k;
		if (s->cur_off == FDS_BUF_SIZE && (rc = submit_cur(s, err)))
			return rc;
	}
	return 0;
}

/* the end of the playback: the last buffer submitted, every buffer played, the device
 * stopped; its checker's counts become the playback's */
static void finish(struct fdrec_sink *s)
{
	struct nvt_err err;

	if (s->finished)
		return;
	s->finished = true;
	memset(&err, 0, sizeof(err));
	if (s->cur >= 0 && s->cur_off)
		submit_cur(s, &err);
	while (s->nfree + (s->cur >= 0) < FDS_NBUFS && !take_done(s, &err))
		;
	if (ioctl(s->fd, FDREC_PLAY_STOP, &s->st))
		memset(&s->st, 0, sizeof(s->st));
	nvt_checker_init(&s->chk, s->first_seq);
	s->chk.beats = s->st.beats;
	s->chk.corrupt = s->st.errors;
	s->chk.gaps = s->st.gaps;
	s->chk.gap_beats = s->st.gap_beats;
	s->chk.seen_good = s->st.beats > s->st.errors;
	s->chk.last_seen = s->st.last_seq;
	s->chk.expected = s->st.last_seq + 1;
	if (s->chk.seen_good)
		s->chk.first_seen = s->st.last_seq + 1 - s->st.beats - s->st.gap_beats;
}

static const struct nvt_checker *fds_checker(void *state)
{
	finish(state);
	return &((struct fdrec_sink *)state)->chk;
}

static uint64_t fds_underflows(void *state)
{
	finish(state);
	return ((struct fdrec_sink *)state)->st.underflows;
}

static void fds_close(void *state)
{
	struct fdrec_sink *s = state;

	finish(s);
	close(s->fd); /* the driver unpins the buffers */
	munmap(s->mem, (size_t)FDS_NBUFS * FDS_BUF_SIZE);
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
};
