/* SPDX-License-Identifier: MIT */
/* file engine: io_uring, O_DIRECT, registered file and fixed (registered) ring buffers,
 * qd I/Os in flight, fallocate reservation and trimming. Works on regular files and on block
 * devices. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "storage/engine.h"
#include "sys/devcheck.h"
#include "util/sysutil.h"
#include "storage/uring.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

struct file_priv {
	struct nvt_uring u;
	int fd;
	bool blockdev;
	unsigned qd;
};

static int file_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct file_priv *fp = calloc(1, sizeof(*fp));
	int flags = p->write ? (O_WRONLY | O_CREAT) : O_RDONLY;
	int rc;
	bool dev = false;
	struct stat st;

	if (!fp) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	e->priv = fp;
	fp->fd = -1;
	fp->qd = p->qd;
	if (stat(p->path, &st) == 0 && S_ISBLK(st.st_mode))
		fp->blockdev = true;
	/* a device is claimed for the recording: refused while it, or any partition of it, is
	 * mounted or held; a file is created new or taken only when empty or forced, never through
	 * a link, and locked before it is truncated (see nvt_lock_output) */
	if (fp->blockdev && p->write)
		flags = O_WRONLY | O_EXCL;
	if (p->write && !fp->blockdev)
		fp->fd = nvt_open_output(p->path, O_WRONLY | O_DIRECT, p->force, NULL, &dev, err);
	else
		fp->fd = nvt_open_data(p->path, flags | O_DIRECT, &dev, err);
	if (fp->fd == -ESPIPE) {
		fp->fd = -1;
		return -ESPIPE;
	}
	if (fp->fd >= 0 && dev != fp->blockdev) { /* swapped between the stat and the open */
		nvt_err_set(err, EAGAIN,
			    "%s changed from %s while it was opened; nothing was written", p->path,
			    dev ? "a file to a block device" : "a block device to a file");
		return -EAGAIN;
	}
	if (fp->fd == -EINVAL) {
		struct statfs sfs;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", p->path);
		bool tmpfs = statfs(fp->blockdev ? p->path : dirname(dir), &sfs) == 0 &&
			     sfs.f_type == TMPFS_MAGIC;
		fp->fd = -1;
		nvt_err_set(err, EINVAL,
			    "%s: the filesystem does not support O_DIRECT%s; record to a disk "
			    "filesystem (ext4, XFS) or a block device",
			    p->path, tmpfs ? " (it is tmpfs)" : "");
		return -EINVAL;
	}
	if (fp->fd < 0) {
		rc = -fp->fd;
		fp->fd = -1;
		nvt_err_open(err, rc, p->path, fp->blockdev, p->write, "");
		return -rc;
	}
	if (p->write && !fp->blockdev) {
		rc = nvt_lock_output(fp->fd, p->path, err);
		if (rc)
			return rc;
	}
	rc = nvt_uring_open(&fp->u, p->qd * 2 + 8, &fp->fd, 1, p, 0, 0, 0, err);
	if (rc)
		return rc;
	e->fixed_bufs = fp->u.fixed_bufs;
	e->can_reserve = !fp->blockdev;
	snprintf(e->desc, sizeof(e->desc), "file engine: io_uring O_DIRECT on %s%s, qd %u%s",
		 fp->blockdev ? "block device " : "", p->path, p->qd,
		 e->fixed_bufs ? ", fixed buffers" : ", unregistered buffers");
	return 0;
}

static int file_queue(struct nvt_engine *e, const struct nvt_io *io)
{
	struct file_priv *fp = e->priv;
	struct io_uring_sqe *sqe;

	if (e->inflight >= fp->qd + 2)
		return -EBUSY;
	sqe = nvt_uring_sqe(&fp->u);
	if (!sqe)
		return -EBUSY;
	nvt_uring_prep_rw(&fp->u, sqe, io, 0, io->buf, io->len, io->offset, io->tag);
	e->inflight++;
	return 0;
}

static int file_queue_sync(struct nvt_engine *e, uint64_t tag)
{
	struct file_priv *fp = e->priv;
	struct io_uring_sqe *sqe = nvt_uring_sqe(&fp->u);

	if (!sqe)
		return -EBUSY;
	nvt_uring_prep_sync(sqe, 0, tag);
	e->inflight++;
	return 0;
}

/* Queued I/Os go to the kernel with the next reap: one io_uring_enter both submits and waits. */
static int file_submit(struct nvt_engine *e)
{
	struct file_priv *fp = e->priv;

	nvt_uring_arm_wake(&fp->u);
	return 0;
}

static int file_reap(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		     int64_t timeout_ns)
{
	struct file_priv *fp = e->priv;
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	int rc = nvt_uring_wait(&fp->u, timeout_ns);

	if (rc)
		return rc;
	io_uring_for_each_cqe(&fp->u.ring, head, cqe)
	{
		if (n == max)
			break;
		out[n].tag = io_uring_cqe_get_data64(cqe);
		out[n].res = cqe->res;
		if (!nvt_uring_take_wake(&fp->u, out[n].tag))
			e->inflight--;
		n++;
	}
	io_uring_cq_advance(&fp->u.ring, n);
	return (int)n;
}

/* A filesystem without fallocate (exFAT on Linux 6.1) turns an O_DIRECT write that extends a
 * file into a buffered write and a flush, 10-20x slower. So the range is made to exist, zeroed,
 * before recording (nvt_file_allocate); later I/O overwrites it at full speed. Reserving ahead
 * during a recording would then block writing, so it stops there. */
static int file_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct file_priv *fp = e->priv;
	int rc;

	if (fp->blockdev)
		return 0;
	rc = nvt_file_allocate(fp->fd, "", size, &e->zero_filled, err);
	if (e->zero_filled)
		e->can_reserve = false;
	return rc;
}

static int file_truncate(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct file_priv *fp = e->priv;

	if (fp->blockdev)
		return 0;
	if (ftruncate(fp->fd, (off_t)size)) {
		nvt_err_set(err, errno, "ftruncate to %llu bytes: %s", (unsigned long long)size,
			    strerror(errno));
		return -errno;
	}
	return 0;
}

static int file_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	struct file_priv *fp = e->priv;

	if (fdatasync(fp->fd)) {
		nvt_err_set(err, errno, "fdatasync: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int file_write_sync(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			   struct nvt_err *err)
{
	struct file_priv *fp = e->priv;
	ssize_t n = pwrite(fp->fd, buf, len, (off_t)offset);

	if (n == (ssize_t)len)
		return 0;
	nvt_err_set(err, n < 0 ? errno : ENOSPC, "write of %llu bytes at offset %llu: %s",
		    (unsigned long long)len, (unsigned long long)offset,
		    n < 0 ? strerror(errno) : "short write (no space left?)");
	return n < 0 ? -errno : -ENOSPC;
}

static void file_close(struct nvt_engine *e)
{
	struct file_priv *fp = e->priv;

	if (!fp)
		return;
	nvt_uring_close(&fp->u, e->inflight == 0);
	if (fp->fd >= 0) {
		flock(fp->fd, LOCK_UN); /* at once, whoever still holds a reference to the file */
		close(fp->fd);
	}
	free(fp);
	e->priv = NULL;
}

const struct nvt_engine_ops nvt_engine_file = {
	.name = "file",
	.help = "io_uring O_DIRECT writes/reads from the registered ring (files and block devices)",
	.caps = NVT_ENGINE_FIXED_BUFS,
	.open = file_open,
	.queue = file_queue,
	.queue_sync = file_queue_sync,
	.submit = file_submit,
	.reap = file_reap,
	.reserve = file_reserve,
	.truncate = file_truncate,
	.sync_now = file_sync_now,
	.write_sync = file_write_sync,
	.close = file_close,
};
