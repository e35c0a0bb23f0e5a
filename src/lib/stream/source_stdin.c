/* SPDX-License-Identifier: MIT */
/* stdin source: reads a pipe, file or descriptor into ring chunks. A pipe can be stalled, so
 * this source waits for free chunks (back-pressure) and never drops. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "stream/source.h"
#include "util/sysutil.h"

static int stdin_run(struct nvt_source *s)
{
	uint64_t chunk = s->ring->chunk_bytes;

	for (;;) {
		if (atomic_load(&s->stop) || atomic_load(&s->ring->aborted)) {
			s->end = NVT_SRC_END_STOP;
			break;
		}
		if (s->p.limit_bytes && atomic_load(&s->produced_bytes) >= s->p.limit_bytes) {
			s->end = NVT_SRC_END_LIMIT;
			break;
		}
		if (!nvt_src_take_chunk(s)) {
			if (nvt_ring_wait_free(s->ring, 100) == -ECANCELED) {
				s->end = NVT_SRC_END_STOP;
				break;
			}
			continue;
		}
		uint64_t want = chunk - s->cur_fill;
		if (s->p.limit_bytes && s->p.limit_bytes - atomic_load(&s->produced_bytes) < want)
			want = s->p.limit_bytes - atomic_load(&s->produced_bytes);
		struct pollfd pfd = {.fd = s->p.fd, .events = POLLIN};
		int pr = poll(&pfd, 1, 100);
		if (pr < 0 && errno != EINTR) {
			nvt_err_set(&s->err, errno, "poll on input: %s", strerror(errno));
			s->end = NVT_SRC_END_ERROR;
			break;
		}
		if (pr <= 0)
			continue;
		ssize_t n = read(s->p.fd, s->cur + s->cur_fill, want);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			nvt_err_set(&s->err, errno, "read from input: %s", strerror(errno));
			s->end = NVT_SRC_END_ERROR;
			break;
		}
		if (n == 0) {
			s->end = NVT_SRC_END_EOF;
			break;
		}
		nvt_src_mark_start(s);
		s->cur_fill += (uint64_t)n;
		atomic_fetch_add(&s->produced_bytes, (uint64_t)n);
		atomic_fetch_add(&s->emitted, (uint64_t)n);
		if (s->cur_fill == chunk)
			nvt_src_publish(s);
	}
	nvt_src_publish(s);
	return s->end == NVT_SRC_END_ERROR ? -1 : 0;
}

const struct nvt_source_ops nvt_source_stdin = {
	.name = "stdin",
	.help = "bytes from standard input (a pipe or file); back-pressured, never drops",
	.kind = NVT_SRC_STDIN,
	.beat_bytes = 1,
	.never_stalls = false,
	.run = stdin_run,
};
