/* Checks on an output path before anything is created or truncated. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "sysutil.h"
#include "target.h"

int nvt_target_check_output(const char *path, uint64_t need_bytes, struct nvt_err *err)
{
	struct stat st;
	struct statvfs vfs;
	char dir[4096];

	if (!path || !*path) {
		nvt_err_set(err, EINVAL, "no output file given");
		return -EINVAL;
	}
	if (stat(path, &st) == 0) {
		char mnt[1024];
		if (S_ISDIR(st.st_mode)) {
			nvt_err_set(err, EISDIR,
				    "%s is a directory: give a file name inside it, e.g. %s/rec.nvt",
				    path, path);
			return -EISDIR;
		}
		if (S_ISBLK(st.st_mode)) {
			if (nvt_blockdev_mounted(st.st_rdev, mnt, sizeof(mnt))) {
				nvt_err_set(err, EBUSY,
					    "%s is a block device mounted at %s: recording onto it "
					    "would destroy that filesystem; record to a file on it "
					    "(e.g. %s/rec.nvt) or unmount it first",
					    path, mnt, mnt);
				return -EBUSY;
			}
			nvt_err_set(err, EOPNOTSUPP,
				    "%s is a raw block device: this nvtape records to files on a "
				    "filesystem; make one (mkfs.xfs %s) and record to a file on it",
				    path, path);
			return -EOPNOTSUPP;
		}
		if (!S_ISREG(st.st_mode)) {
			nvt_err_set(err, EINVAL, "%s is not a regular file (a device, pipe or socket)",
				    path);
			return -EINVAL;
		}
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if (statvfs(dirname(dir), &vfs)) {
		nvt_err_set(err, errno, "cannot use the directory of %s: %s", path,
			    strerror(errno));
		return -errno;
	}
	if (need_bytes) {
		uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (stat(path, &st) == 0)
			avail += (uint64_t)st.st_blocks * 512; /* it will be truncated */
		if (avail < need_bytes) {
			nvt_err_set(err, ENOSPC,
				    "not enough free space for %s: need %llu bytes, %llu available; "
				    "free space or lower --size",
				    path, (unsigned long long)need_bytes, (unsigned long long)avail);
			return -ENOSPC;
		}
	}
	return 0;
}
