/* SPDX-License-Identifier: MIT */
/* fdrec source: the FPGA Drive Recorder's driver (/dev/fdrec0, ioctl interface in
 * stream/fdrec_uapi.h). Zero copy: every ring chunk is registered with the driver as one of its
 * buffers (recorder_ring.h), which its DMA fills with the test-pattern generator's beats in ring
 * order; a filled buffer is committed where it lies, and handed back to the driver once the
 * I/O thread has written and released it. The device drops beats in its FIFO when no buffer
 * is free (the storage fell behind and the whole ring waits to be written): every gap in the beats'
 * sequence becomes an nvt_recorder_drop() at the exact position, and at the stop the beats the
 * driver reports as lost in its FIFO are added, so the recording's drop count equals the driver's
 * drop_count. A stop (Ctrl-C, nvt_recorder_stop) stops the driver first and then takes every
 * buffer it filled before, so nothing the DMA captured is lost (the driver discards only its
 * FIFO, whose beats become drops at the end). A buffer flagged with a DMA error stops the
 * recording with that error; what came before is kept. The driver's FIFO level and high-water
 * mark go to the live stats (nvt_recorder_source_fifo). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "control/recorder_ring.h"
#include "stream/fdrec_dev.h"
#include "stream/fdrec_uapi.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"
#include "util/sysutil.h"

#define FDREC_WAIT_MS  5            /* also how soon a released chunk goes back to the driver */
#define FDREC_STATS_NS 100000000ull /* FIFO level for the live stats, every 100 ms */

struct fdsrc {
	struct nvt_recorder *r;
	const char *path;
	int fd;
	struct nvt_ring_view v;
	uint64_t taken;     /* buffers taken from the driver (ring chunk taken % nchunks) */
	uint64_t given;     /* buffers handed to the driver */
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

/* commit n beats that the driver put at p, where the recorder's current chunk is */
static bool put(struct fdsrc *s, const uint8_t *p, uint64_t n, struct nvt_err *err, int *rc)
{
	size_t room;
	/* DRAIN: the DMA already wrote these beats; a stop request still takes them */
	uint8_t *dst = nvt_recorder_acquire(s->r, &room, NVT_ACQUIRE_NOWAIT | NVT_ACQUIRE_DRAIN);

	if (!dst)
		return false; /* at a limit or failed (a free chunk is never missing: the driver
			       * filled it) */
	if (dst != p || room < n * FDREC_BEAT_BYTES) {
		if (room && room < n * FDREC_BEAT_BYTES && dst == p) {
			/* the size limit ends the recording inside this buffer */
			nvt_recorder_commit(s->r, room);
			return false;
		}
		nvt_err_set(err, EPROTO,
			    "fdrec %s: the driver filled buffer %llu out of ring order: reload the "
			    "driver",
			    s->path, (unsigned long long)((p - s->v.mem) / s->v.chunk_bytes));
		*rc = -EPROTO;
		return false;
	}
	nvt_recorder_commit(s->r, n * FDREC_BEAT_BYTES);
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
	const uint8_t *p = s->v.mem + (size_t)f->index * s->v.chunk_bytes;
	uint64_t n = f->bytes / FDREC_BEAT_BYTES, i = 0;
	int rc = 0;

	if (f->seq != s->fill_seq) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer fill sequence jumped from %llu to %llu (the driver "
			    "lost a buffer: reload the driver)",
			    s->path, (unsigned long long)s->fill_seq, (unsigned long long)f->seq);
		return -EPROTO;
	}
	s->fill_seq++;
	if (f->index != s->taken % s->v.nchunks) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: the driver returned buffer %u, ring chunk %llu was next: "
			    "reload the driver",
			    s->path, f->index, (unsigned long long)(s->taken % s->v.nchunks));
		return -EPROTO;
	}
	s->taken++;
	if (f->bytes > s->v.chunk_bytes || f->bytes % FDREC_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer %u holds %llu bytes (not whole beats within %llu): "
			    "packet framing lost",
			    s->path, f->index, (unsigned long long)f->bytes,
			    (unsigned long long)s->v.chunk_bytes);
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
		if (!run || !put(s, p + i * FDREC_BEAT_BYTES, run, err, &rc))
			return rc ? rc : 1;
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

static void fifo_stats(struct fdsrc *s, const struct fdrec_stats *st)
{
	/* the driver reports its FIFO in beats; the current level is what entered and did not
	 * leave it */
	uint64_t level = st->beats_in - st->beats_out;
	nvt_recorder_source_fifo(s->r, level <= st->fifo_depth ? level : st->fifo_depth,
				 st->fifo_hwm, st->fifo_depth);
}

static int fdrec_loop(struct fdsrc *s, const struct nvt_source_args *a, struct nvt_err *err)
{
	struct fdrec_info info;
	struct fdrec_bufs *bufs = NULL;
	struct fdrec_start st = {.flags = FDREC_START_TPG, .first_seq = a->first_seq};
	struct fdrec_stats fin;
	uint64_t next_stats = 0;
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
	bufs->count = s->v.nchunks;
	bufs->buf_size = s->v.chunk_bytes;
	bufs->flags = FDREC_DIR_RECORD;
	for (unsigned i = 0; i < s->v.nchunks; i++)
		bufs->addrs[i] = (uint64_t)(uintptr_t)(s->v.mem + (size_t)i * s->v.chunk_bytes);
	if (ioctl(s->fd, FDREC_REGISTER_BUFS, bufs)) {
		rc = sys_err(err, errno, "REGISTER_BUFS failed (buffers not pinnable?)", s->path);
		free(bufs);
		return rc;
	}
	free(bufs);
	if (ioctl(s->fd, FDREC_START, &st))
		return sys_err(err, errno, "START failed", s->path);
	s->next_seq = a->first_seq;
	s->given = s->v.nchunks; /* START hands the driver every chunk, in ring order */
	while (!rc) {
		struct fdrec_filled f = {.timeout_ms = 0};
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN};

		struct fdrec_stats st;

		if (nvt_recorder_stopping(s->r))
			break;
		if (nvt_mono_ns() >= next_stats && !ioctl(s->fd, FDREC_GET_STATS, &st)) {
			fifo_stats(s, &st);
			next_stats = nvt_mono_ns() + FDREC_STATS_NS;
		}
		if (poll(&pfd, 1, FDREC_WAIT_MS) < 0 && errno != EINTR) {
			rc = sys_err(err, errno, "poll", s->path);
			break;
		}
		/* every buffer filled so far, in fill order */
		while (!rc && !ioctl(s->fd, FDREC_WAIT_FILLED, &f))
			rc = take(s, &f, err);
		/* the chunks the storage is done with go back to the driver, in ring order */
		while (!rc && s->given < nvt_recorder_ring_released(s->r) + s->v.nchunks &&
		       s->given < s->taken + s->v.nchunks) {
			uint32_t idx = (uint32_t)(s->given % s->v.nchunks);
			if (ioctl(s->fd, FDREC_RELEASE, &idx)) {
				rc = sys_err(err, errno, "RELEASE failed", s->path);
				break;
			}
			s->given++;
		}
		if (rc)
			break;
		if (errno == EIO) {
			nvt_err_set(err, EIO,
				    "fdrec %s: the driver reports a DMA error: the recording stops "
				    "here, the data before it is kept",
				    s->path);
			rc = -EIO;
		} else if (errno != ETIMEDOUT && errno != EINTR && errno != ENODATA) {
			rc = sys_err(err, errno, "WAIT_FILLED failed", s->path);
		}
	}
	if (ioctl(s->fd, FDREC_STOP, &fin) == 0 && rc >= 0) {
		/* the driver has stopped; every buffer it filled before, and the one it was
		 * filling, is taken (take() ends at a size or duration limit); the beats its FIFO
		 * dropped after the last one recorded are drops at the end, so the recording's
		 * count is the driver's drop_count */
		struct fdrec_filled f = {.timeout_ms = 0};
		fifo_stats(s, &fin);
		while (rc == 0 && !ioctl(s->fd, FDREC_WAIT_FILLED, &f))
			rc = take(s, &f, err);
		if (rc >= 0 && fin.drop_count > s->dropped) {
			nvt_recorder_drop(s->r, fin.drop_count - s->dropped);
			s->dropped = fin.drop_count;
		}
	}
	return rc;
}

/* key=value in meta unless the caller set key; meta freed when replaced */
static char *meta_add(char *meta, const char *key, const char *value)
{
	char v[2];
	char *m;

	if (!meta || nvt_meta_get(meta, key, v, sizeof(v)) != -ENOENT)
		return meta;
	m = nvt_meta_set(meta, key, value);
	free(meta);
	return m;
}

/* The device's description for the recording's metadata: its source clock, FIFO depth,
 * interface and design versions (sysfs "version", the design's VERSION register). */
static char *fdrec_describe(const struct nvt_source_args *a, const char *meta)
{
	const char *path = *a->arg ? a->arg : FDREC_DEFAULT_DEV;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	struct fdrec_info info;
	char v[64], sys[160];
	char *m;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return NULL; /* run() says why */
	if (ioctl(fd, FDREC_GET_INFO, &info)) {
		close(fd);
		return NULL;
	}
	close(fd);
	m = strdup(meta);
	m = meta_add(m, "fdrec:device", path);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)info.src_clk_hz);
	m = meta_add(m, "fdrec:src_clk_hz", v);
	snprintf(v, sizeof(v), "%u", info.fifo_depth);
	m = meta_add(m, "fdrec:fifo_depth_beats", v);
	snprintf(v, sizeof(v), "%u", info.api_version);
	m = meta_add(m, "fdrec:api_version", v);
	snprintf(sys, sizeof(sys), "/sys/class/misc/%s/version", base);
	FILE *f = fopen(sys, "re");
	if (f) {
		if (fgets(v, sizeof(v), f)) {
			v[strcspn(v, "\r\n")] = 0;
			if (*v)
				m = meta_add(m, "fdrec:design_version", v);
		}
		fclose(f);
	}
	return m;
}

static int fdrec_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		     struct nvt_source_report *rep, struct nvt_err *err)
{
	struct fdsrc s = {
		.r = r, .path = *a->arg ? a->arg : FDREC_DEFAULT_DEV, .max_beats = UINT64_MAX};
	int rc;

	(void)rep;
	if (a->rate_bps && a->duration_ns)
		s.max_beats = (uint64_t)((unsigned __int128)a->rate_bps * a->duration_ns /
					 1000000000ull / FDREC_BEAT_BYTES);
	s.fd = nvt_fdrec_open(s.path, err);
	if (s.fd < 0)
		return s.fd;
	nvt_recorder_ring_view(r, &s.v);
	if (s.v.nchunks < 2 || s.v.nchunks > FDREC_MAX_BUFS || s.v.chunk_bytes > (62ull << 20)) {
		nvt_err_set(
			err, EINVAL,
			"fdrec %s: the driver takes 2 to %u buffers of at most 62 MiB: the ring "
			"has %u chunks of %llu bytes (give --chunks 2..%u and --chunk <= 62M)",
			s.path, FDREC_MAX_BUFS, s.v.nchunks, (unsigned long long)s.v.chunk_bytes,
			FDREC_MAX_BUFS);
		close(s.fd);
		return -EINVAL;
	}
	rc = fdrec_loop(&s, a, err);
	close(s.fd); /* the driver stops and unpins on close */
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
	.describe = fdrec_describe,
};
