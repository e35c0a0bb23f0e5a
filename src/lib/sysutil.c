/* Small Linux helpers shared inside the library: clocks, CPU time, sizes, mounts. */
#include <errno.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sysutil.h"

uint64_t nvt_process_cpu_ns(void)
{
	return nvt_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
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
