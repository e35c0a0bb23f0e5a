/* SPDX-License-Identifier: MIT */
/* The nvme engine's commands: a pool of command slots with a FIFO of waiting commands per drive,
 * and the encoding of NVMe Write (0x01), Read (0x02) and Flush (0x00) into their fields, apart
 * from the transport that carries them: an io_uring passthrough SQE for the datapath, the
 * synchronous NVME_IOCTL_IO_CMD for headers, indexes and the final flush. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "storage/nvme/nvme_engine.h"
#include "storage/nvme/nvme_status.h"

void nvme_encode(struct nvme_rw *c, uint8_t opcode, const struct nvme_ns *n, void *buf,
		 uint64_t len, uint64_t off)
{
	memset(c, 0, sizeof(*c));
	c->opcode = opcode;
	c->nsid = n->nsid;
	if (len) {
		uint64_t slba = off >> n->lba_shift, nlb = len >> n->lba_shift;
		c->addr = (uintptr_t)buf;
		c->data_len = (uint32_t)len;
		c->cdw10 = (uint32_t)slba;
		c->cdw11 = (uint32_t)(slba >> 32);
		c->cdw12 = (uint32_t)(nlb - 1);
	}
}

const char *nvme_opcode_name(uint8_t opcode)
{
	return opcode == NVME_CMD_WRITE ? "Write" : opcode == NVME_CMD_READ ? "Read" : "Flush";
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

void nvme_cmd_release(struct nvme_priv *np, unsigned c)
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

int nvme_cmd_add(struct nvme_priv *np, unsigned pi, unsigned i, uint8_t opcode, void *buf,
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
		nvme_cmd_release(np, (unsigned)c);
		return -ENOMEM;
	}
	np->split.par[pi].pending++;
	return 0;
}

void nvme_cmd_prep_sqe(const struct nvme_priv *np, struct io_uring_sqe *sqe, unsigned c)
{
	const struct nvme_cmd *k = &np->cmd[c];
	struct nvme_uring_cmd *cmd = (struct nvme_uring_cmd *)sqe->cmd;
	struct nvme_rw rw;

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
	nvme_encode(&rw, k->opcode, &np->ns[k->ns], k->buf, k->len, k->off);
	cmd->opcode = rw.opcode;
	cmd->nsid = rw.nsid;
	cmd->addr = rw.addr;
	cmd->data_len = rw.data_len;
	cmd->cdw10 = rw.cdw10;
	cmd->cdw11 = rw.cdw11;
	cmd->cdw12 = rw.cdw12;
}

int nvme_ns_cmd_sync(struct nvme_priv *np, unsigned i, uint8_t opcode, void *buf, uint64_t len,
		     uint64_t off, struct nvt_err *err)
{
	struct nvme_ns *n = &np->ns[i];
	struct nvme_passthru_cmd c = {0};
	struct nvme_rw rw;
	int rc;

	if (n->dead) {
		nvt_err_set(err, ETIMEDOUT,
			    "%s stopped responding: nothing more can be written to it", n->ng);
		return -ETIMEDOUT;
	}
	nvme_encode(&rw, opcode, n, buf, len, off);
	c.opcode = rw.opcode;
	c.nsid = rw.nsid;
	c.addr = rw.addr;
	c.data_len = rw.data_len;
	c.cdw10 = rw.cdw10;
	c.cdw11 = rw.cdw11;
	c.cdw12 = rw.cdw12;
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
