/* SPDX-License-Identifier: MIT */
/* The nvme engine's file on a volume: opened (created, never truncated: its blocks are reused),
 * allocated as written blocks and mapped down to namespace bytes (file_map.c) before the first
 * write, made immutable while nvtape writes underneath the filesystem, re-checked after the last
 * write (the blocks must not have moved), then handed back to the filesystem at its final
 * length. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/nvme/nvme_engine.h"
#include "sys/devcheck.h"
#include "util/sysutil.h"

#define ZERO_BYTES (8u << 20)

/* FS_IMMUTABLE_FL on or off: while set nobody can write, truncate, delete, reflink or defragment
 * the file whose blocks nvtape writes underneath the filesystem. */
static bool set_immutable(int fd, bool on)
{
	int flags = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return false;
	flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
}

/* A recording to read: all of it mapped, with no holes. */
static int map_for_reading(struct nvme_priv *np, const char *path, struct nvt_err *err)
{
	struct nvt_extent *fill;
	size_t nfill;
	struct stat st;
	int rc;

	if (fstat(np->file_fd, &st))
		return nvt_err_set(err, errno, "%s: stat failed", path), -EIO;
	np->file_bytes = ((uint64_t)st.st_size + 4095) / 4096 * 4096;
	rc = nvt_nvme_target_map_file(&np->t, np->file_fd, path, np->file_bytes, &fill, &nfill,
				      err);
	free(fill);
	if (!rc && nfill) {
		nvt_err_set(err, EINVAL,
			    "%s has holes or unwritten extents: not a recording (read it through "
			    "the filesystem, with the file engine)",
			    path);
		rc = -EINVAL;
	}
	return rc;
}

int nvme_file_open(struct nvme_priv *np, const char *path, const struct nvt_engine_params *p,
		   struct nvt_err *err)
{
	int rc;

	/* an existing file (its blocks reused) only when forced; never through a link */
	np->file_fd =
		p->write ? nvt_open_output(path, O_RDWR | O_DIRECT, p->force, "nvme", NULL, err)
			 : open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (np->file_fd < 0) {
		rc = p->write ? -np->file_fd : errno;
		np->file_fd = -1;
		nvt_err_set(err, rc, "cannot open %s: %s", path, strerror(rc));
		return -rc;
	}
	rc = nvt_nvme_target_volume(np->file_fd, path, &np->t, err);
	if (rc)
		return rc;
	if (p->write && !p->prealloc) {
		nvt_err_set(err, EINVAL,
			    "%s: the nvme engine needs its length up front to write into a file (a "
			    "size, or a duration and a rate): the file is allocated and mapped "
			    "before the first write",
			    path);
		return -EINVAL;
	}
	return p->write ? 0 : map_for_reading(np, path, err);
}

/* Write zeros through the filesystem into the ranges it left as holes or unwritten extents. */
static int zero_fill(struct nvme_priv *np, const struct nvt_extent *fill, size_t nfill, void *zero,
		     struct nvt_err *err)
{
	for (size_t i = 0; i < nfill; i++) {
		for (uint64_t o = 0; o < fill[i].len;) {
			uint64_t k = fill[i].len - o < ZERO_BYTES ? fill[i].len - o : ZERO_BYTES;
			ssize_t w = pwrite(np->file_fd, zero, k, (off_t)(fill[i].logical + o));
			if (w <= 0) {
				int rc = w < 0 ? -errno : -ENOSPC;
				nvt_err_set(err, -rc, "%s: writing zeros at %llu: %s", np->path,
					    (unsigned long long)(fill[i].logical + o),
					    strerror(-rc));
				return rc;
			}
			o += (uint64_t)w;
		}
	}
	if (fsync(np->file_fd)) {
		nvt_err_set(err, errno, "%s: fsync: %s", np->path, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Map [0, size); where ranges are not yet written blocks, zero them once and map again. */
static int map_written(struct nvt_engine *e, struct nvme_priv *np, uint64_t size,
		       struct nvt_err *err)
{
	struct nvt_extent *fill = NULL;
	size_t nfill = 0;
	void *zero = NULL;
	int rc = 0;

	for (int pass = 0; pass < 2; pass++) {
		rc = nvt_nvme_target_map_file(&np->t, np->file_fd, np->path, size, &fill, &nfill,
					      err);
		if (rc || !nfill)
			break;
		if (pass) {
			nvt_err_set(err, EIO,
				    "%s: %zu ranges stay unallocated after writing zeros into them",
				    np->path, nfill);
			rc = -EIO;
			break;
		}
		if (!zero && posix_memalign(&zero, 4096, ZERO_BYTES)) {
			rc = -ENOMEM;
			nvt_err_set(err, ENOMEM, "out of memory");
			break;
		}
		memset(zero, 0, ZERO_BYTES);
		rc = zero_fill(np, fill, nfill, zero, err);
		for (size_t i = 0; i < nfill; i++)
			e->zero_filled += fill[i].len;
		e->zero_filled_unwritten = true;
		free(fill);
		fill = NULL;
		if (rc)
			break;
	}
	free(fill);
	free(zero);
	return rc;
}

int nvme_file_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;
	int rc;

	if (np->file_fd < 0)
		return 0;
	if (np->reserved) {
		nvt_err_set(err, EINVAL, "the nvme engine maps a file once, before recording");
		return -EINVAL;
	}
	np->reserved = true;
	size = (size + 4095) / 4096 * 4096;
	rc = nvt_file_allocate(np->file_fd, np->path, size, &e->zero_filled, err);
	if (!rc)
		rc = map_written(e, np, size, err);
	if (rc)
		return rc;
	np->file_bytes = size;
	np->immutable = set_immutable(np->file_fd, true);
	return 0;
}

int nvme_file_give_back(struct nvme_priv *np, struct nvt_err *err)
{
	struct nvt_nvme_target now = {0};
	struct nvt_extent *fill = NULL;
	size_t nfill = 0;
	int rc;

	np->trim_pending = false;
	now.file = true;
	rc = nvt_nvme_target_map_file(&now, np->file_fd, np->path, np->file_bytes, &fill, &nfill,
				      err);
	if (!rc && (nfill || now.next != np->t.next ||
		    memcmp(now.ext, np->t.ext, now.next * sizeof(*now.ext)))) {
		nvt_err_set(err, EIO,
			    "%s: the filesystem moved the file's blocks while nvtape wrote "
			    "underneath it: do not trust this recording",
			    np->path);
		rc = -EIO;
	}
	free(fill);
	nvt_nvme_target_free(&now);
	if (rc)
		return rc;
	if (np->immutable)
		np->immutable = !set_immutable(np->file_fd, false);
	/* A length inside a block makes the filesystem zero that block's tail through its page
	 * cache: a page cached before nvtape wrote beneath it (a reader of the previous recording
	 * in this file) would go back to the drive over what nvtape wrote (the index). */
	posix_fadvise(np->file_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (ftruncate(np->file_fd, (off_t)np->final_bytes) || fsync(np->file_fd)) {
		nvt_err_set(err, errno, "%s: trimming to %llu bytes: %s", np->path,
			    (unsigned long long)np->final_bytes, strerror(errno));
		return -errno;
	}
	return 0;
}

void nvme_file_close(struct nvme_priv *np)
{
	if (np->file_fd < 0)
		return;
	if (np->write) /* what nvtape wrote underneath must not hide behind stale pages */
		posix_fadvise(np->file_fd, 0, 0, POSIX_FADV_DONTNEED);
	if (np->immutable)
		set_immutable(np->file_fd, false);
	close(np->file_fd);
	np->file_fd = -1;
}
