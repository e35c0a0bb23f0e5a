/* SPDX-License-Identifier: MIT */
/* Small Linux helpers shared inside the library: clocks, CPU time, sizes, mounts. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/sysutil.h"

uint64_t nvt_process_cpu_ns(void)
{
	return nvt_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

int nvt_open_data(const char *path, int flags, bool *blockdev, struct nvt_err *err)
{
	struct stat st;
	int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, 0644), fl;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			nvt_err_set(err, EISDIR, "%s is a directory: name a recording's file",
				    path);
		else
			nvt_err_set(err, ESPIPE,
				    "%s is not a regular file or a block device (a FIFO, socket "
				    "or character device?): recordings live in files and on block "
				    "devices",
				    path);
		return -ESPIPE;
	}
	fl = fcntl(fd, F_GETFL);
	if (!(flags & O_NONBLOCK) && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))) {
		int rc = errno;
		close(fd);
		return -rc;
	}
	if (blockdev)
		*blockdev = S_ISBLK(st.st_mode);
	return fd;
}

bool nvt_is_blockdev(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISBLK(st.st_mode);
}

int nvt_fd_size(int fd, uint64_t *size, struct nvt_err *err)
{
	struct stat st;

	if (fstat(fd, &st)) {
		nvt_err_set(err, errno, "fstat: %s", strerror(errno));
		return -errno;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size)) {
			nvt_err_set(err, errno, "BLKGETSIZE64: %s", strerror(errno));
			return -errno;
		}
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		nvt_err_set(err, EISDIR, "is a directory, not a recording file");
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		nvt_err_set(err, EINVAL,
			    "not a regular file or block device (a pipe, socket or "
			    "character device)");
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

bool nvt_blockdev_mounted(unsigned long long rdev, char *buf, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char mnt[2048];
		if (sscanf(line, "%*u %*u %u:%u %*s %2047s", &maj, &min, mnt) == 3 &&
		    makedev(maj, min) == rdev) {
			snprintf(buf, cap, "%s", mnt);
			found = true;
		}
	}
	fclose(f);
	return found;
}

void nvt_hostname(char *buf, size_t cap)
{
	if (gethostname(buf, cap))
		snprintf(buf, cap, "unknown");
	buf[cap - 1] = 0;
}

uint64_t nvt_hugepages_free(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	unsigned long long v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

void nvt_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000ull),
			      .tv_nsec = (long)(deadline_ns % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int nvt_file_allocate(int fd, const char *what, uint64_t size, uint64_t *zero_filled,
		      struct nvt_err *err)
{
	const char *sep = what[0] ? ": " : "";
	struct stat st;
	int rc;

	if (fallocate(fd, 0, 0, (off_t)size) == 0)
		return 0;
	rc = errno;
	if (rc == EOPNOTSUPP) {
		if (fstat(fd, &st))
			st.st_size = 0;
		if ((uint64_t)st.st_size >= size)
			return 0; /* written before (a reused file): the space is there */
		if (ftruncate(fd, (off_t)size) == 0 && fsync(fd) == 0) {
			*zero_filled += size - (uint64_t)st.st_size;
			return 0;
		}
		rc = errno;
		nvt_err_set(err, rc, "%s%s%s while zero-filling %llu bytes (no fallocate here)",
			    what, sep, rc == ENOSPC ? "not enough free space" : strerror(rc),
			    (unsigned long long)size);
	} else if (rc == ENOSPC) {
		nvt_err_set(err, rc, "%s%snot enough free space for %llu bytes", what, sep,
			    (unsigned long long)size);
	} else {
		nvt_err_set(err, rc, "%s%sfallocate: %s", what, sep, strerror(rc));
	}
	return -rc;
}
