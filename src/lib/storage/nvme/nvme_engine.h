/* SPDX-License-Identifier: MIT */
/* The nvme engine's parts and the state they share: Identify and limits (nvme_identify.c), the
 * command pool and NVMe command encoding (nvme_cmd.c), the file-on-volume lifecycle
 * (nvme_file.c), and the io_uring passthrough datapath behind the ops table (engine_nvme.c). */
#ifndef NVT_NVME_ENGINE_H
#define NVT_NVME_ENGINE_H

#include <linux/nvme_ioctl.h>
#include <stdbool.h>
#include <stdint.h>

#include "storage/engine.h"
#include "storage/nvme/file_map.h"
#include "storage/uring.h"

#define NVME_CMD_FLUSH 0x00
#define NVME_CMD_WRITE 0x01
#define NVME_CMD_READ  0x02

/* One namespace the engine drives, through its char device /dev/ngCnN. */
struct nvme_ns {
	int fd;
	int claim_fd; /* the namespace's block device, opened O_EXCL while recording onto it */
	char ng[32];
	uint32_t nsid, lba_shift;
	uint64_t capacity, max_cmd;
	unsigned inflight; /* commands submitted, not completed */
	bool dead;         /* a command timed out: nothing more goes to this drive */
	unsigned *wait;    /* commands waiting for a free queue slot (FIFO) */
	unsigned whead, wcount, wcap;
};

/* One NVMe command of an I/O, from the pool. */
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

/* The engine's state (nvt_engine.priv). */
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

/* An NVMe I/O command's fields, apart from the transport that carries it (io_uring
 * passthrough or the synchronous ioctl). */
struct nvme_rw {
	uint8_t opcode;
	uint32_t nsid;
	uint64_t addr;
	uint32_t data_len;
	uint32_t cdw10, cdw11, cdw12;
};

/* nvme_identify.c: open /dev/ngCnN of member i, identify it (LBA format, capacity, write
 * protection, MDTS and the kernel's limits, serial / model / firmware into e->drive[i]). */
int nvme_ns_open(struct nvt_engine *e, struct nvme_priv *np, unsigned i, bool write,
		 struct nvt_err *err);

/* nvme_cmd.c */
/* Opcode, namespace and, for a transfer (len > 0), buffer, starting LBA and block count. */
void nvme_encode(struct nvme_rw *c, uint8_t opcode, const struct nvme_ns *n, void *buf,
		 uint64_t len, uint64_t off);
/* One command of parent pi for namespace i, queued for its drive. 0 or -ENOMEM. */
int nvme_cmd_add(struct nvme_priv *np, unsigned pi, unsigned i, uint8_t opcode, void *buf,
		 uint64_t len, uint64_t off, int buf_index);
void nvme_cmd_release(struct nvme_priv *np, unsigned c);
/* Command c as an IORING_OP_URING_CMD submission (SQE128) on registered file k->ns. */
void nvme_cmd_prep_sqe(const struct nvme_priv *np, struct io_uring_sqe *sqe, unsigned c);
/* A synchronous command on namespace i (headers, indexes, the final flush). */
int nvme_ns_cmd_sync(struct nvme_priv *np, unsigned i, uint8_t opcode, void *buf, uint64_t len,
		     uint64_t off, struct nvt_err *err);
const char *nvme_opcode_name(uint8_t opcode);

/* nvme_file.c: a file on a volume made of NVMe namespaces. */
/* Open (create for writing, never truncate) and find the namespaces under it; for reading,
 * map all of it. */
int nvme_file_open(struct nvme_priv *np, const char *path, const struct nvt_engine_params *p,
		   struct nvt_err *err);
/* Allocate [0, size) as written blocks, map them, set the immutable flag. */
int nvme_file_reserve(struct nvt_engine *e, uint64_t size, struct nvt_err *err);
/* After the last write: the blocks are still where they were mapped; the filesystem gets the
 * file back at its final length. */
int nvme_file_give_back(struct nvme_priv *np, struct nvt_err *err);
/* Drop the file's cached pages and its immutable flag, close it. */
void nvme_file_close(struct nvme_priv *np);

#endif
