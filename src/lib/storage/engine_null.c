/* SPDX-License-Identifier: MIT */
/* null engine: every I/O completes at once. It measures nvtape's own ceiling, the way the
 * seeds quote the datapath's rate "without any SSD". */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/engine.h"

struct null_priv {
	struct nvt_io_done *done;
	unsigned ndone, cap;
	int wake_fd;
};

static int null_open(struct nvt_engine *e, const struct nvt_engine_params *p, struct nvt_err *err)
{
	struct null_priv *np = calloc(1, sizeof(*np));

	if (!np || !(np->done = calloc(p->qd + 2, sizeof(*np->done)))) {
		free(np);
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	np->cap = p->qd + 2;
	np->wake_fd = p->wake_fd;
	e->priv = np;
	e->fixed_bufs = false;
	snprintf(e->desc, sizeof(e->desc), "null engine (I/O completes at once, nothing stored)");
	return 0;
}

static int null_push(struct nvt_engine *e, uint64_t tag, int64_t res)
{
	struct null_priv *np = e->priv;

	if (np->ndone >= np->cap)
		return -EBUSY;
	np->done[np->ndone++] = (struct nvt_io_done){.tag = tag, .res = res};
	e->inflight++;
	return 0;
}

static int null_queue(struct nvt_engine *e, const struct nvt_io *io)
{
	if (io->dir == NVT_IO_READ)
		memset(io->buf, 0, io->len);
	return null_push(e, io->tag, (int64_t)io->len);
}

static int null_queue_sync(struct nvt_engine *e, uint64_t tag)
{
	return null_push(e, tag, 0);
}

static int null_submit(struct nvt_engine *e)
{
	(void)e;
	return 0;
}

static int null_reap(struct nvt_engine *e, struct nvt_io_done *out, unsigned max,
		     int64_t timeout_ns)
{
	struct null_priv *np = e->priv;
	unsigned n = np->ndone < max ? np->ndone : max;

	if (n) {
		memcpy(out, np->done, n * sizeof(*out));
		memmove(np->done, np->done + n, (np->ndone - n) * sizeof(*out));
		np->ndone -= n;
		e->inflight -= n;
		return (int)n;
	}
	if (np->wake_fd >= 0 && max) {
		struct pollfd pfd = {.fd = np->wake_fd, .events = POLLIN};
		int rc = poll(&pfd, 1, (int)(timeout_ns / 1000000));
		if (rc > 0) {
			uint64_t v;
			if (read(np->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				return -errno;
			out[0] = (struct nvt_io_done){.tag = NVT_TAG_WAKE, .res = 0};
			return 1;
		}
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static int null_noop_size(struct nvt_engine *e, uint64_t size, struct nvt_err *err)
{
	(void)e;
	(void)size;
	(void)err;
	return 0;
}

static int null_sync_now(struct nvt_engine *e, struct nvt_err *err)
{
	(void)e;
	(void)err;
	return 0;
}

static int null_write_sync(struct nvt_engine *e, const void *buf, uint64_t len, uint64_t offset,
			   struct nvt_err *err)
{
	(void)e;
	(void)buf;
	(void)len;
	(void)offset;
	(void)err;
	return 0;
}

static void null_close(struct nvt_engine *e)
{
	struct null_priv *np = e->priv;

	if (np)
		free(np->done);
	free(np);
	e->priv = NULL;
}

const struct nvt_engine_ops nvt_engine_null = {
	.name = "null",
	.help = "completes every I/O at once; stores nothing (measures nvtape's own ceiling)",
	.caps = NVT_ENGINE_DISKLESS,
	.open = null_open,
	.queue = null_queue,
	.queue_sync = null_queue_sync,
	.submit = null_submit,
	.reap = null_reap,
	.reserve = null_noop_size,
	.truncate = null_noop_size,
	.sync_now = null_sync_now,
	.write_sync = null_write_sync,
	.close = null_close,
};
