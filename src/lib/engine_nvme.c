/* nvme engine: nvtape builds the NVMe Write (0x01), Read (0x02) and Flush (0x00) commands
 * itself and submits them with io_uring passthrough (IORING_OP_URING_CMD, SQE128/CQE32) on the
 * namespace's char device /dev/ngXnY, bypassing the filesystem and the block layer. Each I/O is
 * split into commands no larger than the drive and the kernel accept (MDTS, max_hw_sectors_kb,
 * max_segments x 4 KiB: a passthrough command is never split by the kernel). */
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "nvme_status.h"
#include "nvtape/engine.h"
#include "uring.h"

struct nvme_priv {
	struct nvt_uring u;
	int fd;
	unsigned ctrl, ns;
	uint32_t nsid, lba_shift;
	uint64_t capacity, max_cmd;
	unsigned qd;
	struct nvt_split split;
	char ng[32];
};

static long read_sysfs(unsigned ctrl, unsigned ns, const char *attr)
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

static int identify(struct nvme_priv *np, uint32_t cns, uint32_t nsid, uint8_t *buf,
		    struct nvt_err *err)
{
	struct nvme_admin_cmd c = {.opcode = 0x06,
				   .nsid = nsid,
				   .addr = (uintptr_t)buf,
				   .data_len = 4096,
				   .cdw10 = cns};
	int rc = ioctl(np->fd, NVME_IOCTL_ADMIN_CMD, &c);

	if (rc) {
		char st[128];
		nvt_err_set(err, rc < 0 ? errno : EIO, "%s: Identify (CNS %u) failed: %s", np->ng,
			    cns,
			    rc < 0 ? strerror(errno)
				   : nvt_nvme_status_str((unsigned)rc, st, sizeof(st)));
		return -EIO;
	}
	return 0;
}

static int nvme_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct nvme_priv *np = calloc(1, sizeof(*np));
	uint8_t *id = NULL;
	int rc;

	if (!np) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	e->priv = np;
	np->fd = -1;
	if (sscanf(p->path, "/dev/nvme%un%u", &np->ctrl, &np->ns) != 2 &&
	    sscanf(p->path, "/dev/ng%un%u", &np->ctrl, &np->ns) != 2) {
		nvt_err_set(err, EINVAL,
			    "%s: --engine nvme drives an NVMe namespace: give /dev/nvmeXnY or "
			    "/dev/ngXnY",
			    p->path);
		return -EINVAL;
	}
	snprintf(np->ng, sizeof(np->ng), "/dev/ng%un%u", np->ctrl, np->ns);
	np->fd = open(np->ng, O_RDWR | O_CLOEXEC);
	if (np->fd < 0) {
		rc = errno;
		nvt_err_set(err, rc, "cannot open %s: %s (NVMe char devices need Linux 5.13+)",
			    np->ng, strerror(rc));
		return -rc;
	}
	rc = ioctl(np->fd, NVME_IOCTL_ID);
	if (rc <= 0 || posix_memalign((void **)&id, 4096, 4096)) {
		nvt_err_set(err, EIO, "%s: cannot get the namespace id", np->ng);
		return -EIO;
	}
	np->nsid = (uint32_t)rc;
	rc = identify(np, 0, np->nsid, id, err);
	if (!rc) {
		uint64_t nsze;
		uint32_t lbaf;
		memcpy(&nsze, id, 8);
		memcpy(&lbaf, id + 128 + 4 * (id[26] & 0xf), 4);
		np->lba_shift = (lbaf >> 16) & 0xff;
		np->capacity = nsze << np->lba_shift;
		if ((lbaf & 0xffff) || (id[29] & 0x7) || np->lba_shift < 9 || np->lba_shift > 12) {
			nvt_err_set(
				err, EINVAL,
				"%s: LBA format with %u bytes of metadata, protection type %u, "
				"%u-byte blocks: nvtape drives 512-byte to 4 KiB blocks without "
				"metadata or protection information (reformat: nvme format)",
				np->ng, lbaf & 0xffff, id[29] & 0x7, 1u << np->lba_shift);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = identify(np, 1, 0, id, err);
	if (!rc) {
		uint64_t mdts = id[77] ? 4096ull << id[77] : UINT64_MAX; /* MPSMIN 4 KiB assumed */
		uint64_t hw = (uint64_t)read_sysfs(np->ctrl, np->ns, "max_hw_sectors_kb") << 10;
		uint64_t segs = (uint64_t)read_sysfs(np->ctrl, np->ns, "max_segments") * 4096;
		np->max_cmd = mdts;
		if (hw && hw < np->max_cmd)
			np->max_cmd = hw;
		if (segs && segs < np->max_cmd)
			np->max_cmd = segs;
		np->max_cmd &= ~((1ull << np->lba_shift) - 1);
		snprintf(e->desc, sizeof(e->desc),
			 "nvme engine: %s (%.20s), %u-byte LBAs, commands <= %llu "
			 "KiB, "
			 "qd %u",
			 np->ng, (const char *)id + 24, 1u << np->lba_shift,
			 (unsigned long long)(np->max_cmd >> 10), p->qd);
	}
	free(id);
	if (rc)
		return rc;
	np->qd = p->qd;
	if (nvt_split_init(&np->split, p->qd + 4)) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	{
		/* no registered buffers: uring_cmd fixed buffers map one segment per 4 KiB page */
		struct nvt_engine_params q = *p;
		unsigned per =
			(unsigned)((p->buf_bytes ? p->buf_bytes : (8u << 20)) / np->max_cmd) + 2;
		q.bufs = NULL;
		q.nbufs = 0;
		rc = nvt_uring_open(&np->u, (p->qd + 4) * per + 8, &np->fd, 1, &q,
				    IORING_SETUP_SQE128 | IORING_SETUP_CQE32, err);
	}
	return rc;
}

static int push_cmd(struct nvme_priv *np, int pi, uint8_t opcode, void *buf, uint64_t len,
		    uint64_t off)
{
	struct io_uring_sqe *sqe = nvt_uring_sqe(&np->u);
	struct nvme_uring_cmd *cmd;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = 0;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->cmd_op = NVME_URING_CMD_IO;
	sqe->user_data = ((uint64_t)pi << 32) | len; /* len < 4 GiB: a command is <= MDTS */
	cmd = (struct nvme_uring_cmd *)sqe->cmd;
	cmd->opcode = opcode;
	cmd->nsid = np->nsid;
	if (len) {
		uint64_t slba = off >> np->lba_shift, nlb = len >> np->lba_shift;
		cmd->addr = (uintptr_t)buf;
		cmd->data_len = (uint32_t)len;
		cmd->cdw10 = (uint32_t)slba;
		cmd->cdw11 = (uint32_t)(slba >> 32);
		cmd->cdw12 = (uint32_t)(nlb - 1);
	}
	np->split.par[pi].pending++;
	return 0;
}

static int nvme_queue(struct nvt_engine *e, const struct nvt_io *io)
{
	struct nvme_priv *np = e->priv;
	uint8_t *buf = io->buf;
	uint64_t off = io->offset, len = io->len;
	int pi;

	if (e->inflight >= np->qd + 2 || (pi = nvt_split_take(&np->split, io->tag)) < 0)
		return -EBUSY;
	while (len) {
		uint64_t k = len < np->max_cmd ? len : np->max_cmd;
		if (push_cmd(np, pi, io->dir == NVT_IO_WRITE ? 0x01 : 0x02, buf, k, off)) {
			np->split.par[pi].res = -EBUSY;
			break;
		}
		buf += k;
		off += k;
		len -= k;
	}
	e->inflight++;
	return 0;
}

static int nvme_queue_sync(struct nvt_engine *e, uint64_t tag)
{
	struct nvme_priv *np = e->priv;
	int pi = nvt_split_take(&np->split, tag);

	if (pi < 0 || push_cmd(np, pi, 0x00, NULL, 0, 0))
		return -EBUSY;
	e->inflight++;
	return 0;
}

static int nvme_submit(struct nvt_engine *e)
{
	struct nvme_priv *np = e->priv;

	nvt_uring_arm_wake(&np->u);
	return 0;
}

static int nvme_reap(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		     int64_t timeout_ns)
{
	struct nvme_priv *np = e->priv;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0, n = 0;
	bool woke = false;
	int rc = nvt_uring_wait(&np->u, np->split.nready ? 0 : timeout_ns);

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
		/* res: -errno, an NVMe status (> 0), or 0: the command moved its whole length */
		if (cqe->res && !e->fault[0]) {
			char st[128];
			snprintf(e->fault, sizeof(e->fault), "%s (%s)", np->ng,
				 cqe->res < 0
					 ? strerror(-cqe->res)
					 : nvt_nvme_status_str((unsigned)cqe->res, st, sizeof(st)));
		}
		if (nvt_split_piece_done(&np->split, (unsigned)(ud >> 32),
					 cqe->res < 0   ? cqe->res
					 : cqe->res > 0 ? -EIO
							: (int64_t)(ud & 0xffffffffu)))
			e->inflight--;
	}
	io_uring_cq_advance(&np->u.ring, seen);
	if (woke && max)
		out[n++] = (struct nvt_io_done){.tag = NVT_TAG_WAKE, .res = 0};
	return (int)(n + nvt_split_pop(&np->split, out + n, max - n));
}

/* Synchronous passthrough command (headers, indexes, the final flush). */
static int io_cmd(struct nvme_priv *np, uint8_t opcode, const void *buf, uint64_t len, uint64_t off,
		  struct nvt_err *err)
{
	do {
		uint64_t k = len < np->max_cmd ? len : np->max_cmd;
		struct nvme_passthru_cmd c = {.opcode = opcode, .nsid = np->nsid};
		if (k) {
			c.addr = (uintptr_t)buf;
			c.data_len = (uint32_t)k;
			c.cdw10 = (uint32_t)(off >> np->lba_shift);
			c.cdw11 = (uint32_t)((off >> np->lba_shift) >> 32);
			c.cdw12 = (uint32_t)((k >> np->lba_shift) - 1);
		}
		int rc = ioctl(np->fd, NVME_IOCTL_IO_CMD, &c);
		if (rc) {
			char st[128];
			nvt_err_set(err, rc < 0 ? errno : EIO,
				    "%s: NVMe command 0x%02x at %llu: %s", np->ng, opcode,
				    (unsigned long long)off,
				    rc < 0 ? strerror(errno)
					   : nvt_nvme_status_str((unsigned)rc, st, sizeof(st)));
			return -EIO;
		}
		buf = (const uint8_t *)buf + k;
		off += k;
		len -= k;
	} while (len);
	return 0;
}

static int nvme_write_sync(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			   struct nvt_err *err)
{
	return io_cmd(e->priv, 0x01, buf, len, offset, err);
}

static int nvme_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	return io_cmd(e->priv, 0x00, NULL, 0, 0, err);
}

static int nvme_noop(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	(void)e;
	(void)size;
	(void)err;
	return 0;
}

static void nvme_close(struct nvt_engine *e)
{
	struct nvme_priv *np = e->priv;

	if (!np)
		return;
	nvt_uring_close(&np->u);
	if (np->fd >= 0)
		close(np->fd);
	nvt_split_free(&np->split);
	free(np);
	e->priv = NULL;
}

const struct nvt_engine_ops nvt_engine_nvme = {
	.name = "nvme",
	.help = "NVMe commands built by nvtape, io_uring passthrough on /dev/ngXnY",
	.open = nvme_open,
	.queue = nvme_queue,
	.queue_sync = nvme_queue_sync,
	.submit = nvme_submit,
	.reap = nvme_reap,
	.reserve = nvme_noop,
	.truncate = nvme_noop,
	.sync_now = nvme_sync_now,
	.write_sync = nvme_write_sync,
	.close = nvme_close,
};
