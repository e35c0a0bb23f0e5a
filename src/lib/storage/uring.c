/* SPDX-License-Identifier: MIT */
/* io_uring plumbing shared by the io_uring engines: one ring per engine, single issuer with
 * deferred task work where the kernel has it (6.1+), registered files, the ring's chunks as
 * fixed buffers (the pages stay pinned: no per-I/O page pinning), submit and wait in one
 * io_uring_enter. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "storage/uring.h"

int nvt_uring_open(struct nvt_uring *u, unsigned entries, const int *fds, unsigned nfds,
		   const struct nvt_engine_params *p, unsigned setup_flags, uint64_t slice_bytes,
		   uint64_t phase, struct nvt_err *err)
{
	struct io_uring_params up;
	int rc;

	memset(u, 0, sizeof(*u));
	u->wake_fd = p->wake_fd;
	memset(&up, 0, sizeof(up));
	up.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | setup_flags;
	rc = io_uring_queue_init_params(entries, &u->ring, &up);
	if (rc == -EINVAL) { /* kernel older than 6.1 */
		memset(&up, 0, sizeof(up));
		up.flags = setup_flags;
		rc = io_uring_queue_init_params(entries, &u->ring, &up);
	}
	if (rc) {
		nvt_err_set(err, -rc,
			    "io_uring setup failed: %s (is io_uring enabled? "
			    "cat /proc/sys/kernel/io_uring_disabled must print 0)",
			    strerror(-rc));
		return rc;
	}
	u->ok = true;
	rc = io_uring_register_files(&u->ring, fds, nfds);
	if (rc) {
		nvt_err_set(err, -rc, "io_uring file registration: %s", strerror(-rc));
		return rc;
	}
	if (p->bufs && p->nbufs) {
		uint64_t sl =
			slice_bytes && slice_bytes < p->buf_bytes ? slice_bytes : p->buf_bytes;
		uint64_t first = sl - phase % sl, per, n;
		struct iovec *iov;
		if (first >= p->buf_bytes)
			first = p->buf_bytes;
		per = 1 + (p->buf_bytes - first + sl - 1) / sl;
		if (first == p->buf_bytes)
			per = 1;
		n = per * p->nbufs;
		iov = n <= 16384 ? calloc(n, sizeof(*iov)) : NULL;
		if (iov) {
			u->slice = sl;
			u->slice_first = first;
			u->slices_per_buf = (unsigned)per;
			for (uint64_t i = 0; i < n; i++) {
				uint64_t o = nvt_uring_slice_start(u, i % per);
				uint64_t end = nvt_uring_slice_start(u, i % per + 1);
				iov[i].iov_base = (uint8_t *)p->bufs + i / per * p->buf_bytes + o;
				iov[i].iov_len = (end < p->buf_bytes ? end : p->buf_bytes) - o;
			}
			/* without (memlock limits, too many slices) every I/O pins its pages:
			 * slower, still correct */
			u->fixed_bufs = io_uring_register_buffers(&u->ring, iov, (unsigned)n) == 0;
			free(iov);
		}
	}
	return 0;
}

uint64_t nvt_uring_slice_start(const struct nvt_uring *u, unsigned j)
{
	return j ? u->slice_first + (uint64_t)(j - 1) * u->slice : 0;
}

unsigned nvt_uring_slice_of(const struct nvt_uring *u, uint64_t b, uint64_t *room)
{
	unsigned j = b < u->slice_first ? 0 : 1 + (unsigned)((b - u->slice_first) / u->slice);

	*room = nvt_uring_slice_start(u, j + 1) - b;
	return j;
}

void nvt_uring_close(struct nvt_uring *u, bool idle)
{
	/* The ring is torn down asynchronously and its registered files with it: a device
	 * opened exclusively would stay claimed a moment after close, and the next open (the
	 * next run of bench, say) would find it busy. With nothing in flight the files are
	 * unregistered here, synchronously; with I/O stuck on a hung drive that would wait for
	 * it, so the ring is left to the kernel. */
	if (u->ok && idle)
		io_uring_unregister_files(&u->ring);
	if (u->ok)
		io_uring_queue_exit(&u->ring);
	u->ok = false;
}

struct io_uring_sqe *nvt_uring_sqe(struct nvt_uring *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

void nvt_uring_prep_rw(struct nvt_uring *u, struct io_uring_sqe *sqe, const struct nvt_io *io,
		       int file, void *buf, uint64_t len, uint64_t off, uint64_t user_data)
{
	if (io->buf_index >= 0 && u->fixed_bufs) {
		if (io->dir == NVT_IO_WRITE)
			io_uring_prep_write_fixed(sqe, file, buf, (unsigned)len, off,
						  io->buf_index);
		else
			io_uring_prep_read_fixed(sqe, file, buf, (unsigned)len, off, io->buf_index);
	} else if (io->dir == NVT_IO_WRITE) {
		io_uring_prep_write(sqe, file, buf, (unsigned)len, off);
	} else {
		io_uring_prep_read(sqe, file, buf, (unsigned)len, off);
	}
	sqe->flags |= IOSQE_FIXED_FILE | (io->blocking ? IOSQE_ASYNC : 0);
	io_uring_sqe_set_data64(sqe, user_data);
}

void nvt_uring_prep_sync(struct io_uring_sqe *sqe, int file, uint64_t user_data)
{
	io_uring_prep_fsync(sqe, file, IORING_FSYNC_DATASYNC);
	sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, user_data);
}

void nvt_uring_arm_wake(struct nvt_uring *u)
{
	struct io_uring_sqe *sqe;

	if (u->wake_fd < 0 || u->wake_armed || !(sqe = nvt_uring_sqe(u)))
		return;
	io_uring_prep_poll_add(sqe, u->wake_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, NVT_TAG_WAKE);
	u->wake_armed = true;
}

int nvt_uring_wait(struct nvt_uring *u, int64_t timeout_ns)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = {.tv_sec = timeout_ns / 1000000000,
				       .tv_nsec = timeout_ns % 1000000000};
	int rc = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, timeout_ns >= 0 ? &ts : NULL,
						  NULL);

	return rc == -ETIME || rc == -EINTR || rc > 0 ? 0 : rc;
}

bool nvt_uring_take_wake(struct nvt_uring *u, uint64_t user_data)
{
	uint64_t v;

	if (user_data != NVT_TAG_WAKE)
		return false;
	u->wake_armed = false;
	if (read(u->wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: another wake-up drained it already; nothing is lost */
	}
	return true;
}

int nvt_split_init(struct nvt_split *s, unsigned n)
{
	memset(s, 0, sizeof(*s));
	s->npar = n;
	s->par = calloc(n, sizeof(*s->par));
	s->ready = calloc(n, sizeof(*s->ready));
	return s->par && s->ready ? 0 : -ENOMEM;
}

void nvt_split_free(struct nvt_split *s)
{
	free(s->par);
	free(s->ready);
	memset(s, 0, sizeof(*s));
}

int nvt_split_take(struct nvt_split *s, uint64_t tag)
{
	for (unsigned i = 0; i < s->npar; i++) {
		if (!s->par[i].used) {
			s->par[i] = (struct nvt_split_parent){.tag = tag, .used = true};
			return (int)i;
		}
	}
	return -EBUSY;
}

bool nvt_split_piece_done(struct nvt_split *s, unsigned pi, int64_t res)
{
	struct nvt_split_parent *pa = &s->par[pi];

	if (res < 0 && pa->res >= 0)
		pa->res = res;
	else if (pa->res >= 0)
		pa->res += res;
	if (--pa->pending)
		return false;
	pa->used = false;
	if (!pa->reported)
		s->ready[s->nready++] = (struct nvt_io_done){.tag = pa->tag, .res = pa->res};
	return true;
}

bool nvt_split_fail(struct nvt_split *s, unsigned pi, int64_t res)
{
	struct nvt_split_parent *pa = &s->par[pi];

	if (!pa->reported)
		s->ready[s->nready++] = (struct nvt_io_done){.tag = pa->tag, .res = res};
	pa->reported = true;
	if (pa->pending)
		return false;
	pa->used = false;
	return true;
}

unsigned nvt_split_pop(struct nvt_split *s, struct nvt_io_done *out, unsigned max)
{
	unsigned n = s->nready < max ? s->nready : max;

	memcpy(out, s->ready, n * sizeof(*out));
	memmove(s->ready, s->ready + n, (s->nready - n) * sizeof(*s->ready));
	s->nready -= n;
	return n;
}
