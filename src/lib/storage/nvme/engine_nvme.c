/* SPDX-License-Identifier: MIT */
/* nvme engine: nvtape builds the NVMe Write (0x01), Read (0x02) and Flush (0x00) commands
 * itself and submits them with io_uring passthrough (IORING_OP_URING_CMD, SQE128/CQE32) on the
 * namespaces' char devices /dev/ngXnY, bypassing the filesystem and the block layer. It drives
 * one namespace, a stripe over several (md RAID0 layout), or the blocks of a preallocated file
 * on a volume made of them (nvme_target.c). Each I/O is split into commands no larger than the
 * drive and the kernel accept (MDTS, max_hw_sectors_kb, max_segments x 4 KiB: a passthrough
 * command is never split by the kernel); every drive keeps --qd commands in flight, from the
 * ring's registered (fixed) buffers; a command outstanding longer than the timeout fails its
 * drive. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/nvme/nvme_status.h"
#include "storage/nvme/file_map.h"
#include "storage/engine.h"
#include "util/sysutil.h"
#include "storage/uring.h"

#define NVME_CMD_FLUSH 0x00
#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ  0x02

struct nvme_ns {
	int fd;
	char ng[32];
	uint32_t nsid, lba_shift;
	uint64_t capacity, max_cmd;
	unsigned inflight; /* commands submitted, not completed */
	bool dead;         /* a command timed out: nothing more goes to this drive */
	unsigned *wait;    /* commands waiting for a free queue slot (FIFO) */
	unsigned whead, wcount, wcap;
};

struct nvme_cmd {
	uint64_t t_submit;
	uint64_t off;
	void *buf;
	uint32_t len;
	unsigned parent;
	int buf_index; /* the registered slice it lies in, -1 = not a fixed buffer */
	uint8_t opcode, ns;
	bool used, submitted;
};

struct nvme_priv {
	struct nvt_uring u;
	struct nvt_nvme_target t;
	struct nvme_ns ns[NVT_MAX_MEMBERS];
	unsigned qd;
	struct nvme_cmd *cmd;
	unsigned ncmd;
	unsigned *free_cmd;
	unsigned nfree;
	struct nvt_split split;
	uint64_t timeout_ns, last_scan;
	uint8_t *bufs; /* the ring, registered in slices (np->u.slice) */
	uint64_t buf_bytes;
	/* a file on a volume */
	int file_fd;
	const char *path;
	bool write, immutable, reserved, trim_pending;
	uint64_t file_bytes, final_bytes;
};

static long read_queue_attr(unsigned ctrl, unsigned ns, const char *attr)
{
	char path[128];
	long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/nvme%un%u/queue/%s", ctrl, ns, attr);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int admin_identify(const struct nvme_ns *n, uint32_t cns, uint32_t nsid, uint8_t *buf,
			  struct nvt_err *err)
{
	struct nvme_admin_cmd c = {.opcode = 0x06,
				   .nsid = nsid,
				   .addr = (uintptr_t)buf,
				   .data_len = 4096,
				   .cdw10 = cns};
	int rc = ioctl(n->fd, NVME_IOCTL_ADMIN_CMD, &c);

	if (rc) {
		char st[128];
		nvt_err_set(err, rc < 0 ? errno : EIO, "%s: Identify (CNS %u) failed: %s", n->ng,
			    cns,
			    rc < 0 ? strerror(errno)
				   : nvt_nvme_status_str((unsigned)rc, st, sizeof(st)));
		return -EIO;
	}
	return 0;
}

/* Open /dev/ngCnN and identify it: LBA format, capacity, write protection, MDTS, names. */
static int open_ns(struct nvt_engine *e, struct nvme_priv *np, unsigned i, bool write,
		   struct nvt_err *err)
{
	struct nvme_ns *n = &np->ns[i];
	const struct nvt_nvme_member *m = &np->t.m[i];
	struct nvt_drive *d = &e->drive[i];
	uint8_t *id = NULL;
	int rc;

	snprintf(n->ng, sizeof(n->ng), "/dev/ng%un%u", m->ctrl, m->ns);
	n->fd = open(n->ng, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (n->fd < 0) {
		rc = errno;
		nvt_err_set(err, rc, "cannot open %s: %s (NVMe char devices need Linux 5.13+)",
			    n->ng, strerror(rc));
		return -rc;
	}
	rc = ioctl(n->fd, NVME_IOCTL_ID);
	if (rc <= 0 || posix_memalign((void **)&id, 4096, 4096)) {
		nvt_err_set(err, EIO, "%s: cannot get the namespace id", n->ng);
		return -EIO;
	}
	n->nsid = (uint32_t)rc;
	rc = admin_identify(n, 0, n->nsid, id, err);
	if (!rc) {
		uint64_t nsze;
		uint32_t lbaf;
		memcpy(&nsze, id, 8);
		memcpy(&lbaf, id + 128 + 4 * (id[26] & 0xf), 4);
		n->lba_shift = (lbaf >> 16) & 0xff;
		n->capacity = nsze << n->lba_shift;
		if ((lbaf & 0xffff) || (id[29] & 0x7) || n->lba_shift < 9 || n->lba_shift > 12) {
			nvt_err_set(
				err, EINVAL,
				"%s: LBA format with %u bytes of metadata, protection type %u, "
				"%u-byte blocks: nvtape drives 512-byte to 4 KiB blocks without "
				"metadata or protection information (reformat: nvme format)",
				n->ng, lbaf & 0xffff, id[29] & 0x7, 1u << n->lba_shift);
			rc = -EINVAL;
		} else if (write && (id[99] & 1)) {
			nvt_err_set(err, EROFS,
				    "%s: the namespace is write protected (NSATTR): nvtape cannot "
				    "record to it",
				    n->ng);
			rc = -EROFS;
		} else if (write && read_queue_attr(m->ctrl, m->ns, "../ro") > 0) {
			nvt_err_set(err, EROFS,
				    "%s: the kernel has it read-only (blockdev --setrw)", n->ng);
			rc = -EROFS;
		} else if (n->capacity < (16u << 20) + m->base) {
			nvt_err_set(err, ENOSPC,
				    "%s: namespace of %llu bytes is too small for a recording",
				    n->ng, (unsigned long long)n->capacity);
			rc = -ENOSPC;
		}
	}
	if (!rc)
		rc = admin_identify(n, 1, 0, id, err);
	if (!rc) {
		/* MDTS counts CAP.MPSMIN pages (4 KiB here; the kernel's max_hw_sectors_kb
		 * below knows the real one) */
		uint64_t mdts = id[77] ? 4096ull << id[77] : UINT64_MAX;
		uint64_t hw = (uint64_t)read_queue_attr(m->ctrl, m->ns, "max_hw_sectors_kb") << 10;
		uint64_t segs = (uint64_t)read_queue_attr(m->ctrl, m->ns, "max_segments") * 4096;
		n->max_cmd = mdts;
		if (hw && hw < n->max_cmd)
			n->max_cmd = hw;
		if (segs && segs < n->max_cmd)
			n->max_cmd = segs;
		if (n->max_cmd > (1u << 30))
			n->max_cmd = 1u << 30;
		n->max_cmd &= ~((1ull << n->lba_shift) - 1);
		n->max_cmd &= ~4095ull;
		nvt_id_str(d->serial, sizeof(d->serial), (const char *)id + 4, 20);
		nvt_id_str(d->model, sizeof(d->model), (const char *)id + 24, 40);
		nvt_id_str(d->firmware, sizeof(d->firmware), (const char *)id + 64, 8);
		d->nsid = n->nsid;
		d->lba_bytes = 1u << n->lba_shift;
		d->max_cmd_kib = (uint32_t)(n->max_cmd >> 10);
	}
	free(id);
	return rc;
}

static int cmd_alloc(struct nvme_priv *np)
{
	if (!np->nfree) {
		unsigned grow = np->ncmd ? np->ncmd : 256;
		struct nvme_cmd *c = realloc(np->cmd, (np->ncmd + grow) * sizeof(*c));
		unsigned *f = c ? realloc(np->free_cmd, (np->ncmd + grow) * sizeof(*f)) : NULL;
		if (c)
			np->cmd = c;
		if (!f)
			return -ENOMEM;
		np->free_cmd = f;
		for (unsigned i = 0; i < grow; i++) {
			np->cmd[np->ncmd + i].used = false;
			np->free_cmd[np->nfree++] = np->ncmd + grow - 1 - i;
		}
		np->ncmd += grow;
	}
	return (int)np->free_cmd[--np->nfree];
}

static void cmd_release(struct nvme_priv *np, unsigned c)
{
	np->cmd[c].used = false;
	np->free_cmd[np->nfree++] = c;
}

static int wait_push(struct nvme_ns *n, unsigned c)
{
	if (n->wcount == n->wcap) {
		unsigned cap = n->wcap ? n->wcap * 2 : 256;
		unsigned *w = malloc(cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		for (unsigned i = 0; i < n->wcount; i++)
			w[i] = n->wait[(n->whead + i) % n->wcap];
		free(n->wait);
		n->wait = w;
		n->wcap = cap;
		n->whead = 0;
	}
	n->wait[(n->whead + n->wcount++) % n->wcap] = c;
	return 0;
}

/* One command of parent pi for namespace i, queued for its drive. */
static int add_cmd(struct nvme_priv *np, unsigned pi, unsigned i, uint8_t opcode, void *buf,
		   uint64_t len, uint64_t off, int buf_index)
{
	int c = cmd_alloc(np);

	if (c < 0)
		return c;
	np->cmd[c] = (struct nvme_cmd){.off = off,
				       .buf = buf,
				       .len = (uint32_t)len,
				       .parent = pi,
				       .buf_index = buf_index,
				       .opcode = opcode,
				       .ns = (uint8_t)i,
				       .used = true};
	if (wait_push(&np->ns[i], (unsigned)c)) {
		cmd_release(np, (unsigned)c);
		return -ENOMEM;
	}
	np->split.par[pi].pending++;
	return 0;
}

static void prep_cmd(struct nvme_priv *np, struct io_uring_sqe *sqe, unsigned c)
{
	struct nvme_cmd *k = &np->cmd[c];
	const struct nvme_ns *n = &np->ns[k->ns];
	struct nvme_uring_cmd *cmd = (struct nvme_uring_cmd *)sqe->cmd;

	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = k->ns;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->user_data = c;
	if (k->buf_index >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = (uint16_t)k->buf_index;
	}
	cmd->opcode = k->opcode;
	cmd->nsid = n->nsid;
	if (k->len) {
		uint64_t slba = k->off >> n->lba_shift, nlb = k->len >> n->lba_shift;
		cmd->addr = (uintptr_t)k->buf;
		cmd->data_len = k->len;
		cmd->cdw10 = (uint32_t)slba;
		cmd->cdw11 = (uint32_t)(slba >> 32);
		cmd->cdw12 = (uint32_t)(nlb - 1);
	}
}

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
			prep_cmd(np, sqe, c);
			if (!now)
				now = nvt_mono_ns();
			np->cmd[c].t_submit = now;
			np->cmd[c].submitted = true;
			n->inflight++;
		}
	}
}

static int nvme_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct nvme_priv *np = calloc(1, sizeof(*np));
	uint64_t slice;
	struct nvt_layout one;
	const struct nvt_layout *l = p->layout;
	int fds[NVT_MAX_MEMBERS];
	struct stat st;
	int rc;

	if (!np) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	e->priv = np;
	np->file_fd = -1;
	for (unsigned i = 0; i < NVT_MAX_MEMBERS; i++)
		np->ns[i].fd = -1;
	if (!l || !l->n) {
		nvt_layout_single(&one, p->path);
		l = &one;
	}
	np->write = p->write;
	np->path = l->path[0];
	np->qd = p->qd;
	if (!np->qd || np->qd > NVT_NVME_MAX_QD) {
		nvt_err_set(err, EINVAL,
			    "the nvme engine keeps 1 to %u commands in flight per drive, not %u",
			    NVT_NVME_MAX_QD, np->qd);
		return -EINVAL;
	}
	np->timeout_ns = p->cmd_timeout_ns;
	if (l->n == 1 && strncmp(l->path[0], "/dev/", 5) &&
	    (stat(l->path[0], &st) || S_ISREG(st.st_mode))) {
		/* a file on a volume: created or reused, never truncated (its blocks are reused) */
		np->file_fd =
			open(l->path[0],
			     (p->write ? O_RDWR | O_CREAT : O_RDONLY) | O_DIRECT | O_CLOEXEC, 0644);
		if (np->file_fd < 0) {
			rc = errno;
			nvt_err_set(err, rc, "cannot open %s: %s", l->path[0], strerror(rc));
			return -rc;
		}
		rc = nvt_nvme_target_volume(np->file_fd, l->path[0], &np->t, err);
		if (rc)
			return rc;
		if (p->write && !p->prealloc) {
			nvt_err_set(
				err, EINVAL,
				"%s: --engine nvme into a file needs its length up front "
				"(--size, or --duration with --rate): the file is allocated and "
				"mapped before the first write",
				l->path[0]);
			return -EINVAL;
		}
		if (!p->write) {
			struct nvt_extent *fill;
			size_t nfill;
			if (fstat(np->file_fd, &st))
				return nvt_err_set(err, errno, "%s: stat failed", l->path[0]), -EIO;
			np->file_bytes = ((uint64_t)st.st_size + 4095) / 4096 * 4096;
			rc = nvt_nvme_target_map_file(&np->t, np->file_fd, l->path[0],
						      np->file_bytes, &fill, &nfill, err);
			free(fill);
			if (!rc && nfill) {
				nvt_err_set(err, EINVAL,
					    "%s has holes or unwritten extents: not a recording "
					    "(read it with --engine file)",
					    l->path[0]);
				rc = -EINVAL;
			}
			if (rc)
				return rc;
		}
	} else {
		rc = nvt_nvme_target_raw(l, &np->t, err);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < np->t.n; i++) {
		rc = open_ns(e, np, i, p->write, err);
		if (rc)
			return rc;
		fds[i] = np->ns[i].fd;
		if (p->write && p->prealloc && !np->t.file) {
			struct nvt_layout g = {.n = np->t.n, .stripe = np->t.stripe};
			uint64_t need = np->t.m[i].base + nvt_layout_share(&g, i, p->prealloc);
			if (need > np->ns[i].capacity) {
				nvt_err_set(
					err, ENOSPC,
					"%s: the recording needs %llu bytes of this namespace, it "
					"has %llu: lower --size",
					np->ns[i].ng, (unsigned long long)need,
					(unsigned long long)np->ns[i].capacity);
				return -ENOSPC;
			}
		}
	}
	e->ndrives = np->t.n;
	e->io_path = NVT_PATH_NVME;
	if (nvt_split_init(&np->split, p->nbufs ? p->nbufs + 4 : 64)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	/* A fixed buffer is handed to the block layer from the command's start to the end of its
	 * registration, and 6.1 refuses a passthrough command whose registered buffer spans more
	 * pages than max_segments: register the ring in slices no larger than a command, and
	 * never let a command cross a slice. Over a stripe the slices divide the stripe chunk
	 * and their edges fall on its edges (chunk byte 0 is logical byte p->buf_phase), so a
	 * stripe piece takes the fewest commands. */
	slice = UINT64_MAX;
	for (unsigned i = 0; i < np->t.n; i++)
		if (np->ns[i].max_cmd < slice)
			slice = np->ns[i].max_cmd;
	if (np->t.n > 1) {
		uint64_t s = np->t.stripe;
		while (s > slice && !(s & 1))
			s /= 2;
		slice = s <= slice ? s : 4096;
	}
	rc = nvt_uring_open(&np->u, np->qd * np->t.n + 16, fds, np->t.n, p,
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
	e->can_reserve = np->t.file && p->write;
	/* ring chunks in flight that keep qd commands queued on every drive, and one more */
	{
		uint64_t chunk = p->buf_bytes ? p->buf_bytes : (8u << 20);
		uint64_t want = (uint64_t)np->qd * np->t.n * np->ns[0].max_cmd;
		e->depth = (unsigned)((want + chunk - 1) / chunk + 1);
	}
	{
		char where[200];
		if (np->t.file)
			snprintf(where, sizeof(where), "file %.80s on %.100s", l->path[0],
				 np->t.volume);
		else if (np->t.n > 1)
			snprintf(where, sizeof(where), "%s..%s striped, %llu KiB chunks",
				 np->ns[0].ng, np->ns[np->t.n - 1].ng,
				 (unsigned long long)(np->t.stripe >> 10));
		else
			snprintf(where, sizeof(where), "%s", np->ns[0].ng);
		snprintf(e->desc, sizeof(e->desc),
			 "nvme engine: %.200s (%.40s), %u-byte LBAs, commands <= %llu KiB, qd %u "
			 "per "
			 "drive%s",
			 where, e->drive[0].model, 1u << np->ns[0].lba_shift,
			 (unsigned long long)(np->ns[0].max_cmd >> 10), np->qd,
			 e->fixed_bufs ? ", fixed buffers" : "");
	}
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
		    add_cmd(np, (unsigned)pi, m,
			    io->dir == NVT_IO_WRITE ? NVME_CMD_WRITE : NVME_CMD_READ, buf, k, nsoff,
			    slice)) {
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
		if (add_cmd(np, (unsigned)pi, i, NVME_CMD_FLUSH, NULL, 0, 0, -1))
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
			 k->opcode == NVME_CMD_WRITE  ? "Write"
			 : k->opcode == NVME_CMD_READ ? "Read"
						      : "Flush",
			 (now - k->t_submit) / 1e9);
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
			cmd_release(np, c);
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
		cmd_release(np, (unsigned)ud);
	}
	io_uring_cq_advance(&np->u.ring, seen);
	check_timeouts(e, np);
	pump(np);
	if (woke && max)
		out[n++] = (struct nvt_io_done){.tag = NVT_TAG_WAKE, .res = 0};
	return (int)(n + nvt_split_pop(&np->split, out + n, max - n));
}

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

/* Synchronous passthrough command on one namespace (headers, indexes, the final flush). */
static int ns_cmd(struct nvme_priv *np, unsigned i, uint8_t opcode, void *buf, uint64_t len,
		  uint64_t off, struct nvt_err *err)
{
	struct nvme_ns *n = &np->ns[i];
	struct nvme_passthru_cmd c = {.opcode = opcode, .nsid = n->nsid};
	int rc;

	if (n->dead) {
		nvt_err_set(err, ETIMEDOUT,
			    "%s stopped responding: nothing more can be written to it", n->ng);
		return -ETIMEDOUT;
	}
	if (len) {
		c.addr = (uintptr_t)buf;
		c.data_len = (uint32_t)len;
		c.cdw10 = (uint32_t)(off >> n->lba_shift);
		c.cdw11 = (uint32_t)((off >> n->lba_shift) >> 32);
		c.cdw12 = (uint32_t)((len >> n->lba_shift) - 1);
	}
	c.timeout_ms = np->timeout_ns ? (uint32_t)(np->timeout_ns / 1000000) : 0;
	rc = ioctl(n->fd, NVME_IOCTL_IO_CMD, &c);
	if (rc) {
		char st[128];
		nvt_err_set(err, rc < 0 ? errno : EIO, "%s: NVMe command 0x%02x at %llu: %s", n->ng,
			    opcode, (unsigned long long)off,
			    rc < 0 ? strerror(errno)
				   : nvt_nvme_status_str((unsigned)rc, st, sizeof(st)));
		return -EIO;
	}
	return 0;
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
		rc = ns_cmd(np, m, opcode, buf, k, nsoff, err);
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

/* Make [0, size) of the file exist as written, allocated blocks (zeros through the
 * filesystem where it has holes or unwritten extents), then map it. */
static int nvme_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;
	struct nvt_extent *fill = NULL;
	size_t nfill = 0;
	void *zero = NULL;
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
	if (rc)
		return rc;
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
		if (!zero && posix_memalign(&zero, 4096, 8u << 20)) {
			rc = -ENOMEM;
			nvt_err_set(err, ENOMEM, "out of memory");
			break;
		}
		memset(zero, 0, 8u << 20);
		for (size_t i = 0; !rc && i < nfill; i++) {
			for (uint64_t o = 0; o < fill[i].len;) {
				uint64_t k =
					fill[i].len - o < (8u << 20) ? fill[i].len - o : (8u << 20);
				ssize_t w =
					pwrite(np->file_fd, zero, k, (off_t)(fill[i].logical + o));
				if (w <= 0) {
					rc = w < 0 ? -errno : -ENOSPC;
					nvt_err_set(err, -rc, "%s: writing zeros at %llu: %s",
						    np->path,
						    (unsigned long long)(fill[i].logical + o),
						    strerror(-rc));
					break;
				}
				o += (uint64_t)w;
			}
		}
		e->zero_filled = true;
		free(fill);
		fill = NULL;
		if (!rc && fsync(np->file_fd)) {
			rc = -errno;
			nvt_err_set(err, errno, "%s: fsync: %s", np->path, strerror(errno));
		}
		if (rc)
			break;
	}
	free(fill);
	free(zero);
	if (rc)
		return rc;
	np->file_bytes = size;
	np->immutable = set_immutable(np->file_fd, true);
	return 0;
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

/* End of a file recording: the blocks must still be where they were mapped; then the filesystem
 * gets the file back and trims it. */
static int give_back_file(struct nvme_priv *np, struct nvt_err *err)
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
	if (ftruncate(np->file_fd, (off_t)np->final_bytes) || fsync(np->file_fd)) {
		nvt_err_set(err, errno, "%s: trimming to %llu bytes: %s", np->path,
			    (unsigned long long)np->final_bytes, strerror(errno));
		return -errno;
	}
	return 0;
}

static int nvme_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	struct nvme_priv *np = e->priv;

	for (unsigned i = 0; i < np->t.n; i++)
		if (!np->ns[i].dead && ns_cmd(np, i, NVME_CMD_FLUSH, NULL, 0, 0, err))
			return -EIO;
	return np->trim_pending ? give_back_file(np, err) : 0;
}

/* What nvtape wrote underneath must not be hidden by stale cached pages of the block devices
 * or of the file. */
static void drop_caches(struct nvme_priv *np)
{
	if (np->file_fd >= 0) {
		posix_fadvise(np->file_fd, 0, 0, POSIX_FADV_DONTNEED);
		return;
	}
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
	nvt_uring_close(&np->u);
	if (np->write)
		drop_caches(np);
	if (np->immutable)
		set_immutable(np->file_fd, false);
	if (np->file_fd >= 0)
		close(np->file_fd);
	for (unsigned i = 0; i < NVT_MAX_MEMBERS; i++) {
		if (np->ns[i].fd >= 0)
			close(np->ns[i].fd);
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
	.write_sync = nvme_write_sync,
	.close = nvme_close,
};
