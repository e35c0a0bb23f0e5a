/* SPDX-License-Identifier: MIT */
/* The stdout sink: writes the data (not the header) to a descriptor at the programmed rate; a
 * reader that holds it back is reported as late. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "nvtape/sink.h"

static int stdout_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	(void)err;
	*state = (void *)(intptr_t)a->fd;
	return 0;
}

static int stdout_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t off,
			  struct nvt_err *err)
{
	int fd = (int)(intptr_t)state;

	(void)off;
	while (bytes) {
		ssize_t n = write(fd, buf, bytes);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				nvt_err_set(
					err, EPIPE,
					"the reader of standard output went away (broken pipe)");
			return -errno;
		}
		buf += n;
		bytes -= (uint64_t)n;
	}
	return 0;
}

const struct nvt_sink_ops nvt_sink_stdout = {
	.name = "stdout",
	.help = "writes the data (not the header) to standard output at the rate",
	.caps = NVT_SINK_CAN_BLOCK,
	.open = stdout_open,
	.consume = stdout_consume,
};
