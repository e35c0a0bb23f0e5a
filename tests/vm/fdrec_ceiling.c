/* SPDX-License-Identifier: MIT */
/* fdrec_ceiling: the least an application can do with the FPGA Drive Recorder's driver (the
 * emulation in tests/vm/fdrec_emu, or the real one): register 2 MB-aligned hugepage buffers,
 * start the test pattern, wait for each filled buffer with poll(), optionally write it to OUTPUT
 * (O_DIRECT, sequentially, wrapping at OUTPUT's size), release it; stop. What it receives, at what
 * CPU cost, is the ceiling nvtape's fdrec source is measured against (bench/fdrec). It also checks
 * what it receives at buffer boundaries: the first buffer starts at START's first_seq, no buffer
 * goes backwards, and the beats skipped between buffers never exceed the drop count the driver
 * reports with the buffer (seq_errors counts the violations).
 * Usage: fdrec_ceiling SECONDS [BUF_BYTES [NBUFS [DEVICE [OUTPUT]]]]
 *        (defaults 2 MiB, 16, /dev/fdrec0, no output)
 * Prints: RESULT bytes= bufs= seconds= mbps= drops= fifo_hwm= first_seq= seq_errors=
 *         hugepages= cpu_s= cpu_s_per_gb= */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fdrec_uapi.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
	       u.ru_stime.tv_usec / 1e6;
}

static int fail(const char *what)
{
	fprintf(stderr, "fdrec_ceiling: %s: %s\n", what, strerror(errno));
	return 1;
}

/* len bytes, 2 MB aligned: hugepages from the pool, else THP-advised ordinary memory (which the
 * driver refuses with E2BIG when its pages are not contiguous) */
static uint8_t *buffers(size_t len, int *huge)
{
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	uintptr_t a;

	*huge = m != MAP_FAILED;
	if (*huge)
		return m;
	m = mmap(NULL, len + FDREC_BUF_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)m + FDREC_BUF_ALIGN - 1) & ~(uintptr_t)(FDREC_BUF_ALIGN - 1);
	madvise((void *)a, len, MADV_HUGEPAGE);
	memset((void *)a, 0, len);
	return (uint8_t *)a;
}

struct loop {
	int fd, out;
	uint8_t *mem;
	uint64_t bsz, bytes, bufs, out_size, out_off;
	uint64_t first_seq, next_seq, skipped, seq_errors;
};

static uint64_t beat_seq(const uint8_t *p)
{
	uint64_t s;
	memcpy(&s, p, 8);
	return s;
}

/* take every filled buffer now ready, write it, hand it back */
static int drain(struct loop *l)
{
	struct fdrec_filled f = {.timeout_ms = 0};

	while (!ioctl(l->fd, FDREC_IOC_WAIT_FILLED, &f)) {
		const uint8_t *b = l->mem + (size_t)f.index * l->bsz;
		uint64_t want = l->bufs ? l->next_seq : l->first_seq;
		struct fdrec_release r = {.index = f.index};

		/* never backwards, and never more beats skipped than the driver dropped */
		if (beat_seq(b) < want)
			l->seq_errors++;
		else
			l->skipped += beat_seq(b) - want;
		if (l->skipped > f.drop_count)
			l->seq_errors++;
		l->next_seq = beat_seq(b + f.bytes - FDREC_BEAT_BYTES) + 1;
		l->bytes += f.bytes;
		l->bufs++;
		if (l->out >= 0) {
			if (l->out_off + f.bytes > l->out_size)
				l->out_off = 0;
			if (pwrite(l->out, b, f.bytes, (off_t)l->out_off) != (ssize_t)f.bytes)
				return -1;
			l->out_off += f.bytes;
		}
		if (ioctl(l->fd, FDREC_IOC_RELEASE, &r))
			return -1;
	}
	return errno == ETIMEDOUT || errno == EINTR ? 0 : -1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	unsigned long long bsz = argc > 2 ? strtoull(argv[2], NULL, 0) : FDREC_BUF_ALIGN;
	unsigned n = argc > 3 ? (unsigned)atoi(argv[3]) : 16;
	const char *dev = argc > 4 ? argv[4] : "/dev/fdrec0";
	const char *outp = argc > 5 ? argv[5] : NULL;
	struct fdrec_info info;
	struct fdrec_bufs reg;
	struct fdrec_start st = {.flags = FDREC_START_TPG};
	struct fdrec_stats fin;
	struct loop l = {.out = -1};
	uint64_t addrs[FDREC_MAX_BUFS];
	double t0, c0, t1, c1;
	int huge;

	if (secs <= 0 || !bsz || bsz % FDREC_BUF_ALIGN || bsz > FDREC_MAX_BUF_SIZE || n < 2 ||
	    n > FDREC_MAX_BUFS) {
		fprintf(stderr, "usage: fdrec_ceiling SECONDS [BUF_BYTES (2 MiB multiple) [NBUFS "
				"(2..64) [DEVICE [OUTPUT]]]]\n");
		return 64;
	}
	l.bsz = bsz;
	l.fd = open(dev, O_RDWR | O_CLOEXEC);
	if (l.fd < 0)
		return fail(dev);
	if (ioctl(l.fd, FDREC_IOC_GET_INFO, &info))
		return fail("GET_INFO");
	if (info.api_version != FDREC_API_VERSION) {
		fprintf(stderr, "fdrec_ceiling: driver API %u, this program speaks %d\n",
			info.api_version, FDREC_API_VERSION);
		return 1;
	}
	if (outp) {
		l.out = open(outp, O_WRONLY | O_DIRECT | O_CLOEXEC);
		if (l.out < 0)
			return fail(outp);
		l.out_size = (uint64_t)lseek(l.out, 0, SEEK_END) / bsz * bsz;
		if (!l.out_size) {
			fprintf(stderr, "fdrec_ceiling: %s is smaller than one buffer\n", outp);
			return 1;
		}
	}
	l.mem = buffers((size_t)bsz * n, &huge);
	if (!l.mem)
		return fail("buffer memory");
	for (unsigned i = 0; i < n; i++)
		addrs[i] = (uint64_t)(uintptr_t)(l.mem + (size_t)i * bsz);
	reg = (struct fdrec_bufs){.addrs = (uint64_t)(uintptr_t)addrs, .buf_size = bsz, .count = n};
	if (ioctl(l.fd, FDREC_IOC_REGISTER_BUFS, &reg))
		return fail(huge ? "REGISTER_BUFS"
				 : "REGISTER_BUFS (no hugepages: reserve some in "
				   "/proc/sys/vm/nr_hugepages)");
	t0 = now_s();
	c0 = cpu_s();
	if (ioctl(l.fd, FDREC_IOC_START, &st))
		return fail("START");
	l.first_seq = st.first_seq;
	while (now_s() - t0 < secs) {
		struct pollfd p = {.fd = l.fd, .events = POLLIN};
		if (poll(&p, 1, 5) < 0 && errno != EINTR)
			return fail("poll");
		if (p.revents & POLLERR) {
			errno = EIO;
			return fail("poll (DMA error)");
		}
		if (drain(&l))
			return fail("WAIT_FILLED/write/RELEASE");
	}
	/* what is filled but not collected is discarded by STOP */
	if (ioctl(l.fd, FDREC_IOC_STOP, &fin))
		return fail("STOP");
	t1 = now_s();
	c1 = cpu_s();
	printf("RESULT bytes=%llu bufs=%llu seconds=%.3f mbps=%.1f drops=%llu fifo_hwm=%u "
	       "first_seq=%llu seq_errors=%llu hugepages=%d cpu_s=%.4f cpu_s_per_gb=%.5f\n",
	       (unsigned long long)l.bytes, (unsigned long long)l.bufs, t1 - t0,
	       l.bytes / (t1 - t0) / 1e6, (unsigned long long)fin.drop_count, fin.fifo_hwm,
	       (unsigned long long)l.first_seq, (unsigned long long)l.seq_errors, huge, c1 - c0,
	       l.bytes ? (c1 - c0) / (l.bytes / 1e9) : 0);
	close(l.fd);
	return 0;
}
