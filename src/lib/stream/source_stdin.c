/* SPDX-License-Identifier: MIT */
/* stdin source: reads a pipe, file or descriptor straight into ring chunks through the push
 * API. A pipe can be stalled, so this source waits for free chunks (back-pressure) and never
 * drops. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"

static int stdin_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		     struct nvt_source_report *rep, struct nvt_err *err)
{
	(void)rep;
	for (;;) {
		size_t room;
		void *p = nvt_recorder_acquire(r, &room, 0);
		if (!p)
			return 0;
		struct pollfd pfd = {.fd = a->fd, .events = POLLIN};
		int pr = poll(&pfd, 1, 100);
		if (pr < 0 && errno != EINTR) {
			nvt_err_set(err, errno, "poll on the input: %s", strerror(errno));
			return -err->code;
		}
		if (pr <= 0)
			continue;
		ssize_t n = read(a->fd, p, room);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			nvt_err_set(err, errno, "read from the input: %s", strerror(errno));
			return -err->code;
		}
		if (n == 0)
			return 0;
		nvt_recorder_commit(r, (size_t)n);
	}
}

const struct nvt_source_ops nvt_source_stdin = {
	.name = "stdin",
	.help = "bytes from standard input (a pipe or file); back-pressured, never drops",
	.kind = NVT_SRC_STDIN,
	.unit_bytes = 1,
	.caps = 0,
	.run = stdin_run,
};
