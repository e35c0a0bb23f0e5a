/* SPDX-License-Identifier: MIT */
/* The null sink: consumes at the programmed rate and discards (benchmarks). */
#include "nvtape/sink.h"

static int null_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t off,
			struct nvt_err *err)
{
	(void)state;
	(void)buf;
	(void)bytes;
	(void)off;
	(void)err;
	return 0;
}

const struct nvt_sink_ops nvt_sink_null = {
	.name = "null",
	.help = "consumes at the rate and discards (benchmarks)",
	.consume = null_consume,
};
