/* SPDX-License-Identifier: MIT */
/* Checks on an output path before anything is created or truncated. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "sys/probe.h"
#include "util/sysutil.h"
#include "sys/devcheck.h"

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

/* Open the output with O_DIRECT once, so an unsuitable filesystem is named before any memory
 * is set aside; a file created only for the probe is removed again. */
static int o_direct_probe(const char *path, struct nvt_err *err)
{
	bool existed = access(path, F_OK) == 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);

	if (fd >= 0) {
		close(fd);
		if (!existed)
			unlink(path);
		return 0;
	}
	if (errno == EINVAL) {
		struct statfs sfs;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		bool tmpfs = statfs(dirname(dir), &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
		if (!existed)
			unlink(path);
		nvt_err_set(err, EINVAL,
			    "%s: the filesystem does not support O_DIRECT%s; record to a disk "
			    "filesystem (ext4, XFS) or a block device",
			    path, tmpfs ? " (it is tmpfs)" : "");
		return -EINVAL;
	}
	return 0; /* other errors are reported with more context below */
}

int nvt_target_check_output(const char *path, uint64_t need_bytes, bool force, struct nvt_err *err)
{
	struct stat st;
	struct statvfs vfs;
	char buf[4096], dir[4096];

	if (!path || !*path) {
		nvt_err_set(err, EINVAL, "no output file given");
		return -EINVAL;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			nvt_err_set(
				err, EISDIR,
				"%s is a directory: give a file name inside it, e.g. %s/rec.nvt",
				path, path);
			return -EISDIR;
		}
		if (S_ISBLK(st.st_mode))
			return check_blockdev(path, &st, need_bytes, force, err);
		if (!S_ISREG(st.st_mode)) {
			nvt_err_set(err, EINVAL,
				    "%s is not a regular file (a device, pipe or socket)", path);
			return -EINVAL;
		}
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
