/* SPDX-License-Identifier: MIT */
/* stripe engine: io_uring O_DIRECT over several files or devices in the Linux md RAID0 layout
 * (layout.h). Each I/O is split at chunk boundaries into one request per piece, all submitted
 * at once, so every member has its own queue of work and every drive is busy at the same time;
 * the I/O completes when its last piece does, with the first error of any piece. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "storage/layout_io.h"
#include "storage/engine.h"
#include "nvtape/layout.h"
#include "sys/devcheck.h"
#include "util/sysutil.h"
#include "storage/uring.h"

struct stripe_priv {
	struct nvt_uring u;
	struct nvt_layout l;
	int fd[NVT_MAX_MEMBERS];
	bool blockdev;
	unsigned qd;
	struct nvt_split split;
	unsigned busy[NVT_MAX_MEMBERS]; /* pieces submitted to each member, not yet completed */
};

static int stripe_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct stripe_priv *sp = calloc(1, sizeof(*sp));
	int flags = p->write ? (O_WRONLY | O_CREAT) : O_RDONLY;
	unsigned pieces, entries;
	int rc;

	if (!sp) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	e->priv = sp;
	for (unsigned m = 0; m < NVT_MAX_MEMBERS; m++)
		sp->fd[m] = -1;
	if (!p->layout || nvt_layout_check(p->layout, err))
		return -EINVAL;
	sp->l = *p->layout;
	sp->qd = p->qd;
	for (unsigned m = 0; m < sp->l.n; m++) {
		struct stat st;
		int f = flags;
		bool dev = stat(sp->l.path[m], &st) == 0 && S_ISBLK(st.st_mode);
		if (dev)
			sp->blockdev = true;
		if (dev && p->write)
			f = O_WRONLY |
			    O_EXCL; /* claimed: refused while it or a partition is in use */
		bool is_dev = false;
		sp->fd[m] = p->write && !dev
				    ? nvt_open_output(sp->l.path[m], O_WRONLY | O_DIRECT, p->force,
						      NULL, &is_dev, err)
				    : nvt_open_data(sp->l.path[m], f | O_DIRECT, &is_dev, err);
		if (sp->fd[m] == -ESPIPE) {
			sp->fd[m] = -1;
			return -ESPIPE;
		}
		if (sp->fd[m] < 0) {
			rc = -sp->fd[m];
			sp->fd[m] = -1;
			nvt_err_open(err, rc, sp->l.path[m], dev, p->write, " with O_DIRECT");
			return -rc;
		}
		if (is_dev != dev) {
			nvt_err_set(err, EAGAIN,
				    "%s changed type while it was opened; nothing was written",
				    sp->l.path[m]);
			return -EAGAIN;
		}
		if (p->write && !dev) {
			rc = nvt_lock_output(sp->fd[m], sp->l.path[m], err);
			if (rc)
				return rc;
		}
	}
	/* pieces of one I/O: its length over the chunk, plus one for a misaligned start */
	pieces = (unsigned)((p->buf_bytes ? p->buf_bytes : (8u << 20)) / sp->l.stripe) + 2;
	entries = (p->qd + 4) * (pieces > sp->l.n ? pieces : sp->l.n) + 8;
	if (nvt_split_init(&sp->split, p->qd + 4)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	rc = nvt_uring_open(&sp->u, entries, sp->fd, sp->l.n, p, 0, 0, 0, err);
	if (rc)
		return rc;
	e->fixed_bufs = sp->u.fixed_bufs;
	e->can_reserve = !sp->blockdev;
	snprintf(e->desc, sizeof(e->desc),
		 "stripe engine: io_uring O_DIRECT over %u members, %llu KiB chunks, qd %u%s",
		 sp->l.n, (unsigned long long)(sp->l.stripe >> 10), p->qd,
		 e->fixed_bufs ? ", fixed buffers" : "");
	return 0;
}

static int stripe_queue(struct nvt_engine *e, const struct nvt_io *io)
{
	struct stripe_priv *sp = e->priv;
	uint8_t *buf = io->buf;
	uint64_t off = io->offset, len = io->len;
	int pi;

	if (e->inflight >= sp->qd + 2 || (pi = nvt_split_take(&sp->split, io->tag)) < 0)
		return -EBUSY;
	while (len) {
		uint64_t moff, run;
		unsigned m = nvt_layout_map(&sp->l, off, &moff, &run);
		uint64_t k = run < len ? run : len;
		struct io_uring_sqe *sqe = nvt_uring_sqe(&sp->u);
		if (!sqe) { /* cannot happen with the ring sized for qd full I/Os */
			sp->split.par[pi].res = -EBUSY;
			break;
		}
		nvt_uring_prep_rw(&sp->u, sqe, io, (int)m, buf, k, moff,
				  ((uint64_t)pi << 32) | (m << 16) | 1u);
		sp->split.par[pi].pending++;
		sp->busy[m]++;
		buf += k;
		off += k;
		len -= k;
	}
	e->inflight++;
	return 0;
}

static int stripe_queue_sync(struct nvt_engine *e, uint64_t tag)
{
	struct stripe_priv *sp = e->priv;
	int pi = nvt_split_take(&sp->split, tag);

	if (pi < 0)
		return -EBUSY;
	for (unsigned m = 0; m < sp->l.n; m++) {
		struct io_uring_sqe *sqe = nvt_uring_sqe(&sp->u);
		if (!sqe)
			return -EBUSY;
		nvt_uring_prep_sync(sqe, (int)m, ((uint64_t)pi << 32) | (m << 16) | 1u);
		sp->split.par[pi].pending++;
		sp->busy[m]++;
	}
	e->inflight++;
	return 0;
}

static int stripe_submit(struct nvt_engine *e)
{
	struct stripe_priv *sp = e->priv;

	nvt_uring_arm_wake(&sp->u);
	return 0; /* submitted with the next reap: one io_uring_enter for both */
}

static int stripe_reap(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		       int64_t timeout_ns)
{
	struct stripe_priv *sp = e->priv;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, n = 0;
	bool woke = false;
	int rc = nvt_uring_wait(&sp->u, sp->split.nready ? 0 : timeout_ns);

	if (rc)
		return rc;
	io_uring_for_each_cqe(&sp->u.ring, head, cqe)
	{
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		unsigned m = (unsigned)((ud >> 16) & 0xffff);
		seen++;
		if (nvt_uring_take_wake(&sp->u, ud)) {
			woke = true;
			continue;
		}
		if (cqe->res < 0 && !e->fault[0])
			snprintf(e->fault, sizeof(e->fault), "member %u, %s", m + 1, sp->l.path[m]);
		if (m < NVT_MAX_MEMBERS && sp->busy[m])
			sp->busy[m]--;
		if (nvt_split_piece_done(&sp->split, (unsigned)(ud >> 32), cqe->res))
			e->inflight--;
	}
	io_uring_cq_advance(&sp->u.ring, seen);
	if (woke && max)
		out[n++] = (struct nvt_io_done){.tag = NVT_TAG_WAKE, .res = 0};
	return (int)(n + nvt_split_pop(&sp->split, out + n, max - n));
}

static int stripe_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct stripe_priv *sp = e->priv;

	if (sp->blockdev)
		return 0;
	for (unsigned m = 0; m < sp->l.n; m++) {
		uint64_t want = sp->l.member_offset + nvt_layout_share(&sp->l, m, size);
		if (want && fallocate(sp->fd[m], 0, 0, (off_t)want)) {
			int rc = errno;
			nvt_err_set(err, rc, "%s: %s", sp->l.path[m],
				    rc == ENOSPC ? "not enough free space" : strerror(rc));
			return -rc;
		}
	}
	return 0;
}

static int stripe_truncate(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct stripe_priv *sp = e->priv;

	if (sp->blockdev)
		return 0;
	for (unsigned m = 0; m < sp->l.n; m++) {
		uint64_t want = sp->l.member_offset + nvt_layout_share(&sp->l, m, size);
		if (ftruncate(sp->fd[m], (off_t)want)) {
			nvt_err_set(err, errno, "%s: ftruncate: %s", sp->l.path[m],
				    strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int stripe_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	struct stripe_priv *sp = e->priv;

	for (unsigned m = 0; m < sp->l.n; m++) {
		if (fdatasync(sp->fd[m])) {
			nvt_err_set(err, errno, "%s: fdatasync: %s", sp->l.path[m],
				    strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int stripe_write_sync(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			     struct nvt_err *err)
{
	struct stripe_priv *sp = e->priv;
	int rc = nvt_layout_pwrite(&sp->l, sp->fd, buf, len, offset);

	if (rc)
		nvt_err_set(err, -rc, "write of %llu bytes at offset %llu: %s",
			    (unsigned long long)len, (unsigned long long)offset, strerror(-rc));
	return rc;
}

static void stripe_close(struct nvt_engine *e)
{
	struct stripe_priv *sp = e->priv;

	if (!sp)
		return;
	nvt_uring_close(&sp->u, e->inflight == 0);
	for (unsigned m = 0; m < NVT_MAX_MEMBERS; m++)
		if (sp->fd[m] >= 0) {
			flock(sp->fd[m], LOCK_UN);
			close(sp->fd[m]);
		}
	nvt_split_free(&sp->split);
	free(sp);
	e->priv = NULL;
}

/* The members with pieces outstanding: the stalled ones, when the others have answered. */
static void stripe_stuck(struct nvt_engine *e, char *buf, size_t cap)
{
	struct stripe_priv *sp = e->priv;
	size_t n = 0;

	buf[0] = 0;
	for (unsigned m = 0; m < sp->l.n && n < cap; m++) {
		if (!sp->busy[m])
			continue;
		int k = snprintf(buf + n, cap - n, "%smember %u, %s: %u I/Os outstanding",
				 n ? "; " : "", m + 1, sp->l.path[m], sp->busy[m]);
		n = k < 0 ? cap : n + (size_t)k;
	}
}

const struct nvt_engine_ops nvt_engine_stripe = {
	.name = "stripe",
	.help = "io_uring O_DIRECT over several members in the md RAID0 layout, one queue each",
	.caps = NVT_ENGINE_FIXED_BUFS | NVT_ENGINE_INTERNAL,
	.open = stripe_open,
	.queue = stripe_queue,
	.queue_sync = stripe_queue_sync,
	.submit = stripe_submit,
	.reap = stripe_reap,
	.reserve = stripe_reserve,
	.truncate = stripe_truncate,
	.sync_now = stripe_sync_now,
	.write_sync = stripe_write_sync,
	.close = stripe_close,
	.stuck = stripe_stuck,
};
