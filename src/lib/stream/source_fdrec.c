/* SPDX-License-Identifier: MIT */
/* fdrec source: the FPGA Drive Recorder's driver (/dev/fdrec0, FDREC_API_VERSION 1, ioctl
 * interface in stream/fdrec_uapi.h, docs/fdrec-abi.md). Zero copy: every ring chunk is registered
 * with the driver as one of its buffers (recorder_ring.h), which its DMA fills with the
 * test-pattern generator's beats in ring order; a filled buffer is committed where it lies, and
 * handed back (RELEASE) once the I/O thread has written it. START resets the device: the
 * generator starts at the first_seq it returns (0), at the start_time_ns it returns; both, the
 * programmed rate (SET_RATE), the source clock and the design version (GET_INFO) go into the
 * header. The device drops beats in its FIFO when no buffer is free (the storage fell behind):
 * every buffer comes with the FIFO's drop counter at its completion (cumulative since START),
 * and each jump in the beats' sequence that counter covers becomes an nvt_recorder_drop() at
 * its exact position; what the counter holds beyond the gaps by the end of the last buffer
 * recorded is added at the end, so the recording's count is the driver's, as its own recorder
 * writes it. STOP discards the buffers not collected yet: a stop takes every filled buffer
 * first. A buffer flagged with a DMA error or cut short stops the recording with that error;
 * what came before is kept. The FIFO level and high-water mark go to the live stats. */
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
	struct fdrec_info info;
	struct nvt_ring_view v;
	uint64_t taken;     /* buffers taken from the driver (ring chunk taken % nchunks) */
	uint64_t given;     /* buffers handed to the driver */
	uint64_t next_seq;  /* seq of the next beat expected */
	uint64_t fill_seq;  /* the driver's next buffer fill number */
	uint64_t beats;     /* beats delivered + dropped so far */
	uint64_t max_beats; /* duration limit in beats (paced), UINT64_MAX = none */
	uint64_t dropped;   /* beats reported as dropped */
	uint64_t dev_drops; /* the driver's drop count when the last buffer taken whole completed */
	uint64_t odd_jumps; /* jumps in seq the driver did not count as drops */
	uint64_t rate_bps;  /* the rate the generator was programmed with, 0 = left as it was */
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

/* the seq of a well-formed beat {seq, ~seq}; false for a beat that is not the pattern */
static bool beat_seq(const uint8_t *p, uint64_t *seq)
{
	uint64_t w[2];
	memcpy(w, p, sizeof(w));
	*seq = w[0];
	return w[1] == ~w[0];
}

/* Before beat b: a jump in seq is a drop there as far as the driver counted beats lost in its
 * FIFO by the time the buffer completed (avail); the rest of it, or a jump back, is not a FIFO
 * drop (beats repeated or lost after the FIFO) and stays in the data for verify to report. */
static void resync(struct fdsrc *s, uint64_t seq, uint64_t *avail)
{
	uint64_t jump = seq > s->next_seq ? seq - s->next_seq : 0,
		 d = jump < *avail ? jump : *avail;

	if (d) {
		*avail -= d;
		drop(s, d);
	}
	if (d < jump || !jump)
		s->odd_jumps++;
	s->next_seq = seq;
}

/* one filled buffer: runs that continue the sequence go to the ring, each jump is placed
 * where it is, a drop when the driver's FIFO counter covers it; 0, 1 at a limit, -errno */
static int take(struct fdsrc *s, const struct fdrec_filled *f, struct nvt_err *err)
{
	const uint8_t *p;
	uint64_t n = f->bytes / FDREC_BEAT_BYTES, i = 0, seq;
	uint64_t avail = f->drop_count > s->dropped ? f->drop_count - s->dropped : 0;
	int rc = 0;

	if (f->drop_count < s->dev_drops) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: the driver's FIFO drop count went back from %llu to %llu "
			    "(another program restarted the device?): the recording stops here",
			    s->path, (unsigned long long)s->dev_drops,
			    (unsigned long long)f->drop_count);
		return -EPROTO;
	}
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
	p = s->v.mem + (size_t)f->index * s->v.chunk_bytes;
	if (f->bytes > s->v.chunk_bytes || f->bytes % FDREC_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer %u holds %llu bytes (not whole beats within %llu): "
			    "packet framing lost",
			    s->path, f->index, (unsigned long long)f->bytes,
			    (unsigned long long)s->v.chunk_bytes);
		return -EPROTO;
	}
	/* The common case: the FIFO lost nothing since the last buffer and the buffer's first and
	 * last beats continue the sequence: it goes to the ring whole, its beats unread (a beat
	 * inside that is not the pattern stays data either way, for verify to report) */
	bool whole = !avail && n && beat_seq(p, &seq) && seq == s->next_seq &&
		     beat_seq(p + (n - 1) * FDREC_BEAT_BYTES, &seq) && seq == s->next_seq + n - 1;
	while (i < n) {
		uint64_t run = whole ? n : 1;

		if (!whole && beat_seq(p + i * FDREC_BEAT_BYTES, &seq) && seq != s->next_seq)
			resync(s, seq, &avail);
		/* the run from here: beats that continue the sequence, and beats that are not
		 * the pattern at all (kept as data: verify reports them) */
		while (i + run < n && (!beat_seq(p + (i + run) * FDREC_BEAT_BYTES, &seq) ||
				       seq == s->next_seq + run))
			run++;
		if (s->max_beats != UINT64_MAX && s->beats + run > s->max_beats)
			run = s->beats < s->max_beats ? s->max_beats - s->beats : 0;
		if (!run || !put(s, p + i * FDREC_BEAT_BYTES, run, err, &rc))
			return rc ? rc : 1;
		s->beats += run;
		s->next_seq += run;
		i += run;
		if (s->max_beats != UINT64_MAX && s->beats >= s->max_beats && i < n)
			return 1;
	}
	s->dev_drops = f->drop_count; /* the buffer is in the recording whole */
	if (f->flags & FDREC_FILLED_ERROR) {
		nvt_err_set(
			err, EIO,
			"fdrec %s: DMA error reported for buffer %u (fill #%llu): the recording "
			"stops here, the data before it is kept; check the design's DMA and "
			"reload the driver",
			s->path, f->index, (unsigned long long)f->seq);
		return -EIO;
	}
	if ((f->flags & FDREC_FILLED_SHORT) || f->bytes != s->v.chunk_bytes) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: buffer %u holds %llu of %llu bytes: the packet ended early "
			    "(PKT_LEN is not the buffer size: another program reprogrammed the "
			    "device?); the recording stops here, the data before it is kept",
			    s->path, f->index, (unsigned long long)f->bytes,
			    (unsigned long long)s->v.chunk_bytes);
		return -EPROTO;
	}
	if (s->max_beats != UINT64_MAX && s->beats >= s->max_beats)
		return 1;
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

/* WAIT_FILLED once: 0 and f filled, -errno (a buffer with a DMA error comes with -EIO and f
 * filled: *got says whether f holds a buffer) */
static int wait_filled(struct fdsrc *s, struct fdrec_filled *f, bool *got)
{
	memset(f, 0, sizeof(*f));
	f->timeout_ms = 0;
	f->index = UINT32_MAX;
	if (!ioctl(s->fd, FDREC_IOC_WAIT_FILLED, f)) {
		*got = true;
		return 0;
	}
	int e = errno;
	*got = e == EIO && f->index != UINT32_MAX;
	return -e;
}

/* every buffer the driver has filled so far, in fill order; 0 when none is left now, 1 at a
 * limit, -errno */
static int take_ready(struct fdsrc *s, struct nvt_err *err)
{
	for (;;) {
		struct fdrec_filled f;
		bool got;
		int rc = wait_filled(s, &f, &got);

		if (got) {
			int t = take(s, &f, err);
			if (t)
				return t;
			if (rc == -EIO) {
				nvt_err_set(
					err, EIO,
					"fdrec %s: the driver reports a DMA error: the recording "
					"stops here, the data before it is kept",
					s->path);
				return -EIO;
			}
			continue;
		}
		if (rc == -ETIMEDOUT || rc == -EINTR || rc == -ENODATA)
			return 0;
		if (rc == -EIO) {
			nvt_err_set(err, EIO,
				    "fdrec %s: the driver reports a DMA error: the recording stops "
				    "here, the data before it is kept; check the design's DMA and "
				    "reload the driver",
				    s->path);
			return -EIO;
		}
		return sys_err(err, -rc, "WAIT_FILLED failed", s->path);
	}
}

/* the ring as the driver's buffers: 2 to max_bufs chunks, each a multiple of the driver's
 * alignment up to its largest buffer, at an address on that alignment */
static int check_ring(struct fdsrc *s, struct nvt_err *err)
{
	uint64_t align = s->info.buf_align ? s->info.buf_align : FDREC_BUF_ALIGN;
	uint64_t max_size = s->info.max_buf_size ? s->info.max_buf_size : FDREC_MAX_BUF_SIZE;
	unsigned max_bufs = s->info.max_bufs && s->info.max_bufs < FDREC_MAX_BUFS ? s->info.max_bufs
										  : FDREC_MAX_BUFS;

	if (max_size > FDREC_MAX_PKT_LEN * (uint64_t)FDREC_BEAT_BYTES)
		max_size = FDREC_MAX_PKT_LEN * (uint64_t)FDREC_BEAT_BYTES;
	if (s->v.nchunks < 2 || s->v.nchunks > max_bufs) {
		nvt_err_param(err,
			      "fdrec %s: the driver takes 2 to %u buffers, one per ring chunk: the "
			      "ring has %u; give --chunks 2..%u",
			      s->path, max_bufs, s->v.nchunks, max_bufs);
		return -EINVAL;
	}
	if (s->v.chunk_bytes % align || s->v.chunk_bytes > max_size) {
		nvt_err_param(
			err,
			"fdrec %s: the driver takes buffers of a multiple of %llu KiB up to "
			"%llu MiB: the ring's chunk is %llu bytes; give --chunk as a multiple "
			"of %lluK, at most %lluM",
			s->path, (unsigned long long)(align >> 10),
			(unsigned long long)(max_size >> 20), (unsigned long long)s->v.chunk_bytes,
			(unsigned long long)(align >> 10), (unsigned long long)(max_size >> 20));
		return -EINVAL;
	}
	if ((uintptr_t)s->v.mem % align) {
		nvt_err_set(err, EINVAL,
			    "fdrec %s: the ring is not on a %llu KiB boundary, which the driver "
			    "needs for its DMA: it is in ordinary memory; reserve 2 MiB "
			    "hugepages for it (echo N > /proc/sys/vm/nr_hugepages, N = %llu)",
			    s->path, (unsigned long long)(align >> 10),
			    (unsigned long long)((uint64_t)s->v.nchunks * s->v.chunk_bytes >> 21));
		return -EINVAL;
	}
	return 0;
}

static int register_ring(struct fdsrc *s, struct nvt_err *err)
{
	uint64_t *addrs = calloc(s->v.nchunks, sizeof(*addrs));
	struct fdrec_bufs b = {
		.buf_size = s->v.chunk_bytes, .count = s->v.nchunks, .flags = FDREC_DIR_RECORD};
	int e = 0;

	if (!addrs)
		return sys_err(err, ENOMEM, "buffer table", s->path);
	for (unsigned i = 0; i < s->v.nchunks; i++)
		addrs[i] = (uint64_t)(uintptr_t)(s->v.mem + (size_t)i * s->v.chunk_bytes);
	b.addrs = (uint64_t)(uintptr_t)addrs;
	if (ioctl(s->fd, FDREC_IOC_REGISTER_BUFS, &b))
		e = errno;
	free(addrs);
	if (!e)
		return 0;
	if (e == E2BIG)
		nvt_err_set(err, e,
			    "fdrec %s: the ring's %u chunks need more DMA descriptors than the "
			    "channel has (511): it is in ordinary memory; reserve 2 MiB hugepages "
			    "for it (/proc/sys/vm/nr_hugepages) or give fewer --chunks",
			    s->path, s->v.nchunks);
	else if (e == EBUSY)
		nvt_err_set(err, e, "fdrec %s: REGISTER_BUFS refused: the device is running",
			    s->path);
	else
		nvt_err_set(err, e,
			    "fdrec %s: REGISTER_BUFS of %u x %llu bytes failed: %s (buffers not "
			    "pinnable, or beyond the DMA's reach: see the kernel log)",
			    s->path, s->v.nchunks, (unsigned long long)s->v.chunk_bytes,
			    strerror(e));
	return -e;
}

/* the generator at the asked rate; the rate it was programmed with is the recording's */
static int set_rate(struct fdsrc *s, uint64_t asked, struct nvt_err *err)
{
	struct fdrec_rate rt = {.rate_bps = asked};

	if (!asked)
		return 0;
	if (ioctl(s->fd, FDREC_IOC_SET_RATE, &rt))
		return sys_err(err, errno, "the device refused the --rate (SET_RATE)", s->path);
	if (!rt.rate_bps) {
		nvt_err_param(err,
			      "fdrec %s: the generator cannot run at %llu bytes/s (it was "
			      "programmed with 0: source clock %llu Hz); give a higher --rate",
			      s->path, (unsigned long long)asked,
			      (unsigned long long)s->info.src_clk_hz);
		return -EINVAL;
	}
	if (rt.rate_bps != asked)
		nvt_recorder_say(
			s->r,
			"fdrec %s: the generator runs at %llu bytes/s, the rate the driver "
			"programmed for the %llu asked for (its source clock: %llu Hz); "
			"the recording's rate is the one programmed",
			s->path, (unsigned long long)rt.rate_bps, (unsigned long long)asked,
			(unsigned long long)s->info.src_clk_hz);
	s->rate_bps = rt.rate_bps;
	return 0;
}

static int get_info(struct fdsrc *s, struct nvt_err *err)
{
	memset(&s->info, 0, sizeof(s->info));
	if (ioctl(s->fd, FDREC_IOC_GET_INFO, &s->info))
		return sys_err(err, errno, "GET_INFO failed (not an fdrec device?)", s->path);
	if (s->info.api_version != FDREC_API_VERSION) {
		nvt_err_set(err, EPROTONOSUPPORT,
			    "fdrec %s: the driver speaks API version %u, nvtape speaks version %u "
			    "(the FPGA Drive Recorder driver of docs/fdrec-abi.md): install that "
			    "driver, or an nvtape built for API version %u",
			    s->path, s->info.api_version, FDREC_API_VERSION, s->info.api_version);
		return -EPROTONOSUPPORT;
	}
	if ((s->info.caps & (FDREC_CAP_S2MM | FDREC_CAP_TPG)) != (FDREC_CAP_S2MM | FDREC_CAP_TPG)) {
		nvt_err_set(err, EOPNOTSUPP,
			    "fdrec %s: the device cannot record its test pattern (capabilities "
			    "0x%x: record (S2MM, 0x%x) and the generator (TPG, 0x%x) are needed)",
			    s->path, s->info.caps, FDREC_CAP_S2MM, FDREC_CAP_TPG);
		return -EOPNOTSUPP;
	}
	if (s->info.beat_bytes && s->info.beat_bytes != FDREC_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: the device's beat is %u bytes, nvtape records 16-byte beats",
			    s->path, s->info.beat_bytes);
		return -EPROTO;
	}
	return 0;
}

/* give back, in ring order, the chunks the storage is done with */
static int give_back(struct fdsrc *s, struct nvt_err *err)
{
	while (s->given < nvt_recorder_ring_released(s->r) + s->v.nchunks &&
	       s->given < s->taken + s->v.nchunks) {
		struct fdrec_release rel = {.index = (uint32_t)(s->given % s->v.nchunks)};
		if (ioctl(s->fd, FDREC_IOC_RELEASE, &rel))
			return sys_err(err, errno, "RELEASE failed", s->path);
		s->given++;
	}
	return 0;
}

static int fdrec_loop(struct fdsrc *s, const struct nvt_source_args *a, struct nvt_err *err)
{
	struct fdrec_start st = {.flags = FDREC_START_TPG};
	struct fdrec_stats fin;
	uint64_t next_stats = 0;
	int rc;

	rc = get_info(s, err);
	if (!rc)
		rc = check_ring(s, err);
	if (!rc)
		rc = set_rate(s, a->rate_bps, err);
	if (!rc)
		rc = register_ring(s, err);
	if (rc)
		return rc;
	if (s->rate_bps && a->duration_ns)
		s->max_beats = (uint64_t)((unsigned __int128)s->rate_bps * a->duration_ns /
					  1000000000ull / FDREC_BEAT_BYTES);
	if (ioctl(s->fd, FDREC_IOC_START, &st))
		return sys_err(err, errno, "START failed", s->path);
	if (st.pkt_len != s->v.chunk_bytes / FDREC_BEAT_BYTES) {
		nvt_err_set(err, EPROTO,
			    "fdrec %s: the driver set a packet of %u beats for buffers of %llu "
			    "bytes (%llu beats): its buffers would not be filled whole",
			    s->path, st.pkt_len, (unsigned long long)s->v.chunk_bytes,
			    (unsigned long long)(s->v.chunk_bytes / FDREC_BEAT_BYTES));
		ioctl(s->fd, FDREC_IOC_STOP, &fin);
		return -EPROTO;
	}
	/* the generator's first beat, the time it started: the driver's, into the header */
	s->next_seq = st.first_seq;
	nvt_recorder_source_stamp(s->r, &(struct nvt_source_stamp){
						.first_seq = st.first_seq,
						.start_ns = st.start_time_ns,
						.rate_bps = s->rate_bps,
						.src_clk_hz = s->info.src_clk_hz,
						.design_version = s->info.hw_version,
					});
	s->given = s->v.nchunks; /* START hands the driver every chunk, in ring order */
	while (!rc && !nvt_recorder_stopping(s->r)) {
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
		struct fdrec_stats now;

		if (nvt_mono_ns() >= next_stats && !ioctl(s->fd, FDREC_IOC_GET_STATS, &now)) {
			fifo_stats(s, &now);
			next_stats = nvt_mono_ns() + FDREC_STATS_NS;
		}
		if (poll(&pfd, 1, FDREC_WAIT_MS) < 0 && errno != EINTR) {
			rc = sys_err(err, errno, "poll", s->path);
			break;
		}
		rc = take_ready(s, err);
		if (!rc)
			rc = give_back(s, err);
	}
	/* STOP discards the buffers not yet collected: every one filled by now is taken first
	 * (take() ends at a size or duration limit) */
	if (rc == 0)
		rc = take_ready(s, err);
	if (ioctl(s->fd, FDREC_IOC_STOP, &fin) == 0)
		fifo_stats(s, &fin);
	if (rc >= 0 && s->dev_drops > s->dropped) {
		/* the driver counted more beats lost by the end of the last buffer recorded whole
		 * than its gaps show: lost after its last beat (the recording's count is the
		 * driver's, as its own recorder writes it) */
		nvt_recorder_drop(s->r, s->dev_drops - s->dropped);
		s->dropped = s->dev_drops;
	}
	if (rc >= 0 && s->odd_jumps)
		nvt_recorder_say(s->r,
				 "fdrec %s: %llu jumps in the beats' sequence were not drops the "
				 "device counted: they stay in the data (verify reports them)",
				 s->path, (unsigned long long)s->odd_jumps);
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
 * interface version and design version (the VERSION register, major.minor), from GET_INFO. */
static char *fdrec_describe(const struct nvt_source_args *a, const char *meta)
{
	const char *path = *a->arg ? a->arg : FDREC_DEFAULT_DEV;
	struct fdrec_info info;
	char v[64];
	char *m;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return NULL; /* run() says why */
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, FDREC_IOC_GET_INFO, &info) || info.api_version != FDREC_API_VERSION) {
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
	snprintf(v, sizeof(v), "%u.%u", info.hw_version >> 16, info.hw_version & 0xffffu);
	m = meta_add(m, "fdrec:design_version", v);
	return m;
}

/* what can be refused before the device is opened: a ring no fdrec driver takes (the
 * driver's own limits, from GET_INFO, are checked again once it is open) */
static int fdrec_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	if (a->chunk_bytes &&
	    (a->chunk_bytes % FDREC_BUF_ALIGN || a->chunk_bytes > FDREC_MAX_BUF_SIZE)) {
		nvt_err_param(err,
			      "--source fdrec: the driver's buffers are a multiple of 2 MiB up to "
			      "62 MiB, one per ring chunk: --chunk %llu is not; give e.g. --chunk "
			      "8M",
			      (unsigned long long)a->chunk_bytes);
		return -EINVAL;
	}
	if (a->chunks && (a->chunks < 2 || a->chunks > FDREC_MAX_BUFS)) {
		nvt_err_param(err,
			      "--source fdrec: the driver takes 2 to %u buffers, one per ring "
			      "chunk: --chunks %u is not; give --chunks 2..%u",
			      FDREC_MAX_BUFS, a->chunks, FDREC_MAX_BUFS);
		return -EINVAL;
	}
	return 0;
}

static int fdrec_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		     struct nvt_source_report *rep, struct nvt_err *err)
{
	struct fdsrc s = {
		.r = r, .path = *a->arg ? a->arg : FDREC_DEFAULT_DEV, .max_beats = UINT64_MAX};
	int rc;

	(void)rep;
	s.fd = nvt_fdrec_open(s.path, err);
	if (s.fd < 0)
		return s.fd;
	nvt_recorder_ring_view(r, &s.v);
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
	.check = fdrec_check,
	.run = fdrec_run,
	.describe = fdrec_describe,
};
