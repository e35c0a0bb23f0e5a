/* SPDX-License-Identifier: MIT */
/* Small Linux helpers shared inside the library: clocks, CPU time, sizes, mounts. */
#ifndef NVT_SYSUTIL_H
#define NVT_SYSUTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nvtape/nvtape.h"

static inline uint64_t nvt_clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t nvt_mono_ns(void)
{
	return nvt_clock_ns(CLOCK_MONOTONIC);
}
static inline uint64_t nvt_real_ns(void)
{
	return nvt_clock_ns(CLOCK_REALTIME);
}
static inline uint64_t nvt_thread_cpu_ns(void)
{
	return nvt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}
uint64_t nvt_process_cpu_ns(void);

/* The caller's interrupt flag (options' `interrupt`), set by a signal handler that may run on
 * any thread and read here from the library's threads: a relaxed atomic load, the counterpart
 * of the handler's atomic store (a plain volatile access races across threads). */
static inline bool nvt_interrupted(const volatile sig_atomic_t *flag)
{
	return flag && __atomic_load_n(flag, __ATOMIC_RELAXED) != 0;
}

int nvt_fd_size(int fd, uint64_t *size, struct nvt_err *err);
/* Give the file the space [0, size): fallocate, or where the filesystem has none (exFAT on
 * Linux 6.1) a growing truncate made durable, which writes zeros (*zero_filled: how many bytes); a
 * file that is already that long is left as it is. `what` prefixes the messages ("" for none). */
int nvt_file_allocate(int fd, const char *what, uint64_t size, uint64_t *zero_filled,
		      struct nvt_err *err);
bool nvt_is_blockdev(int fd);
/* open() of a recording's file or device: the descriptor, or -errno with err untouched when
 * open() failed; -ESPIPE with err set for what is neither a regular file nor a block device
 * (a FIFO, socket or character device put in its place), found without ever waiting for a
 * FIFO's other end. *blockdev (may be NULL) says which it is. */
int nvt_open_data(const char *path, int flags, bool *blockdev, struct nvt_err *err);
/* Mount point of block device dev (st_rdev) into buf, or false when not mounted. */
bool nvt_blockdev_mounted(unsigned long long rdev, char *buf, size_t cap);
void nvt_hostname(char *buf, size_t cap);
/* HugePages_Free / Hugepagesize from /proc/meminfo (0 when unknown). */
uint64_t nvt_hugepages_free(void);
/* Sleep until the CLOCK_MONOTONIC deadline (ns). */
void nvt_sleep_until(uint64_t deadline_ns);

#endif
