/* SPDX-License-Identifier: MIT */
/* Checks on an output path before anything is created or truncated, and the open of a
 * recording's output file: a recorder's output is precious, so an existing file that holds
 * anything is kept unless the caller forces, and no output is written through a symbolic link
 * (one planted at the path would redirect a privileged recorder onto another file). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "sys/devcheck.h"
#include "sys/probe.h"
#include "util/sysutil.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

static int check_blockdev(const char *path, const struct stat *st, uint64_t need_bytes, bool force,
			  struct nvt_err *err)
{
	char mnt[1024], what[128];
	uint64_t size = 0;
	int fd, rc;

	if (nvt_blockdev_mounted(st->st_rdev, mnt, sizeof(mnt))) {
		nvt_err_set(
			err, EBUSY,
			"%s is a block device mounted at %s: recording onto it would destroy "
			"that filesystem; record to a file on it (e.g. %s/rec.nvt) or unmount it "
			"first",
			path, mnt, mnt);
		return -EBUSY;
	}
	if (nvt_blockdev_holders(path, what, sizeof(what))) {
		nvt_err_set(err, EBUSY,
			    "%s is in use by %s (an md array or device-mapper target): stop that "
			    "first (mdadm --stop /dev/%s or dmsetup remove)",
			    path, what, what);
		return -EBUSY;
	}
	rc = nvt_probe_device(path, what, sizeof(what));
	if (rc < 0) {
		nvt_err_set(err, -rc, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	if (rc > 0 && !force) {
		nvt_err_set(err, EEXIST, "%s carries %s: recording onto it would destroy it", path,
			    what);
		nvt_err_set_hint(err, NVT_HINT_FORCE, 0, 0, 0);
		return -EEXIST;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		struct nvt_err serr = {0};
		nvt_fd_size(fd, &size, &serr);
		close(fd);
	}
	if (need_bytes && size < need_bytes) {
		nvt_err_set(err, ENOSPC, "%s holds %llu bytes, the recording needs %llu", path,
			    (unsigned long long)size, (unsigned long long)need_bytes);
		nvt_err_set_hint(err, NVT_HINT_LESS_DATA, 0, 0, 0);
		return -ENOSPC;
	}
	return 0;
}

static void when(char *buf, size_t cap, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;

	if (!ns || !gmtime_r(&t, &tm) || !strftime(buf, cap, "started %Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, cap, "start time unknown");
}

bool nvt_describe_file(int fd, char *buf, size_t cap)
{
	uint8_t blk[NVT_HEADER_SIZE];
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct stat st;
	char t[64];
	ssize_t n;

	if (fstat(fd, &st)) {
		snprintf(buf, cap, "a file");
		return false;
	}
	n = pread(fd, blk, sizeof(blk), 0);
	if (n < 8 || (memcmp(blk, "NVTAPE\0\0", 8) && memcmp(blk, "FDREC\0\0\0", 8))) {
		snprintf(buf, cap, "a file of %llu bytes", (unsigned long long)st.st_size);
		return false;
	}
	bool fdrec = !memcmp(blk, "FDREC", 5);
	const char *name = fdrec ? "FPGA Drive Recorder (fdrec) recording" : "nvtape recording";
	if (nvt_header_decode(blk, (size_t)n, &rec, &err)) {
		snprintf(buf, cap, "an %s whose header does not decode (a file of %llu bytes)",
			 name, (unsigned long long)st.st_size);
		return true;
	}
	bool complete = rec.flags & NVT_FLAG_COMPLETE;
	uint64_t data =
		complete ? rec.data_bytes
		: fdrec  ? (st.st_size > NVT_HEADER_SIZE ? (uint64_t)st.st_size - NVT_HEADER_SIZE
							 : 0)
			 : rec.durable_bytes;
	when(t, sizeof(t), rec.start_ns);
	snprintf(buf, cap, "%s %s (%llu data bytes%s, %s)",
		 complete ? "a complete" : "an interrupted", name, (unsigned long long)data,
		 complete || fdrec ? "" : " at its last checkpoint", t);
	return true;
}

/* Someone holds the file's lock: a recording is being written to it (nvt_lock_output). */
static bool being_written(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK;
}

static int refuse_existing(const char *path, int fd, const char *engine, struct nvt_err *err)
{
	char what[200];

	nvt_describe_file(fd, what, sizeof(what));
	nvt_err_set(
		err, EEXIST, "%s holds %s: recording to it would replace it%s", path, what,
		engine && !strcmp(engine, "nvme")
			? " (the nvme engine reuses the blocks of an existing file only when told "
			  "to overwrite it)"
			: "");
	nvt_err_set_hint(err, NVT_HINT_FORCE, 0, 0, 0);
	return -EEXIST;
}

/* An existing regular file: refused while a recording is being written to it, and, unless
 * force, when it holds anything. */
static int check_file(const char *path, bool force, const char *engine, struct nvt_err *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = 0;
	struct stat st;

	if (fd < 0)
		return 0; /* the open for writing says why */
	if (being_written(fd)) {
		nvt_err_set(err, EBUSY,
			    "%s is being written by another recording (it holds the file's lock): "
			    "nothing was changed",
			    path);
		rc = -EBUSY;
	} else if (!force && fstat(fd, &st) == 0 && st.st_size > 0) {
		rc = refuse_existing(path, fd, engine, err);
	}
	close(fd);
	return rc;
}

static int refuse_link(const char *path, struct nvt_err *err)
{
	char to[1024];
	ssize_t n = readlink(path, to, sizeof(to) - 1);

	to[n > 0 ? n : 0] = 0;
	nvt_err_set(err, ELOOP,
		    "%s is a symbolic link%s%s: a recording is not written through a link (one "
		    "planted there would send it onto another file); give the file's own path",
		    path, n > 0 ? " to " : "", to);
	return -ELOOP;
}

int nvt_open_output(const char *path, int flags, bool force, const char *engine, bool *blockdev,
		    struct nvt_err *err)
{
	bool dev = false;
	int fd = nvt_open_data(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW, &dev, err);

	if (fd == -EINVAL) /* created, then refused (O_DIRECT): nothing of anyone's is lost */
		unlink(path);
	if (fd == -EEXIST) {
		struct stat st;
		fd = nvt_open_data(path, flags | O_NOFOLLOW, &dev, err);
		if (fd >= 0 && !dev && !force && fstat(fd, &st) == 0 && st.st_size > 0) {
			int rfd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			refuse_existing(path, rfd >= 0 ? rfd : fd, engine, err);
			if (rfd >= 0)
				close(rfd);
			close(fd);
			fd = -EEXIST;
		}
	}
	if (fd == -ELOOP)
		refuse_link(path, err);
	if (blockdev)
		*blockdev = dev;
	return fd;
}

/* Open the output with O_DIRECT once, so an unsuitable filesystem is named before any memory
 * is set aside; a file created only for the probe is removed again. */
static int o_direct_probe(const char *path, struct nvt_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECT | O_CLOEXEC, 0644);
	bool created = fd >= 0 || errno == EINVAL;

	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_DIRECT | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		if (created)
			unlink(path);
		return 0;
	}
	if (errno == EINVAL) {
		struct statfs sfs;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		bool tmpfs = statfs(dirname(dir), &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
		if (created)
			unlink(path);
		nvt_err_set(err, EINVAL,
			    "%s: the filesystem does not support O_DIRECT%s; record to a disk "
			    "filesystem (ext4, XFS) or a block device",
			    path, tmpfs ? " (it is tmpfs)" : "");
		return -EINVAL;
	}
	return 0; /* other errors are reported with more context below */
}

int nvt_target_check_output(const char *path, uint64_t need_bytes, bool force, const char *engine,
			    struct nvt_err *err)
{
	struct stat st;
	struct statvfs vfs;
	char buf[4096], dir[4096];
	bool link;

	if (!path || !*path) {
		nvt_err_set(err, EINVAL, "no output file given");
		return -EINVAL;
	}
	link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
	if (link || stat(path, &st) == 0) {
		if (link && stat(path, &st))
			return refuse_link(path, err); /* dangling */
		if (S_ISDIR(st.st_mode)) {
			nvt_err_set(
				err, EISDIR,
				"%s is a directory: give a file name inside it, e.g. %s/rec.nvt",
				path, path);
			return -EISDIR;
		}
		/* a device's stable name (/dev/disk/by-id/...) is a link: followed */
		if (S_ISBLK(st.st_mode))
			return check_blockdev(path, &st, need_bytes, force, err);
		if (link)
			return refuse_link(path, err);
		if (!S_ISREG(st.st_mode)) {
			nvt_err_set(err, EINVAL,
				    "%s is not a regular file (a device, pipe or socket)", path);
			return -EINVAL;
		}
		if (check_file(path, force, engine, err))
			return -err->code;
	}
	if (o_direct_probe(path, err))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", path);
	snprintf(dir, sizeof(dir), "%s", dirname(buf));
	if (statvfs(dir, &vfs)) {
		nvt_err_set(err, errno, "cannot use the directory of %s: %s", path,
			    strerror(errno));
		return -errno;
	}
	/* the space itself is left to the reservation: statfs lags behind a file deleted a
	 * moment ago (XFS frees in the background), fallocate does not */
	(void)need_bytes;
	return 0;
}
