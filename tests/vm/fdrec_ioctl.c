/* SPDX-License-Identifier: MIT */
/* fdrec_ioctl: every ioctl of the FPGA Drive Recorder's driver, called directly on the guest's
 * emulation (tests/vm/fdrec_emu), with the driver's documented results and error codes: one
 * opener, GET_INFO's fields, the calls before any registration, REGISTER_BUFS' limits, START's
 * first_seq 0 and counter reset, WAIT_FILLED / RELEASE / poll() / STOP, injected drops and DMA
 * errors, SET_RATE's rounding, the play side with its checker, and the counters a close resets.
 * It needs the emulation's test hooks (sysfs inject_drops, inject_dma_error) and 4 free 2 MB
 * hugepages. Prints one line per step ("ok ..." or "FAIL ..."); exit 0 only if all passed.
 * Usage: fdrec_ioctl [DEVICE [SYSFS_DIR]]   (defaults /dev/fdrec0, /sys/class/misc/fdrec0) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fdrec_uapi.h"

#define NB  4
#define BSZ ((__u64)FDREC_BUF_ALIGN)

static const char *dev = "/dev/fdrec0", *sys = "/sys/class/misc/fdrec0";
static int fails;
static uint8_t *mem;
static __u64 addrs[FDREC_MAX_BUFS];

static void check(int ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s", ok ? "ok" : "FAIL", what);
	if (!ok) {
		fails++;
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
}

/* ioctl expected to fail with want */
static void fails_with(int fd, unsigned long cmd, void *arg, int want, const char *what)
{
	int rc = ioctl(fd, cmd, arg), e = errno;

	check(rc < 0 && e == want, what, "rc %d errno %s, want %s", rc, rc ? strerror(e) : "-",
	      strerror(want));
}

static int call(int fd, unsigned long cmd, void *arg, const char *what)
{
	int rc = ioctl(fd, cmd, arg);

	if (rc)
		check(0, what, "%s", strerror(errno));
	return rc;
}

static __u64 sysfs_u64(const char *attr)
{
	char p[256], b[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", sys, attr);
	f = fopen(p, "r");
	if (!f || !fgets(b, sizeof(b), f)) {
		check(0, attr, "cannot read %s", p);
		if (f)
			fclose(f);
		return UINT64_MAX;
	}
	fclose(f);
	return strtoull(b, NULL, 0);
}

static void sysfs_put(const char *attr, const char *v)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", sys, attr);
	f = fopen(p, "w");
	if (!f || fputs(v, f) < 0 || fclose(f))
		check(0, attr, "cannot write %s to %s", v, p);
}

static void msleep(unsigned ms)
{
	struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&t, NULL);
}

static __u64 seq_at(const uint8_t *b, __u64 beat)
{
	__u64 s;
	memcpy(&s, b + beat * FDREC_BEAT_BYTES, 8);
	return s;
}

/* beats of a buffer that break the pattern, and sequence numbers skipped inside it */
static void scan(const uint8_t *b, __u64 bytes, __u64 *bad, __u64 *skipped)
{
	for (__u64 i = 0; i < bytes / FDREC_BEAT_BYTES; i++) {
		__u64 s, c;
		memcpy(&s, b + i * 16, 8);
		memcpy(&c, b + i * 16 + 8, 8);
		if (c != ~s)
			(*bad)++;
		if (i && s != seq_at(b, i - 1) + 1)
			*skipped += s - seq_at(b, i - 1) - 1;
	}
}

static int reg(int fd, unsigned count, __u64 size, uint32_t flags, const __u64 *a)
{
	struct fdrec_bufs r = {
		.addrs = (__u64)(uintptr_t)a, .buf_size = size, .count = count, .flags = flags};
	return ioctl(fd, FDREC_IOC_REGISTER_BUFS, &r);
}

static void reg_fails(int fd, unsigned count, __u64 size, uint32_t flags, const __u64 *a, int want,
		      const char *what)
{
	int rc = reg(fd, count, size, flags, a), e = errno;

	check(rc < 0 && e == want, what, "rc %d errno %s, want %s", rc, rc ? strerror(e) : "-",
	      strerror(want));
}

static void info_checks(int fd)
{
	struct fdrec_info in;
	char want[32], got[32] = "";
	char p[256];
	FILE *f;

	memset(&in, 0xa5, sizeof(in));
	if (call(fd, FDREC_IOC_GET_INFO, &in, "GET_INFO"))
		return;
	check(in.api_version == FDREC_API_VERSION, "GET_INFO api_version 1", "%u", in.api_version);
	check(in.beat_bytes == 16 && in.max_bufs == 64, "GET_INFO beat_bytes 16, max_bufs 64",
	      "%u %u", in.beat_bytes, in.max_bufs);
	check(in.caps == (FDREC_CAP_TPG | FDREC_CAP_S2MM | FDREC_CAP_MM2S | FDREC_CAP_CHECK) &&
		      in.caps == 0xf,
	      "GET_INFO caps TPG=1 S2MM=2 MM2S=4 CHECK=8", "0x%x", in.caps);
	check(in.buf_align == 2u << 20 && in.max_buf_size == 62ull << 20,
	      "GET_INFO buf_align 2 MB, max_buf_size 62 MB",
	      "%llu"
	      " %llu",
	      in.buf_align, in.max_buf_size);
	check(in.max_sg_len >= in.buf_align - 1 && in.fifo_depth == sysfs_u64("fifo_depth"),
	      "GET_INFO max_sg_len, fifo_depth (= sysfs)", "%u %u", in.max_sg_len, in.fifo_depth);
	check(in.src_clk_hz && in.src_clk_hz == sysfs_u64("src_clk_hz") && in.dp_clk_hz &&
		      in.dp_clk_hz == sysfs_u64("dp_clk_hz"),
	      "GET_INFO src_clk_hz, dp_clk_hz (= sysfs)",
	      "%llu"
	      " %llu",
	      in.src_clk_hz, in.dp_clk_hz);
	snprintf(want, sizeof(want), "%u.%u\n", in.hw_version >> 16, in.hw_version & 0xffff);
	snprintf(p, sizeof(p), "%s/version", sys);
	f = fopen(p, "r");
	if (f) {
		if (!fgets(got, sizeof(got), f))
			got[0] = 0;
		fclose(f);
	}
	check(in.hw_version >> 16 == 1 && (in.hw_version & 0xffff) >= 1 && !strcmp(want, got),
	      "GET_INFO hw_version 1.1 or later (= sysfs version)", "0x%x, sysfs %s", in.hw_version,
	      got);
	check(!in.reserved0 && !in.reserved[0] && !in.reserved[3], "GET_INFO reserved fields 0",
	      "not cleared");
	/* nvtape's old, summarised GET_INFO number: the driver switches on the whole command */
	fails_with(fd, 0x8020bd00u, &in, ENOTTY, "a wrong ioctl number: ENOTTY");
}

static void before_register(int fd)
{
	struct fdrec_start st = {.flags = FDREC_START_TPG};
	struct fdrec_play_start ps = {.flags = FDREC_PLAY_CHECK};
	struct fdrec_filled f = {.timeout_ms = 0};
	struct fdrec_release r = {.index = 0};
	struct fdrec_play_submit sub = {.index = 0, .bytes = 16};
	struct fdrec_stats s;

	fails_with(fd, FDREC_IOC_START, &st, ENOBUFS, "START before REGISTER_BUFS: ENOBUFS");
	fails_with(fd, FDREC_IOC_PLAY_START, &ps, ENOBUFS,
		   "PLAY_START before REGISTER_BUFS: ENOBUFS");
	fails_with(fd, FDREC_IOC_WAIT_FILLED, &f, ENODATA, "WAIT_FILLED when stopped: ENODATA");
	fails_with(fd, FDREC_IOC_RELEASE, &r, EINVAL, "RELEASE of an unregistered buffer: EINVAL");
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EINVAL,
		   "PLAY_SUBMIT of an unregistered buffer: EINVAL");
	if (!call(fd, FDREC_IOC_GET_STATS, &s, "GET_STATS"))
		check(!s.running && !s.bufs_dma && !s.bufs_user, "GET_STATS before registration",
		      "running %u dma %u user %u", s.running, s.bufs_dma, s.bufs_user);
}

static void register_limits(int fd)
{
	__u64 bad[NB];

	reg_fails(fd, 1, BSZ, 0, addrs, EINVAL, "REGISTER_BUFS of 1 buffer: EINVAL");
	reg_fails(fd, 65, BSZ, 0, addrs, EINVAL, "REGISTER_BUFS of 65 buffers: EINVAL");
	reg_fails(fd, NB, 1u << 20, 0, addrs, EINVAL, "REGISTER_BUFS of 1 MiB buffers: EINVAL");
	reg_fails(fd, NB, BSZ + 4096, 0, addrs, EINVAL,
		  "REGISTER_BUFS of a size not a 2 MB multiple: EINVAL");
	reg_fails(fd, NB, 64ull << 20, 0, addrs, EINVAL, "REGISTER_BUFS of 64 MB buffers: EINVAL");
	reg_fails(fd, NB, BSZ, 2, addrs, EINVAL, "REGISTER_BUFS with an unknown flag: EINVAL");
	for (int i = 0; i < NB; i++)
		bad[i] = addrs[i] + (i == 2 ? 4096 : 0);
	reg_fails(fd, NB, BSZ, 0, bad, EINVAL, "REGISTER_BUFS of a misaligned buffer: EINVAL");
	reg_fails(fd, NB, BSZ, 0, (const __u64 *)8, EFAULT,
		  "REGISTER_BUFS with a bad address array: EFAULT");
	check(reg(fd, 0, 0, 0, addrs) == 0, "REGISTER_BUFS count 0 (unregister)", "%s",
	      strerror(errno));
}

static int wait_buf(int fd, struct fdrec_filled *f, int ms)
{
	memset(f, 0, sizeof(*f));
	f->timeout_ms = ms;
	return ioctl(fd, FDREC_IOC_WAIT_FILLED, f);
}

static void release(int fd, uint32_t i)
{
	struct fdrec_release r = {.index = i};
	call(fd, FDREC_IOC_RELEASE, &r, "RELEASE");
}

static void record(int fd)
{
	struct fdrec_rate rt = {.rate_bps = 2000000};
	struct fdrec_start st = {.flags = FDREC_START_TPG};
	struct fdrec_filled f, g;
	struct fdrec_release r;
	struct fdrec_stats s;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct timespec now;
	__u64 bad = 0, skipped = 0, next, pre_drops;
	int rc;

	if (call(fd, FDREC_IOC_SET_RATE, &rt, "SET_RATE"))
		return;
	/* 2e6 B/s is not a whole Q1.31 increment of 200 MHz x 16: the programmed rate is
	 * returned, rounded down, and sysfs shows the same */
	check(rt.rate_bps <= 2000000 && rt.rate_bps > 1990000 &&
		      rt.rate_bps == sysfs_u64("rate_bps"),
	      "SET_RATE returns the programmed rate (= sysfs rate_bps)", "%llu", rt.rate_bps);
	/* counters that START must clear: the generator runs with the packetizer off, and beats
	 * are dropped on purpose */
	sysfs_put("inject_drops", "100");
	sysfs_put("tpg_enable", "1");
	msleep(100);
	sysfs_put("tpg_enable", "0");
	pre_drops = sysfs_u64("drop_count");
	check(pre_drops >= 100 && sysfs_u64("seq_next") > 100 && sysfs_u64("overflow") == 1,
	      "the generator counts with the packetizer off", "drops %llu", pre_drops);
	if (reg(fd, NB, BSZ, FDREC_DIR_RECORD, addrs)) {
		check(0, "REGISTER_BUFS 4 x 2 MB (record)", "%s", strerror(errno));
		return;
	}
	check(1, "REGISTER_BUFS 4 x 2 MB (record)", "-");
	st.first_seq = 12345; /* an output: ignored */
	if (call(fd, FDREC_IOC_START, &st, "START"))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	check(st.first_seq == 0 && st.pkt_len == BSZ / 16,
	      "START: first_seq 0, pkt_len buf_size/16",
	      "first_seq %llu"
	      " pkt_len %u",
	      st.first_seq, st.pkt_len);
	check(st.start_time_ns <= (__u64)now.tv_sec * 1000000000u + (__u64)now.tv_nsec &&
		      st.start_time_ns + 5000000000ull >
			      (__u64)now.tv_sec * 1000000000u + (__u64)now.tv_nsec,
	      "START: start_time_ns is CLOCK_REALTIME", "%llu", st.start_time_ns);
	if (!call(fd, FDREC_IOC_GET_STATS, &s, "GET_STATS"))
		check(s.running == 1 && s.drop_count == 0 && s.overflow == 0 && s.bufs_dma == NB &&
			      s.seq_next < 1000000 && s.fifo_depth == sysfs_u64("fifo_depth"),
		      "START cleared the counters (drops, overflow, sequence)",
		      "running %u drops %llu"
		      " overflow %u bufs_dma %u seq_next %llu",
		      s.running, s.drop_count, s.overflow, s.bufs_dma, s.seq_next);
	fails_with(fd, FDREC_IOC_START, &st, EBUSY, "START while running: EBUSY");
	check(reg(fd, NB, BSZ, 0, addrs) < 0 && errno == EBUSY,
	      "REGISTER_BUFS while running: EBUSY", "%s", strerror(errno));
	r = (struct fdrec_release){.index = 1};
	fails_with(fd, FDREC_IOC_RELEASE, &r, EINVAL,
		   "RELEASE of a buffer the driver owns: EINVAL");
	fails_with(fd, FDREC_IOC_PLAY_STOP, &s, EINVAL, "PLAY_STOP during a recording: EINVAL");

	rc = wait_buf(fd, &f, 5000);
	check(!rc && f.seq == 0 && f.bytes == BSZ && f.flags == 0 && f.index < NB &&
		      f.drop_count == 0,
	      "WAIT_FILLED: the first buffer",
	      "rc %d (%s) seq %llu"
	      " bytes %llu"
	      " flags %u index %u drops %llu",
	      rc, strerror(errno), f.seq, f.bytes, f.flags, f.index, f.drop_count);
	if (rc)
		return;
	scan(mem + f.index * BSZ, f.bytes, &bad, &skipped);
	check(seq_at(mem + f.index * BSZ, 0) == st.first_seq && !bad && !skipped,
	      "the first beat recorded is first_seq, then the pattern without gaps",
	      "first %llu"
	      " bad %llu"
	      " skipped %llu",
	      seq_at(mem + f.index * BSZ, 0), bad, skipped);
	next = seq_at(mem + f.index * BSZ, BSZ / 16 - 1) + 1;
	r = (struct fdrec_release){.index = f.index, .flags = 1};
	fails_with(fd, FDREC_IOC_RELEASE, &r, EINVAL, "RELEASE with flags: EINVAL");
	if (!call(fd, FDREC_IOC_GET_STATS, &s, "GET_STATS"))
		check(s.bufs_user == 1 && s.bufs_filled >= 1, "GET_STATS: one buffer held",
		      "user %u filled %llu", s.bufs_user, s.bufs_filled);
	release(fd, f.index);
	r = (struct fdrec_release){.index = f.index};
	fails_with(fd, FDREC_IOC_RELEASE, &r, EINVAL, "RELEASE twice: EINVAL");

	rc = poll(&p, 1, 5000);
	check(rc == 1 && (p.revents & POLLIN), "poll: POLLIN when a buffer is filled",
	      "rc %d revents 0x%x", rc, p.revents);
	rc = wait_buf(fd, &g, 0);
	check(!rc && g.seq == 1 && seq_at(mem + g.index * BSZ, 0) == next,
	      "WAIT_FILLED: the next buffer continues the sequence", "rc %d seq %llu", rc, g.seq);
	if (rc)
		return;
	release(fd, g.index);

	/* drops: the FIFO loses 1000 beats; the buffers show them as one skip, the driver counts
	 * them in every later WAIT_FILLED */
	rt.rate_bps = 4000000;
	call(fd, FDREC_IOC_SET_RATE, &rt, "SET_RATE 4 MB/s");
	sysfs_put("inject_drops", "1000");
	bad = skipped = 0;
	next = 0;
	for (int i = 0; i < 12; i++) {
		__u64 first;

		if (wait_buf(fd, &f, 5000)) {
			check(0, "WAIT_FILLED with drops", "%s", strerror(errno));
			return;
		}
		first = seq_at(mem + f.index * BSZ, 0);
		if (next && first != next)
			skipped += first - next;
		scan(mem + f.index * BSZ, f.bytes, &bad, &skipped);
		next = seq_at(mem + f.index * BSZ, BSZ / 16 - 1) + 1;
		release(fd, f.index);
		if (f.drop_count >= 1000 && skipped)
			break;
	}
	check(f.drop_count == 1000 && skipped == 1000 && !bad,
	      "injected drops: skipped beats = WAIT_FILLED's drop_count",
	      "drop_count %llu"
	      " skipped %llu"
	      " bad %llu",
	      f.drop_count, skipped, bad);
	check(sysfs_u64("drop_count") == 1000 && sysfs_u64("overflow") == 1,
	      "sysfs drop_count and overflow", "%llu", sysfs_u64("drop_count"));
	sysfs_put("overflow", "1");
	check(sysfs_u64("overflow") == 0, "sysfs overflow: write 1 clears", "still set");

	/* SET_RATE 0 stops the generator: nothing more fills */
	rt.rate_bps = 0;
	call(fd, FDREC_IOC_SET_RATE, &rt, "SET_RATE 0");
	check(rt.rate_bps == 0, "SET_RATE 0 returns 0", "%llu", rt.rate_bps);
	msleep(50);
	while (!wait_buf(fd, &f, 0))
		release(fd, f.index);
	rc = wait_buf(fd, &f, 200);
	check(rc < 0 && errno == ETIMEDOUT, "WAIT_FILLED with nothing coming: ETIMEDOUT", "%s",
	      rc ? strerror(errno) : "a buffer");
	if (!rc)
		release(fd, f.index);
	rt.rate_bps = 4000000;
	call(fd, FDREC_IOC_SET_RATE, &rt, "SET_RATE 4 MB/s");
	rc = wait_buf(fd, &f, 5000); /* held across STOP */
	check(!rc, "WAIT_FILLED after the rate is back", "%s", strerror(errno));
	msleep(300); /* more buffers fill, not collected */

	memset(&s, 0, sizeof(s));
	if (!call(fd, FDREC_IOC_STOP, &s, "STOP"))
		check(s.running == 0 && s.beats_out > 0 && s.fifo_depth, "STOP: the final counters",
		      "running %u", s.running);
	rc = wait_buf(fd, &g, 0);
	check(rc < 0 && errno == ENODATA, "WAIT_FILLED after STOP: ENODATA (uncollected discarded)",
	      "%s", rc ? strerror(errno) : "a buffer");
	p.revents = 0;
	check(poll(&p, 1, 0) == 1 && (p.revents & POLLHUP), "poll after STOP: POLLHUP",
	      "revents 0x%x", p.revents);
	if (!call(fd, FDREC_IOC_GET_STATS, &s, "GET_STATS"))
		check(!s.running && s.bufs_user == 1 && !s.bufs_ready && !s.bufs_dma,
		      "GET_STATS after STOP: only the held buffer",
		      "running %u user %u ready %u dma %u", s.running, s.bufs_user, s.bufs_ready,
		      s.bufs_dma);
	fails_with(fd, FDREC_IOC_START, &st, EBUSY, "START with a buffer still held: EBUSY");
	check(reg(fd, NB, BSZ, FDREC_DIR_PLAY, addrs) < 0 && errno == EBUSY,
	      "REGISTER_BUFS with a record buffer held: EBUSY", "%s", strerror(errno));
	release(fd, f.index);

	/* a DMA error: WAIT_FILLED returns the buffer with FILLED_ERROR and -EIO, poll POLLERR */
	if (call(fd, FDREC_IOC_START, &st, "START again"))
		return;
	check(st.first_seq == 0, "START again: first_seq 0", "%llu", st.first_seq);
	if (!wait_buf(fd, &f, 5000)) {
		check(seq_at(mem + f.index * BSZ, 0) == 0, "the generator starts again at 0",
		      "%llu", seq_at(mem + f.index * BSZ, 0));
		release(fd, f.index);
	}
	sysfs_put("inject_dma_error", "1");
	do {
		rc = wait_buf(fd, &f, 5000);
		if (!rc)
			release(fd, f.index);
	} while (!rc);
	check(rc < 0 && errno == EIO && (f.flags & FDREC_FILLED_ERROR) && f.index < NB,
	      "a DMA error: WAIT_FILLED -EIO with the buffer, FILLED_ERROR", "%s flags %u index %u",
	      strerror(errno), f.flags, f.index);
	p.revents = 0;
	check(poll(&p, 1, 0) == 1 && (p.revents & POLLERR), "poll after a DMA error: POLLERR",
	      "revents 0x%x", p.revents);
	if (!call(fd, FDREC_IOC_GET_STATS, &s, "GET_STATS"))
		check(s.dma_errors == 1, "GET_STATS: dma_errors 1", "%u", s.dma_errors);
	call(fd, FDREC_IOC_STOP, &s, "STOP");
	release(fd, f.index);
	check(sysfs_u64("beats_in") > 0, "counters before close", "beats_in 0");
}

static void fill_beats(uint8_t *b, __u64 seq, __u64 n)
{
	for (__u64 i = 0; i < n; i++) {
		__u64 s = seq + i, c = ~s;
		memcpy(b + i * 16, &s, 8);
		memcpy(b + i * 16 + 8, &c, 8);
	}
}

static int play_stats(int fd, struct fdrec_play_stats *ps)
{
	return call(fd, FDREC_IOC_GET_PLAY_STATS, ps, "GET_PLAY_STATS");
}

/* until the checker has taken want beats, at most 10 s */
static void await_beats(int fd, struct fdrec_play_stats *ps, __u64 want)
{
	for (int i = 0; i < 1000; i++) {
		if (play_stats(fd, ps) || ps->chk.beats >= want)
			return;
		msleep(10);
	}
}

static void play(int fd)
{
	struct fdrec_rate rt = {.rate_bps = 0};
	struct fdrec_play_start ps = {.flags = FDREC_PLAY_CHECK};
	struct fdrec_play_submit sub;
	struct fdrec_play_done d;
	struct fdrec_play_stats st;
	struct fdrec_start rst = {.flags = FDREC_START_TPG};
	struct fdrec_filled f = {.timeout_ms = 0};
	const __u64 beats = BSZ / 16;
	int rc;

	fails_with(fd, FDREC_IOC_SET_SINK_RATE, &rt, EINVAL, "SET_SINK_RATE 0: EINVAL");
	rt.rate_bps = 50000000;
	if (!call(fd, FDREC_IOC_SET_SINK_RATE, &rt, "SET_SINK_RATE"))
		check(rt.rate_bps <= 50000000 && rt.rate_bps > 49900000 &&
			      rt.rate_bps == sysfs_u64("chk_rate_bps"),
		      "SET_SINK_RATE returns the programmed rate (= sysfs chk_rate_bps)", "%llu",
		      rt.rate_bps);
	if (reg(fd, NB, BSZ, FDREC_DIR_PLAY, addrs)) {
		check(0, "REGISTER_BUFS 4 x 2 MB (play)", "%s", strerror(errno));
		return;
	}
	check(1, "REGISTER_BUFS 4 x 2 MB (play)", "-");
	fails_with(fd, FDREC_IOC_START, &rst, EINVAL, "START on a play set: EINVAL");
	fails_with(fd, FDREC_IOC_WAIT_FILLED, &f, EINVAL, "WAIT_FILLED on a play set: EINVAL");
	sub = (struct fdrec_play_submit){.index = 0, .bytes = BSZ};
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EPIPE, "PLAY_SUBMIT before PLAY_START: EPIPE");
	ps.flags = 2;
	fails_with(fd, FDREC_IOC_PLAY_START, &ps, EINVAL,
		   "PLAY_START with an unknown flag: EINVAL");
	ps.flags = FDREC_PLAY_CHECK;
	if (call(fd, FDREC_IOC_PLAY_START, &ps, "PLAY_START"))
		return;
	check(ps.start_time_ns > 0, "PLAY_START: start_time_ns", "0");
	fails_with(fd, FDREC_IOC_PLAY_START, &ps, EBUSY, "PLAY_START while playing: EBUSY");
	if (!play_stats(fd, &st))
		check(st.running == 1 && st.chk.beats == 0 && !st.chk.enabled &&
			      st.egr_depth == sysfs_u64("egr_fifo_depth"),
		      "PLAY_START: checker reset, enabled only at the first submit",
		      "running %u beats %llu"
		      " enabled %u",
		      st.running, st.chk.beats, st.chk.enabled);

	/* buffer 0: beats from 1000 (the checker's expected sequence := the first beat);
	 * buffer 1: continues, with 10 sequence numbers missing and one corrupt beat */
	fill_beats(mem, 1000, beats);
	fill_beats(mem + BSZ, 1000 + beats, 100);
	fill_beats(mem + BSZ + 100 * 16, 1000 + beats + 110, beats - 100);
	mem[BSZ + 500 * 16 + 8] ^= 1;
	sub = (struct fdrec_play_submit){.index = 0, .bytes = 17};
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EINVAL, "PLAY_SUBMIT of 17 bytes: EINVAL");
	sub.bytes = BSZ + 16;
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EINVAL,
		   "PLAY_SUBMIT beyond the buffer: EINVAL");
	sub = (struct fdrec_play_submit){.index = 0, .bytes = BSZ, .flags = 1};
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EINVAL, "PLAY_SUBMIT with flags: EINVAL");
	sub.flags = 0;
	if (call(fd, FDREC_IOC_PLAY_SUBMIT, &sub, "PLAY_SUBMIT 0"))
		return;
	fails_with(fd, FDREC_IOC_PLAY_SUBMIT, &sub, EBUSY,
		   "PLAY_SUBMIT of a buffer the driver owns: EBUSY");
	sub.index = 1;
	if (call(fd, FDREC_IOC_PLAY_SUBMIT, &sub, "PLAY_SUBMIT 1"))
		return;
	for (uint32_t i = 0; i < 2; i++) {
		memset(&d, 0, sizeof(d));
		d.timeout_ms = 5000;
		rc = ioctl(fd, FDREC_IOC_PLAY_WAIT_DONE, &d);
		check(!rc && d.index == i && d.seq == i && d.bytes == BSZ && !d.flags,
		      "PLAY_WAIT_DONE in submission order", "rc %d (%s) index %u seq %llu", rc,
		      strerror(errno), d.index, d.seq);
	}
	await_beats(fd, &st, 2 * beats);
	check(st.chk.beats == 2 * beats && st.chk.gaps == 1 && st.chk.gap_beats == 10 &&
		      st.chk.errors == 1 && st.chk.underflows == 0 && st.chk.enabled &&
		      st.chk.last_seq == 1000 + 2 * beats + 9,
	      "the checker: beats, one gap of 10, one error, no underflow, last_seq",
	      "beats %llu"
	      " gaps %llu"
	      " gap_beats %llu"
	      " errors %llu"
	      " underflows %llu"
	      " enabled %u last %llu",
	      st.chk.beats, st.chk.gaps, st.chk.gap_beats, st.chk.errors, st.chk.underflows,
	      st.chk.enabled, st.chk.last_seq);
	check(st.bufs_done == 2 && st.bytes_done == 2 * BSZ && st.egr_beats_in == 2 * beats,
	      "GET_PLAY_STATS: bufs_done, bytes_done, egr_beats_in",
	      "%llu"
	      " %llu"
	      " %llu",
	      st.bufs_done, st.bytes_done, st.egr_beats_in);
	check(sysfs_u64("chk_gap_beats") == 10 && sysfs_u64("chk_beats") == 2 * beats,
	      "sysfs chk_gap_beats, chk_beats", "-");
	/* the sink starves, then more data comes: underflows */
	msleep(200);
	fill_beats(mem + 2 * BSZ, 1000 + 2 * beats + 10, 1024);
	sub = (struct fdrec_play_submit){.index = 2, .bytes = 1024 * 16};
	call(fd, FDREC_IOC_PLAY_SUBMIT, &sub, "PLAY_SUBMIT 2");
	await_beats(fd, &st, 2 * beats + 1024);
	check(st.chk.underflows > 0 && st.chk.gaps == 1, "a starved sink counts underflows",
	      "underflows %llu"
	      " gaps %llu",
	      st.chk.underflows, st.chk.gaps);
	memset(&d, 0, sizeof(d));
	rc = ioctl(fd, FDREC_IOC_PLAY_WAIT_DONE, &d);
	check(!rc && d.index == 2 && d.bytes == 1024 * 16, "PLAY_WAIT_DONE of a short buffer",
	      "rc %d index %u bytes %llu", rc, d.index, d.bytes);
	memset(&d, 0, sizeof(d));
	rc = ioctl(fd, FDREC_IOC_PLAY_WAIT_DONE, &d);
	check(rc < 0 && errno == ETIMEDOUT, "PLAY_WAIT_DONE with nothing submitted: ETIMEDOUT",
	      "%s", rc ? strerror(errno) : "a buffer");
	fails_with(fd, FDREC_IOC_STOP, &st, EINVAL, "STOP during a playback: EINVAL");
	if (!call(fd, FDREC_IOC_PLAY_STOP, &st, "PLAY_STOP"))
		check(!st.running && !st.chk.enabled && st.chk.beats == 2 * beats + 1024,
		      "PLAY_STOP: stopped, checker frozen with its counters",
		      "running %u enabled %u beats %llu", st.running, st.chk.enabled, st.chk.beats);
	memset(&d, 0, sizeof(d));
	rc = ioctl(fd, FDREC_IOC_PLAY_WAIT_DONE, &d);
	check(rc < 0 && errno == ENODATA, "PLAY_WAIT_DONE after PLAY_STOP: ENODATA", "%s",
	      rc ? strerror(errno) : "a buffer");

	/* PLAY_STOP with buffers in the DMA: they are flushed into the discard path */
	rt.rate_bps = 1000000;
	call(fd, FDREC_IOC_SET_SINK_RATE, &rt, "SET_SINK_RATE 1 MB/s");
	if (call(fd, FDREC_IOC_PLAY_START, &ps, "PLAY_START again"))
		return;
	if (!play_stats(fd, &st))
		check(st.chk.beats == 0 && st.chk.gaps == 0 && st.egr_beats_in == 0,
		      "PLAY_START with CHECK clears the counters", "beats %llu", st.chk.beats);
	fill_beats(mem, 0, beats);
	fill_beats(mem + BSZ, beats, beats);
	sub = (struct fdrec_play_submit){.index = 0, .bytes = BSZ};
	call(fd, FDREC_IOC_PLAY_SUBMIT, &sub, "PLAY_SUBMIT 0");
	sub.index = 1;
	call(fd, FDREC_IOC_PLAY_SUBMIT, &sub, "PLAY_SUBMIT 1");
	if (!call(fd, FDREC_IOC_PLAY_STOP, &st, "PLAY_STOP"))
		check(st.egr_discard > 0 && st.egr_discard + st.egr_beats_in == 2 * beats &&
			      !st.bufs_dma && st.chk.gaps == 0,
		      "PLAY_STOP of a running playback: egr_discard",
		      "discard %llu"
		      " in %llu"
		      " dma %u",
		      st.egr_discard, st.egr_beats_in, st.bufs_dma);
	check(reg(fd, 0, 0, 0, addrs) == 0, "REGISTER_BUFS count 0 after a playback", "%s",
	      strerror(errno));
	fails_with(fd, FDREC_IOC_PLAY_START, &ps, ENOBUFS,
		   "PLAY_START after unregistering: ENOBUFS");
}

int main(int argc, char **argv)
{
	int fd, fd2;

	if (argc > 1)
		dev = argv[1];
	if (argc > 2)
		sys = argv[2];
	mem = mmap(NULL, NB * BSZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		printf("FAIL hugepages: %s (reserve 4: echo 4 > /proc/sys/vm/nr_hugepages)\n",
		       strerror(errno));
		return 1;
	}
	for (int i = 0; i < NB; i++)
		addrs[i] = (__u64)(uintptr_t)(mem + i * BSZ);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("FAIL open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	fd2 = open(dev, O_RDWR | O_CLOEXEC);
	check(fd2 < 0 && errno == EBUSY, "a second opener: EBUSY", "%s",
	      fd2 < 0 ? strerror(errno) : "opened");
	if (fd2 >= 0)
		close(fd2);
	info_checks(fd);
	before_register(fd);
	register_limits(fd);
	record(fd);
	close(fd);
	check(sysfs_u64("beats_in") == 0 && sysfs_u64("drop_count") == 0 &&
		      sysfs_u64("seq_next") == 0,
	      "close after a recording resets the counters", "beats_in %llu",
	      sysfs_u64("beats_in"));
	fd = open(dev, O_RDWR | O_CLOEXEC);
	check(fd >= 0, "open again after close", "%s", strerror(errno));
	if (fd < 0)
		return 1;
	play(fd);
	close(fd);
	check(sysfs_u64("chk_beats") == sysfs_u64("egr_beats_in") - sysfs_u64("egr_fifo_level") &&
		      sysfs_u64("egr_discard") > 0,
	      "close after a playback leaves the sink's counters", "chk_beats %llu",
	      sysfs_u64("chk_beats"));
	printf("%s: %d failed\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}
