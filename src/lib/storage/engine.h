/* SPDX-License-Identifier: MIT */
/* Storage engines: "write / read this buffer at this offset", completed asynchronously, with a
 * result per I/O. One engine per file behind this ops table: file (io_uring O_DIRECT), stripe
 * (the md RAID0 layout over several), null, nvme (NVMe commands built by nvtape, io_uring
 * passthrough). */
#ifndef NVTAPE_ENGINE_H
#define NVTAPE_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "nvtape/engines.h"
#include "nvtape/format.h"
#include "nvtape/nvtape.h"

enum nvt_io_dir { NVT_IO_WRITE = 0, NVT_IO_READ = 1 };

struct nvt_io {
	enum nvt_io_dir dir;
	void *buf;       /* 4096-aligned */
	uint64_t len;    /* multiple of 4096 */
	uint64_t offset; /* byte offset on the target, multiple of 4096 */
	int buf_index;   /* registered buffer (ring chunk memory) index, -1 if not registered */
	uint64_t tag;    /* returned in the completion */
	bool blocking;   /* a retry after EAGAIN: let the kernel block on it (io worker) */
};

#define NVT_TAG_WAKE        UINT64_MAX /* the watched wake fd became readable */
#define NVT_NVME_MAX_QD     63u        /* nvme engine: commands in flight per drive */
#define NVT_NVME_DEFAULT_QD 32u

struct nvt_io_done {
	uint64_t tag;
	int64_t res; /* bytes transferred, or -errno */
};

struct nvt_layout;

struct nvt_engine_params {
	const char *path;                /* one file or device ... */
	const struct nvt_layout *layout; /* ... or several members (stripe engine) */
	bool write;                      /* open for recording (create/truncate) or for reading */
	unsigned qd;             /* I/Os in flight at most (nvme: commands in flight per drive) */
	uint64_t prealloc;       /* bytes the recording will take at most (0 = unknown) */
	uint64_t cmd_timeout_ns; /* a command outstanding this long fails its drive (nvme) */
	void *bufs;              /* memory to register for zero-copy DMA (the ring) */
	uint64_t buf_bytes;      /* size of one registered buffer (a ring chunk) */
	unsigned nbufs;
	uint64_t buf_phase; /* logical offset of every chunk's first byte, modulo a chunk (the
			     * header before the data): lets an engine align to its layout */
	int wake_fd;        /* eventfd to watch alongside completions, -1 = none */
	bool force;         /* write over an existing file that holds something (nvt_open_output) */
};

struct nvt_engine;

struct nvt_engine_ops {
	const char *name;
	const char *help;
	unsigned caps;       /* NVT_ENGINE_* (nvtape/engines.h) */
	unsigned max_qd;     /* 0 = the general limit */
	unsigned default_qd; /* 0 = the general default */
	int (*open)(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err);
	/* Queue one I/O (not yet submitted). -EBUSY when qd I/Os are already queued/in flight. */
	int (*queue)(struct nvt_engine *e, const struct nvt_io *io);
	/* Durability barrier: completes (with tag) once all completed writes are durable. */
	int (*queue_sync)(struct nvt_engine *e, uint64_t tag);
	int (*submit)(struct nvt_engine *e);
	/* Wait up to timeout_ns for at least one completion; returns the count (0 = timeout). */
	int (*reap)(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		    int64_t timeout_ns);
	/* Synchronous helpers used outside the data path. */
	int (*reserve)(struct nvt_engine *e, uint64_t size, struct nvt_err *err);
	int (*truncate)(struct nvt_engine *e, uint64_t size, struct nvt_err *err);
	int (*sync_now)(struct nvt_engine *e, struct nvt_err *err);
	/* Durability barrier and nothing else, where sync_now also ends the engine's run (the nvme
	 * engine gives a file back); NULL: sync_now is that barrier. */
	int (*flush_now)(struct nvt_engine *e, struct nvt_err *err);
	/* Synchronous write of an aligned buffer beside the queue (headers, indexes): works
	 * even while data I/Os are still in flight. */
	int (*write_sync)(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			  struct nvt_err *err);
	void (*close)(struct nvt_engine *e);
	/* optional, several members: which of them hold the I/Os still outstanding, for a stall's
	 * message ("member 2, /dev/sdb: 3 I/Os outstanding"); "" when it cannot tell */
	void (*stuck)(struct nvt_engine *e, char *buf, size_t cap);
};

struct nvt_engine {
	const struct nvt_engine_ops *ops;
	void *priv;
	unsigned inflight;    /* queued + submitted, maintained by the engine */
	unsigned depth;       /* I/Os the caller keeps in flight (default: params qd; <= nbufs) */
	bool fixed_bufs;      /* ring memory is registered: zero-copy fixed-buffer I/O */
	bool can_reserve;     /* reserve() makes space up front (fallocate) */
	uint64_t zero_filled; /* bytes reserve() had to write zeros into (no fallocate): time */
	bool zero_filled_unwritten; /* ... into unwritten extents, for writes beneath the fs */
	char desc[384];             /* what was opened and how, for banners */
	char fault[192];  /* the member that failed first ("" when none, or only one member) */
	uint32_t io_path; /* enum nvt_io_path */
	unsigned ndrives; /* NVMe namespaces identified (nvme engine) */
	struct nvt_drive drive[NVT_MAX_DRIVES];
};

const struct nvt_engine_ops *nvt_engine_find(const char *name);
/* The engine that serves `name` ("file", "nvme", ...; NULL = file) on layout l: the file engine
 * becomes the stripe engine for several members. */
const char *nvt_engine_for(const char *name, const struct nvt_layout *l);
/* The i-th engine of the registry, NULL past the end. */
const struct nvt_engine_ops *nvt_engine_at(unsigned i);
/* Why the ring is not registered as fixed buffers and how to fix it, or NULL when it is (or
 * the engine does not register). buf holds the text. */
const char *nvt_engine_fixed_bufs_note(const struct nvt_engine *e, uint64_t ring_bytes, char *buf,
				       size_t cap);

/* Why opening a target failed (rc = errno): a device claimed by someone else (EBUSY) is said
 * in words; how (" with O_DIRECT" or "") is added to the plain message. */
void nvt_err_open(struct nvt_err *err, int rc, const char *path, bool blockdev, bool write,
		  const char *how);

/* A recording's output file: take its exclusive lock (a second writer, or recover, is
 * refused while it is held), then empty it. 0 or -errno (-EBUSY: someone holds the lock). */
int nvt_lock_output(int fd, const char *path, struct nvt_err *err);

int nvt_engine_open(struct nvt_engine *e, const char *name, const struct nvt_engine_params *p,
		    struct nvt_err *err);
void nvt_engine_close(struct nvt_engine *e);
/* For a stall's message: "; waiting on member 2, /dev/sdb: 3 I/Os outstanding", or "" when the
 * engine cannot tell which member holds the I/Os. */
void nvt_engine_stuck(struct nvt_engine *e, char *buf, size_t cap);

#endif
