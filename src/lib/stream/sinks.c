/* SPDX-License-Identifier: MIT */
/* The sinks: checker (a DAC model that checks every beat), stdout (data to a pipe or file),
 * null (consumes at the rate, for benchmarks). */
#include <errno.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "stream/sink.h"

static int checker_consume(struct nvt_sink *s, const uint8_t *buf, uint64_t bytes, uint64_t off)
{
	nvt_checker_feed(&s->chk, buf, bytes, NVT_HEADER_SIZE + off);
	return 0;
}

static void checker_pass_start(struct nvt_sink *s)
{
	s->chk.expected = s->p.first_seq; /* every pass starts the sequence again */
}

const struct nvt_sink_ops nvt_sink_checker = {
	.name = "checker",
	.help = "checks every beat of a test-pattern recording at the programmed rate (a DAC)",
	.needs_pattern = true,
	.consume = checker_consume,
	.pass_start = checker_pass_start,
};

static int stdout_consume(struct nvt_sink *s, const uint8_t *buf, uint64_t bytes, uint64_t off)
{
	(void)off;
	while (bytes) {
		ssize_t n = write(s->p.fd, buf, bytes);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE)
				nvt_err_set(
					&s->err, EPIPE,
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
	.can_block = true,
	.consume = stdout_consume,
};

static int null_consume(struct nvt_sink *s, const uint8_t *buf, uint64_t bytes, uint64_t off)
{
	(void)s;
	(void)buf;
	(void)bytes;
	(void)off;
	return 0;
}

const struct nvt_sink_ops nvt_sink_null = {
	.name = "null",
	.help = "consumes at the rate and discards (benchmarks)",
	.consume = null_consume,
};
