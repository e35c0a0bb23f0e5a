/* SPDX-License-Identifier: MIT */
/* fdrec source: the FPGA Drive Recorder's driver (/dev/fdrec0, ioctl interface in
 * tests/vm/fdrec_emu/fdrec_uapi.h). nvtape registers its own page-aligned buffers with the
 * driver, which DMAs the test-pattern generator's beats into them; each filled buffer is taken
 * in fill order, copied into the ring and handed back to the driver at once, so the driver
 * always owns every buffer but the one being copied. The device drops beats in its FIFO when
 * no buffer is free: every gap in the beats' sequence becomes an nvt_recorder_drop() at the
 * exact position, and at the stop the beats the driver reports as lost in its FIFO are added,
 * so the recording's drop count equals the driver's drop_count. A buffer flagged with a DMA
 * error stops the recording with that error; what came before is kept. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stream/fdrec_uapi.h"
#include "nvtape/format.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"

#define FDREC_DEFAULT_DEV "/dev/fdrec0"
#define FDREC_NBUFS       8
#define FDREC_BUF_SIZE    (1u << 20)
#define FDREC_WAIT_MS     100

struct fdsrc {
	struct nvt_recorder *r;
	const char *path;
	int fd;
	uint8_t *mem;
	uint64_t next_seq;  /* seq of the next beat expected */
	uint64_t fill_seq;  /* the driver's next buffer fill number */
	uint64_t beats;     /* beats delivered + dropped so far */
	uint64_t max_beats; /* duration limit in beats (paced), UINT64_MAX = none */
	uint64_t dropped;   /* beats reported as dropped */
};

static int sys_err(struct nvt_err *err, int e, const char *what, const char *path)
{
	nvt_err_set(err, e, "fdrec %s: %s: %s", path, what, strerror(e));
	return -e;
}

/* copy beats into the ring (waits for a free chunk: the driver's FIFO, not the ring, drops) */
static bool put(struct fdsrc *s, const uint8_t *p, uint64_t n)
{
	while (n) {
		size_t room;
		uint8_t *dst = nvt_recorder_acquire(s->r, &room, NVT_ACQUIRE_NOWAIT);
		uint64_t k;

		if (!dst && errno == EAGAIN) {
			/* no chunk free: the device's buffers wait, and its FIFO drops instead */
			dst = nvt_recorder_acquire(s->r, &room, 0);
		}
		if (!dst)
			return false;
		k = n * FDREC_BEAT_BYTES < room ? n : room / FDREC_BEAT_BYTES;
		memcpy(dst, p, k * FDREC_BEAT_BYTES);
		nvt_recorder_commit(s->r, k * FDREC_BEAT_BYTES);
		p += k * FDREC_BEAT_BYTES;
		n -= k;
	}
	return true;
}

static void drop(struct fdsrc *s, uint64_t n)
{
	if (!n)
		return;
	nvt_recorder_drop(s->r, n);
	s->dropped += n;
	s->beats += n;
}

static uint64_t beat_seq(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* one filled buffer: contiguous runs go to the ring, each jump in seq is a drop there */
static int take(struct fdsrc *s, const struct fdrec_filled *f, struct nvt_err *err)
{
	const uint8_t *p = s->mem + (size_t)f->index * FDREC_BUF_SIZE;
	uint64_t n = f->bytes / FDREC_BEAT_BYTES, i = 0;

	if (f->seq != s->fill_seq) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer fill sequence jumped from %llu to %llu (the driver "
			    "lost a buffer: reload the driver)",
			    s->path, (unsigned long long)s->fill_seq, (unsigned long long)f->seq);
		return -EPROTO;
	}
	s->fill_seq++;
	if (f->bytes > FDREC_BUF_SIZE || f->bytes % FDREC_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer %u holds %llu bytes (not whole beats within %u): "
			    "packet framing lost",
			    s->path, f->index, (unsigned long long)f->bytes, FDREC_BUF_SIZE);
		return -EPROTO;
	}
	while (i < n) {
		uint64_t seq = beat_seq(p + i * FDREC_BEAT_BYTES), run = 1;

		if (seq > s->next_seq) /* beats the FIFO dropped */
			drop(s, seq - s->next_seq);
		/* the run of consecutive beats from here (a beat failing the pattern ends it and
		 * is kept as data: verify reports it) */
		while (i + run < n && beat_seq(p + (i + run) * FDREC_BEAT_BYTES) == seq + run)
			run++;
		if (s->max_beats != UINT64_MAX && s->beats + run > s->max_beats)
			run = s->beats < s->max_beats ? s->max_beats - s->beats : 0;
		if (!run || !put(s, p + i * FDREC_BEAT_BYTES, run))
			return 1;
		s->beats += run;
		s->next_seq = seq + run;
		i += run;
		if (s->max_beats != UINT64_MAX && s->beats >= s->max_beats)
			return 1;
	}
	if (f->flags & FDREC_FILLED_ERROR) {
		nvt_err_set(
			err, EIO,
			"fdrec %s: DMA error reported for buffer %u (fill #%llu): the recording "
			"stops here, the data before it is kept; check the design's DMA and "
			"reload the driver",
			s->path, f->index, (unsigned long long)f->seq);
		return -EIO;
	}
	return 0;
}

static int fdrec_loop(struct fdsrc *s, const struct nvt_source_args *a, struct nvt_err *err)
{
	struct fdrec_info info;
	struct fdrec_bufs *bufs = NULL;
	struct fdrec_start st = {.flags = FDREC_START_TPG, .first_seq = a->first_seq};
	struct fdrec_stats fin;
	int rc = 0;

	if (ioctl(s->fd, FDREC_GET_INFO, &info))
		return sys_err(err, errno, "GET_INFO failed (not an fdrec device?)", s->path);
	if (info.api_version != FDREC_API_VERSION || !(info.caps & FDREC_CAP_S2MM) ||
	    !(info.caps & FDREC_CAP_TPG)) {
		nvt_err_set(err, ENODEV,
			    "fdrec %s: driver API version %u, capabilities 0x%x: nvtape needs API "
			    "version %u with record (S2MM) and the test pattern generator",
			    s->path, info.api_version, info.caps, FDREC_API_VERSION);
		return -ENODEV;
	}
	if (a->rate_bps && ioctl(s->fd, FDREC_SET_RATE, &a->rate_bps))
		return sys_err(err, errno, "the device refused the --rate", s->path);
	bufs = calloc(1, sizeof(*bufs));
	if (!bufs)
		return sys_err(err, ENOMEM, "buffer table", s->path);
	bufs->count = FDREC_NBUFS;
	bufs->buf_size = FDREC_BUF_SIZE;
	bufs->flags = FDREC_DIR_RECORD;
	for (unsigned i = 0; i < FDREC_NBUFS; i++)
		bufs->addrs[i] = (uint64_t)(uintptr_t)(s->mem + (size_t)i * FDREC_BUF_SIZE);
	if (ioctl(s->fd, FDREC_REGISTER_BUFS, bufs)) {
		rc = sys_err(err, errno, "REGISTER_BUFS failed (buffers not pinnable?)", s->path);
		free(bufs);
		return rc;
	}
	free(bufs);
	if (ioctl(s->fd, FDREC_START, &st))
		return sys_err(err, errno, "START failed", s->path);
	s->next_seq = a->first_seq;
	while (!rc) {
		struct fdrec_filled f = {.timeout_ms = 0};
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN};

		if (nvt_recorder_stopping(s->r))
			break;
		if (poll(&pfd, 1, FDREC_WAIT_MS) < 0 && errno != EINTR) {
			rc = sys_err(err, errno, "poll", s->path);
			break;
		}
		/* every buffer filled so far, in fill order */
		while (!rc && !ioctl(s->fd, FDREC_WAIT_FILLED, &f)) {
			rc = take(s, &f, err);
			if (ioctl(s->fd, FDREC_RELEASE, &f.index) && !rc)
				rc = sys_err(err, errno, "RELEASE failed", s->path);
		}
		if (!rc && errno == EIO) {
			nvt_err_set(err, EIO,
				    "fdrec %s: the driver reports a DMA error: the recording stops "
				    "here, the data before it is kept",
				    s->path);
			rc = -EIO;
		} else if (!rc && errno != ETIMEDOUT && errno != EINTR && errno != ENODATA) {
			rc = sys_err(err, errno, "WAIT_FILLED failed", s->path);
		}
	}
	if (ioctl(s->fd, FDREC_STOP, &fin) == 0 && rc >= 0) {
		/* at a stop the driver hands over the buffer it was filling (when the recording
		 * still takes data); the beats its FIFO dropped after the last one recorded are
		 * drops at the end, so the recording's count is the driver's drop_count */
		struct fdrec_filled f = {.timeout_ms = 0};
		while (rc == 0 && !nvt_recorder_stopping(s->r) &&
		       !ioctl(s->fd, FDREC_WAIT_FILLED, &f)) {
			rc = take(s, &f, err);
			ioctl(s->fd, FDREC_RELEASE, &f.index);
		}
		if (rc >= 0 && fin.drop_count > s->dropped) {
			nvt_recorder_drop(s->r, fin.drop_count - s->dropped);
			s->dropped = fin.drop_count;
		}
	}
	return rc;
}

static int fdrec_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		     struct nvt_source_report *rep, struct nvt_err *err)
{
	struct fdsrc s = {
		.r = r, .path = *a->arg ? a->arg : FDREC_DEFAULT_DEV, .max_beats = UINT64_MAX};
	size_t len = (size_t)FDREC_NBUFS * FDREC_BUF_SIZE;
	int rc;

	(void)rep;
	if (a->rate_bps && a->duration_ns)
		s.max_beats = (uint64_t)((unsigned __int128)a->rate_bps * a->duration_ns /
					 1000000000ull / FDREC_BEAT_BYTES);
	s.fd = open(s.path, O_RDWR | O_CLOEXEC);
	if (s.fd < 0) {
		int e = errno;
		if (e == EBUSY)
			nvt_err_set(
				err, e,
				"fdrec %s is in use: the driver takes one opener at a time; stop "
				"the other recorder or player first",
				s.path);
		else
			nvt_err_set(err, e, "cannot open fdrec %s: %s (is the driver loaded?)",
				    s.path, strerror(e));
		return -e;
	}
	s.mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		     -1, 0);
	if (s.mem == MAP_FAILED) {
		rc = sys_err(err, errno, "cannot map the DMA buffers", s.path);
		close(s.fd);
		return rc;
	}
	rc = fdrec_loop(&s, a, err);
	close(s.fd); /* the driver stops and unpins on close */
	munmap(s.mem, len);
	if (rc == 1)
		return s.max_beats != UINT64_MAX && s.beats >= s.max_beats ? NVT_SOURCE_AT_LIMIT
									   : 0;
	return rc;
}

const struct nvt_source_ops nvt_source_fdrec = {
	.name = "fdrec",
	.help = "the FPGA Drive Recorder's driver (fdrec[:/dev/fdrec0]): its test-pattern "
		"generator through the driver's buffers; the device's FIFO drops are counted and "
		"indexed at their exact positions",
	.kind = NVT_SRC_FDREC,
	.unit_bytes = FDREC_BEAT_BYTES,
	.caps = NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_PACED | NVT_SOURCE_PATTERN,
	.run = fdrec_run,
};
