/* SPDX-License-Identifier: MIT */
/* fdrec_ceiling: the least an application can do with the FPGA Drive Recorder's driver (the
 * emulation in tests/vm/fdrec_emu): register buffers, start the test pattern, wait for each
 * filled buffer with poll() and hand it straight back, stop. What it receives, at what CPU cost,
 * is the ceiling that nvtape's fdrec source (which also writes every buffer to a drive) is
 * measured against (bench/fdrec).
 * Usage: fdrec_ceiling SECONDS [BUF_BYTES [NBUFS [DEVICE]]]   (defaults 1 MiB, 32, /dev/fdrec0)
 * Prints: RESULT bytes= seconds= mbps= drops= fifo_hwm= cpu_s= cpu_s_per_gb= */
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

/* take every filled buffer now ready and hand it back; bytes received */
static int drain(int fd, uint64_t *bytes, int release)
{
	struct fdrec_filled f = {.timeout_ms = 0};

	while (!ioctl(fd, FDREC_WAIT_FILLED, &f)) {
		*bytes += f.bytes;
		if (f.flags & FDREC_FILLED_ERROR) {
			errno = EIO;
			return -1;
		}
		if (release && ioctl(fd, FDREC_RELEASE, &f.index))
			return -1;
	}
	return errno == ETIMEDOUT || errno == ENODATA || errno == EINTR ? 0 : -1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	unsigned long long bsz = argc > 2 ? strtoull(argv[2], NULL, 0) : 1u << 20;
	unsigned n = argc > 3 ? (unsigned)atoi(argv[3]) : 32;
	const char *dev = argc > 4 ? argv[4] : "/dev/fdrec0";
	struct fdrec_bufs *bufs;
	struct fdrec_start st = {.flags = FDREC_START_TPG};
	struct fdrec_stats fin;
	uint64_t bytes = 0;
	double t0, c0, t1, c1;
	uint8_t *mem;
	int fd;

	if (secs <= 0 || !bsz || bsz % 4096 || n < 2 || n > FDREC_MAX_BUFS) {
		fprintf(stderr, "usage: fdrec_ceiling SECONDS [BUF_BYTES (4 KiB multiple) [NBUFS "
				"(2..64) [DEVICE]]]\n");
		return 64;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(dev);
	mem = mmap(NULL, bsz * n, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	bufs = calloc(1, sizeof(*bufs));
	if (mem == MAP_FAILED || !bufs)
		return fail("memory");
	bufs->count = n;
	bufs->buf_size = bsz;
	bufs->flags = FDREC_DIR_RECORD;
	for (unsigned i = 0; i < n; i++)
		bufs->addrs[i] = (uint64_t)(uintptr_t)(mem + (size_t)i * bsz);
	if (ioctl(fd, FDREC_REGISTER_BUFS, bufs))
		return fail("REGISTER_BUFS");
	t0 = now_s();
	c0 = cpu_s();
	if (ioctl(fd, FDREC_START, &st))
		return fail("START");
	while (now_s() - t0 < secs) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 5) < 0 && errno != EINTR)
			return fail("poll");
		if (drain(fd, &bytes, 1))
			return fail("WAIT_FILLED/RELEASE");
	}
	if (ioctl(fd, FDREC_STOP, &fin))
		return fail("STOP");
	if (drain(fd, &bytes, 0)) /* what the stop handed over */
		return fail("WAIT_FILLED after STOP");
	t1 = now_s();
	c1 = cpu_s();
	printf("RESULT bytes=%llu seconds=%.3f mbps=%.1f drops=%llu fifo_hwm=%u cpu_s=%.4f "
	       "cpu_s_per_gb=%.5f\n",
	       (unsigned long long)bytes, t1 - t0, bytes / (t1 - t0) / 1e6,
	       (unsigned long long)fin.drop_count, fin.fifo_hwm, c1 - c0,
	       bytes ? (c1 - c0) / (bytes / 1e9) : 0);
	close(fd);
	return 0;
}
