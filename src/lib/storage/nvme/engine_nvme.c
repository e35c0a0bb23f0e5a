/* SPDX-License-Identifier: MIT */
/* nvme engine: the datapath behind the ops table. nvtape builds the NVMe commands itself
 * (nvme_cmd.c) and submits them with io_uring passthrough (IORING_OP_URING_CMD, SQE128/CQE32)
 * on the namespaces' char devices /dev/ngXnY, bypassing the filesystem and the block layer. It
 * drives one namespace, a stripe over several (md RAID0 layout), or the blocks of a
 * preallocated file on a volume made of them (nvme_file.c). Each I/O is split into commands no
 * larger than the drive and the kernel accept (nvme_identify.c); every drive keeps qd commands
 * in flight, from the ring's registered (fixed) buffers; a command outstanding longer than the
 * timeout fails its drive. */
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
#include "storage/nvme/nvme_status.h"
#include "util/sysutil.h"

/* Hand waiting commands to every drive with a free queue slot. */
static void pump(struct nvme_priv *np)
{
	uint64_t now = 0;

	for (unsigned i = 0; i < np->t.n; i++) {
		struct nvme_ns *n = &np->ns[i];
		while (n->wcount && n->inflight < np->qd) {
			unsigned c = n->wait[n->whead];
			struct io_uring_sqe *sqe = nvt_uring_sqe(&np->u);
			if (!sqe)
				return;
			n->whead = (n->whead + 1) % n->wcap;
			n->wcount--;
			nvme_cmd_prep_sqe(np, sqe, c);
			if (!now)
				now = nvt_mono_ns();
			np->cmd[c].t_submit = now;
			np->cmd[c].submitted = true;
			n->inflight++;
		}
	}
}

/* The engine's state, before anything is opened. */
static struct nvme_priv *priv_new(const struct nvt_engine_params *p, const struct nvt_layout *l,
				  struct nvt_err *err)
{
	struct nvme_priv *np = calloc(1, sizeof(*np));

	if (!np) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return NULL;
	}
	np->file_fd = -1;
	for (unsigned i = 0; i < NVT_MAX_MEMBERS; i++)
		np->ns[i].fd = np->ns[i].claim_fd = -1;
	np->write = p->write;
	np->path = l->path[0];
	np->qd = p->qd;
	np->timeout_ns = p->cmd_timeout_ns;
	return np;
}

/* A file on a volume (a path outside /dev that is a regular file or does not exist yet), or
 * raw namespaces. */
static int open_target(struct nvme_priv *np, const struct nvt_layout *l,
		       const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct stat st;

	if (l->n == 1 && strncmp(l->path[0], "/dev/", 5) &&
	    (stat(l->path[0], &st) || S_ISREG(st.st_mode)))
		return nvme_file_open(np, l->path[0], p, err);
	return nvt_nvme_target_raw(l, &np->t, err);
}

/* Open and identify every namespace; raw namespaces must hold the whole recording. */
static int open_drives(struct nvt_engine *e, struct nvme_priv *np,
		       const struct nvt_engine_params *p, int *fds, struct nvt_err *err)
{
	for (unsigned i = 0; i < np->t.n; i++) {
		int rc = nvme_ns_open(e, np, i, p->write, err);
		if (rc)
			return rc;
		fds[i] = np->ns[i].fd;
		if (p->write && p->prealloc && !np->t.file) {
			struct nvt_layout g = {.n = np->t.n, .stripe = np->t.stripe};
			uint64_t need = np->t.m[i].base + nvt_layout_share(&g, i, p->prealloc);
			if (need > np->ns[i].capacity) {
				nvt_err_set(err, ENOSPC,
					    "%s: the recording needs %llu bytes of this namespace, "
					    "it has %llu",
					    np->ns[i].ng, (unsigned long long)need,
					    (unsigned long long)np->ns[i].capacity);
				return -ENOSPC;
			}
		}
	}
	e->ndrives = np->t.n;
	e->io_path = NVT_PATH_NVME;
	return 0;
}

/* A fixed buffer is handed to the block layer from the command's start to the end of its
 * registration, and 6.1 refuses a passthrough command whose registered buffer spans more pages
 * than max_segments: the ring is registered in slices no larger than a command, and a command
 * never crosses a slice. Over a stripe the slices divide the stripe chunk and their edges fall
 * on its edges (chunk byte 0 is logical byte p->buf_phase), so a stripe piece takes the fewest
 * commands. */
static uint64_t slice_bytes(const struct nvme_priv *np)
{
	uint64_t slice = UINT64_MAX;

	for (unsigned i = 0; i < np->t.n; i++)
		if (np->ns[i].max_cmd < slice)
			slice = np->ns[i].max_cmd;
	if (np->t.n > 1) {
		uint64_t s = np->t.stripe;
		while (s > slice && !(s & 1))
			s /= 2;
		slice = s <= slice ? s : 4096;
	}
	return slice;
}

static int open_ring(struct nvt_engine *e, struct nvme_priv *np, const struct nvt_engine_params *p,
		     const int *fds, struct nvt_err *err)
{
	uint64_t slice = slice_bytes(np);
	int rc = nvt_uring_open(&np->u, np->qd * np->t.n + 16, fds, np->t.n, p,
				IORING_SETUP_SQE128 | IORING_SETUP_CQE32, slice,
				np->t.n > 1 ? p->buf_phase : 0, err);

	if (rc)
		return rc;
	e->fixed_bufs = np->u.fixed_bufs;
	np->bufs = p->bufs;
	np->buf_bytes = p->buf_bytes;
	for (unsigned i = 0; e->fixed_bufs && i < np->t.n; i++) {
		np->ns[i].max_cmd = slice;
		e->drive[i].max_cmd_kib = (uint32_t)(slice >> 10);
	}
	return 0;
}

/* What was opened and how, for banners. */
static void describe(struct nvt_engine *e, const struct nvme_priv *np, const struct nvt_layout *l)
{
	char where[200];

	if (np->t.file)
		snprintf(where, sizeof(where), "file %.80s on %.100s", l->path[0], np->t.volume);
	else if (np->t.n > 1)
		snprintf(where, sizeof(where), "%s..%s striped, %llu KiB chunks", np->ns[0].ng,
			 np->ns[np->t.n - 1].ng, (unsigned long long)(np->t.stripe >> 10));
	else
		snprintf(where, sizeof(where), "%s", np->ns[0].ng);
	snprintf(e->desc, sizeof(e->desc),
		 "nvme engine: %.200s (%.40s), %u-byte LBAs, commands <= %llu KiB, qd %u per "
		 "drive%s",
		 where, e->drive[0].model, 1u << np->ns[0].lba_shift,
		 (unsigned long long)(np->ns[0].max_cmd >> 10), np->qd,
		 e->fixed_bufs ? ", fixed buffers" : "");
}

static int nvme_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct nvt_layout one;
	const struct nvt_layout *l = p->layout;
	int fds[NVT_MAX_MEMBERS];
	struct nvme_priv *np;
	int rc;

	if (!l || !l->n) {
		nvt_layout_single(&one, p->path);
		l = &one;
	}
	np = priv_new(p, l, err);
	if (!np)
		return -ENOMEM;
	e->priv = np;
	if (!np->qd || np->qd > NVT_NVME_MAX_QD) {
		nvt_err_set(err, EINVAL,
			    "the nvme engine keeps 1 to %u commands in flight per drive, not %u",
			    NVT_NVME_MAX_QD, np->qd);
		return -EINVAL;
	}
	rc = open_target(np, l, p, err);
	if (!rc)
		rc = open_drives(e, np, p, fds, err);
	if (rc)
		return rc;
	if (nvt_split_init(&np->split, p->nbufs ? p->nbufs + 4 : 64)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	rc = open_ring(e, np, p, fds, err);
	if (rc)
		return rc;
	e->can_reserve = np->t.file && p->write;
	/* ring chunks in flight that keep qd commands queued on every drive, and one more */
	{
		uint64_t chunk = p->buf_bytes ? p->buf_bytes : (8u << 20);
		uint64_t want = (uint64_t)np->qd * np->t.n * np->ns[0].max_cmd;
		e->depth = (unsigned)((want + chunk - 1) / chunk + 1);
	}
	describe(e, np, l);
	return 0;
}

/* The next command of an I/O at logical byte off: its drive (*m), namespace byte (*nsoff) and
 * length: at most len and cap, inside one mapped run, no larger than the drive takes; 0 when off
 * is not mapped or the command would pass the end of the namespace. */
static uint64_t next_cmd(const struct nvme_priv *np, uint64_t off, uint64_t len, uint64_t cap,
			 unsigned *m, uint64_t *nsoff)
{
	uint64_t run, k;

	*m = nvt_nvme_target_map(&np->t, off, nsoff, &run);
	k = run < len ? run : len;
	if (k > np->ns[*m].max_cmd)
		k = np->ns[*m].max_cmd;
	if (k > cap)
		k = cap;
	return run && *nsoff + k <= np->ns[*m].capacity ? k : 0;
}

static int nvme_queue(struct nvt_engine *e, const struct nvt_io *io)
{
	struct nvme_priv *np = e->priv;
	uint8_t *buf = io->buf;
	uint64_t off = io->offset, len = io->len;
	int pi;

	if ((pi = nvt_split_take(&np->split, io->tag)) < 0)
		return -EBUSY;
	e->inflight++;
	while (len) {
		uint64_t nsoff, k, room = UINT64_MAX;
		int slice = -1;
		unsigned m;
		if (io->buf_index >= 0 && np->u.fixed_bufs) /* not across a registered slice */
			slice = (int)((unsigned)io->buf_index * np->u.slices_per_buf +
				      nvt_uring_slice_of(&np->u,
							 (uint64_t)(buf - np->bufs) % np->buf_bytes,
							 &room));
		k = next_cmd(np, off, len, room, &m, &nsoff);
		if (!k || np->ns[m].dead ||
		    nvme_cmd_add(np, (unsigned)pi, m,
				 io->dir == NVT_IO_WRITE ? NVME_CMD_WRITE : NVME_CMD_READ, buf, k,
				 nsoff, slice)) {
			/* past the file's mapped blocks or the namespace (no space), a dead
			 * drive, no memory */
			int64_t res = !k ? -ENOSPC : np->ns[m].dead ? -ETIMEDOUT : -ENOMEM;
			if (np->split.par[pi].pending)
				np->split.par[pi].res = res;
			else if (nvt_split_fail(&np->split, (unsigned)pi, res))
				e->inflight--;
			break;
		}
		buf += k;
		off += k;
		len -= k;
	}
	return 0;
}

static int nvme_queue_sync(struct nvt_engine *e, uint64_t tag)
{
	struct nvme_priv *np = e->priv;
	int pi = nvt_split_take(&np->split, tag);

	if (pi < 0)
		return -EBUSY;
	e->inflight++;
	for (unsigned i = 0; i < np->t.n; i++)
		if (nvme_cmd_add(np, (unsigned)pi, i, NVME_CMD_FLUSH, NULL, 0, 0, -1))
			np->split.par[pi].res = -ENOMEM;
	return 0;
}

static int nvme_submit(struct nvt_engine *e)
{
	struct nvme_priv *np = e->priv;

	pump(np);
	nvt_uring_arm_wake(&np->u);
	return 0;
}

/* A drive whose oldest command has been outstanding longer than the timeout is dead: its
 * commands fail their I/Os now (what lands later is ignored) and nothing more goes to it. */
static void check_timeouts(struct nvt_engine *e, struct nvme_priv *np)
{
	uint64_t now = nvt_mono_ns();

	if (!np->timeout_ns || now - np->last_scan < 50000000ull)
		return;
	np->last_scan = now;
	for (unsigned c = 0; c < np->ncmd; c++) {
		struct nvme_cmd *k = &np->cmd[c];
		struct nvme_ns *n = &np->ns[k->ns];
		if (!k->used || !k->submitted || n->dead || now - k->t_submit < np->timeout_ns)
			continue;
		n->dead = true;
		snprintf(e->fault, sizeof(e->fault),
			 "%s (%s, serial %s: stopped responding, a %s command outstanding for "
			 "%.1f s)",
			 n->ng, e->drive[k->ns].model, e->drive[k->ns].serial,
			 nvme_opcode_name(k->opcode), (now - k->t_submit) / 1e9);
	}
	for (unsigned c = 0; c < np->ncmd; c++) {
		struct nvme_cmd *k = &np->cmd[c];
		if (k->used && np->ns[k->ns].dead &&
		    nvt_split_fail(&np->split, k->parent, -ETIMEDOUT))
			e->inflight--;
	}
	for (unsigned i = 0; i < np->t.n; i++) { /* waiting commands of a dead drive: gone */
		struct nvme_ns *n = &np->ns[i];
		while (n->dead && n->wcount) {
			unsigned c = n->wait[n->whead];
			n->whead = (n->whead + 1) % n->wcap;
			n->wcount--;
			if (nvt_split_piece_done(&np->split, np->cmd[c].parent, -ETIMEDOUT))
				e->inflight--;
			nvme_cmd_release(np, c);
		}
	}
}

static int nvme_reap(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		     int64_t timeout_ns)
{
	struct nvme_priv *np = e->priv;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, n = 0;
	bool woke = false;
	int64_t wait = np->split.nready ? 0 : timeout_ns;
	int rc;

	if (np->timeout_ns && wait > (int64_t)(np->timeout_ns / 4))
		wait = (int64_t)(np->timeout_ns / 4);
	rc = nvt_uring_wait(&np->u, wait);
	if (rc)
		return rc;
	io_uring_for_each_cqe(&np->u.ring, head, cqe)
	{
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		seen++;
		if (nvt_uring_take_wake(&np->u, ud)) {
			woke = true;
			continue;
		}
		struct nvme_cmd *k = &np->cmd[ud];
		struct nvme_ns *ns = &np->ns[k->ns];
		ns->inflight--;
		/* res: -errno, an NVMe status (> 0), or 0: the command moved its whole length */
		if (cqe->res && !e->fault[0]) {
			char st[128];
			snprintf(e->fault, sizeof(e->fault), "%s (%s)", ns->ng,
				 cqe->res < 0
					 ? strerror(-cqe->res)
					 : nvt_nvme_status_str((unsigned)cqe->res, st, sizeof(st)));
		}
		if (nvt_split_piece_done(&np->split, k->parent,
					 cqe->res < 0   ? cqe->res
					 : cqe->res > 0 ? -EIO
							: (int64_t)k->len))
			e->inflight--;
		nvme_cmd_release(np, (unsigned)ud);
	}
	io_uring_cq_advance(&np->u.ring, seen);
	check_timeouts(e, np);
	pump(np);
	if (woke && max)
		out[n++] = (struct nvt_io_done){.tag = NVT_TAG_WAKE, .res = 0};
	return (int)(n + nvt_split_pop(&np->split, out + n, max - n));
}

/* Synchronous I/O at a logical offset, through the map. */
static int sync_io(struct nvme_priv *np, uint8_t opcode, void *buf, uint64_t len, uint64_t off,
		   struct nvt_err *err)
{
	while (len) {
		uint64_t nsoff;
		unsigned m;
		uint64_t k = next_cmd(np, off, len, UINT64_MAX, &m, &nsoff);
		int rc;
		if (!k) {
			nvt_err_set(err, ENOSPC,
				    "offset %llu is past the blocks reserved for %s: no space",
				    (unsigned long long)off, np->path);
			return -ENOSPC;
		}
		rc = nvme_ns_cmd_sync(np, m, opcode, buf, k, nsoff, err);
		if (rc)
			return rc;
		buf = (uint8_t *)buf + k;
		off += k;
		len -= k;
	}
	return 0;
}

static int nvme_write_sync(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			   struct nvt_err *err)
{
	return sync_io(e->priv, NVME_CMD_WRITE, (void *)buf, len, offset, err);
}

static int nvme_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	return nvme_file_reserve(e, size, err);
}

/* The recording's final length. The file keeps its blocks until sync_now: what is written after
 * this (the index, the header) still lands inside blocks the file owns. */
static int nvme_truncate(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;

	(void)err;
	if (np->file_fd >= 0 && np->write) {
		np->final_bytes = size;
		np->trim_pending = true;
	}
	return 0;
}

static int nvme_flush_now(struct nvt_engine *e, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;

	for (unsigned i = 0; i < np->t.n; i++)
		if (!np->ns[i].dead && nvme_ns_cmd_sync(np, i, NVME_CMD_FLUSH, NULL, 0, 0, err))
			return -EIO;
	return 0;
}

static int nvme_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;

	if (nvme_flush_now(e, err))
		return -EIO;
	return np->trim_pending ? nvme_file_give_back(np, err) : 0;
}

/* What nvtape wrote underneath must not be hidden by stale cached pages of the block devices. */
static void drop_ns_caches(const struct nvme_priv *np)
{
	for (unsigned i = 0; i < np->t.n; i++) {
		char dev[40];
		int fd;
		snprintf(dev, sizeof(dev), "/dev/nvme%un%u", np->t.m[i].ctrl, np->t.m[i].ns);
		fd = open(dev, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			if (ioctl(fd, BLKFLSBUF, 0)) {
				/* not ours to flush (no CAP_SYS_ADMIN): readers use O_DIRECT */
			}
			close(fd);
		}
	}
}

static void nvme_close(struct nvt_engine *e)
{
	struct nvme_priv *np = e->priv;

	if (!np)
		return;
	nvt_uring_close(&np->u, e->inflight == 0);
	if (np->write && np->file_fd < 0)
		drop_ns_caches(np);
	nvme_file_close(np);
	for (unsigned i = 0; i < NVT_MAX_MEMBERS; i++) {
		if (np->ns[i].fd >= 0)
			close(np->ns[i].fd);
		if (np->ns[i].claim_fd >= 0)
			close(np->ns[i].claim_fd);
		free(np->ns[i].wait);
	}
	nvt_split_free(&np->split);
	nvt_nvme_target_free(&np->t);
	free(np->cmd);
	free(np->free_cmd);
	free(np);
	e->priv = NULL;
}

const struct nvt_engine_ops nvt_engine_nvme = {
	.name = "nvme",
	.help = "NVMe commands built by nvtape, io_uring passthrough on /dev/ngXnY",
	.caps = NVT_ENGINE_FILE_NEEDS_SIZE | NVT_ENGINE_QD_PER_DRIVE | NVT_ENGINE_FIXED_BUFS,
	.max_qd = NVT_NVME_MAX_QD,
	.default_qd = NVT_NVME_DEFAULT_QD,
	.open = nvme_open,
	.queue = nvme_queue,
	.queue_sync = nvme_queue_sync,
	.submit = nvme_submit,
	.reap = nvme_reap,
	.reserve = nvme_reserve,
	.truncate = nvme_truncate,
	.sync_now = nvme_sync_now,
	.flush_now = nvme_flush_now,
	.write_sync = nvme_write_sync,
	.close = nvme_close,
};
