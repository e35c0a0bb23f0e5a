/* SPDX-License-Identifier: MIT */
/* io_uring plumbing shared by the io_uring engines (file, stripe, nvme): setup with registered
 * files and fixed ring buffers, request preparation, the watched wake fd, submit-and-wait. */
#ifndef NVT_URING_H
#define NVT_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

#include "storage/engine.h"

struct nvt_uring {
	struct io_uring ring;
	bool ok;
	bool fixed_bufs;      /* the ring's chunks are registered */
	uint64_t slice;       /* ... as buffers of this many bytes (a chunk, or less) */
	uint64_t slice_first; /* ... the first of each chunk this long */
	unsigned slices_per_buf;
	int wake_fd;
	bool wake_armed;
};

/* entries: submission queue size; fds: files registered as 0..nfds-1; slice_bytes: register
 * every ring chunk as buffers of at most this size (0: whole chunks), cut where
 * (chunk byte + phase) is a multiple of slice_bytes; chunk c's slice j is buffer
 * c * slices_per_buf + j. */
int nvt_uring_open(struct nvt_uring *u, unsigned entries, const int *fds, unsigned nfds,
		   const struct nvt_engine_params *p, unsigned setup_flags, uint64_t slice_bytes,
		   uint64_t phase, struct nvt_err *err);
/* Where slice j of a chunk starts; the slice holding chunk byte b and the bytes left in it. */
uint64_t nvt_uring_slice_start(const struct nvt_uring *u, unsigned j);
unsigned nvt_uring_slice_of(const struct nvt_uring *u, uint64_t b, uint64_t *room);
/* idle: no I/O in flight, the registered files are let go at once. */
void nvt_uring_close(struct nvt_uring *u, bool idle);
/* A free SQE (submits the queue once when it is full), or NULL. */
struct io_uring_sqe *nvt_uring_sqe(struct nvt_uring *u);
/* Prepare a read or write of len bytes at off on registered file `file`. */
void nvt_uring_prep_rw(struct nvt_uring *u, struct io_uring_sqe *sqe, const struct nvt_io *io,
		       int file, void *buf, uint64_t len, uint64_t off, uint64_t user_data);
void nvt_uring_prep_sync(struct io_uring_sqe *sqe, int file, uint64_t user_data);
/* Arm the poll on the wake fd when it is not armed. */
void nvt_uring_arm_wake(struct nvt_uring *u);
/* Submit what is queued and wait up to timeout_ns for a completion (0 on timeout/signal). */
int nvt_uring_wait(struct nvt_uring *u, int64_t timeout_ns);
/* Whether a completion is the wake poll (then it is consumed and re-armable). */
bool nvt_uring_take_wake(struct nvt_uring *u, uint64_t user_data);

/* One I/O split into several requests (pieces): it completes with its last piece, with the
 * bytes of all pieces or the first error of any. Used by the stripe and nvme engines. */
struct nvt_split_parent {
	uint64_t tag;
	int64_t res;
	unsigned pending;
	bool used;
	bool reported; /* handed out early by nvt_split_fail; freed with its last piece */
};

struct nvt_split {
	struct nvt_split_parent *par;
	unsigned npar;
	struct nvt_io_done *ready; /* completed I/Os not yet handed out */
	unsigned nready;
};

int nvt_split_init(struct nvt_split *s, unsigned n);
void nvt_split_free(struct nvt_split *s);
/* A free parent for the I/O with this tag, or -EBUSY. */
int nvt_split_take(struct nvt_split *s, uint64_t tag);
/* A piece of parent pi finished (bytes or -errno); true when that was its last piece (the
 * parent leaves the engine's in-flight count). */
bool nvt_split_piece_done(struct nvt_split *s, unsigned pi, int64_t res);
/* Report parent pi now with error res although pieces may be outstanding (a timed-out drive:
 * the caller learns of the failure at once; the pieces keep the parent in flight until they
 * end, so nothing is written over by a late one). True when no piece is outstanding. */
bool nvt_split_fail(struct nvt_split *s, unsigned pi, int64_t res);
/* Hand out up to max completed I/Os. */
unsigned nvt_split_pop(struct nvt_split *s, struct nvt_io_done *out, unsigned max);

#endif
