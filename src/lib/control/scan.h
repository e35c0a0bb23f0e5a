/* SPDX-License-Identifier: MIT */
/* Sequential O_DIRECT reading of a byte range with several reads in flight, handing each chunk
 * to a callback strictly in file order (used by verify and recover). */
#ifndef NVT_SCAN_H
#define NVT_SCAN_H

#include <signal.h>
#include <stdint.h>

#include "nvtape/nvtape.h"

struct nvt_scan_opts {
	const struct nvt_layout *layout;
	uint64_t offset; /* 4096-aligned start */
	uint64_t len;    /* bytes to deliver */
	uint64_t chunk_bytes;
	unsigned chunks;
	unsigned qd;        /* reads in flight (nvme engine: commands per drive) */
	const char *engine; /* NULL = file */
	/* return 0 to go on, 1 to stop early (not an error) */
	int (*on_chunk)(void *arg, const void *buf, uint64_t bytes, uint64_t file_offset);
	void (*progress)(uint64_t done, uint64_t total, void *arg);
	void (*notice)(const char *msg, void *arg);
	void *arg;      /* for on_chunk */
	void *user_arg; /* for progress and notice (the caller's caller's) */
	const volatile sig_atomic_t *interrupt; /* non-zero: stop with -EINTR (NULL: none) */
};

struct nvt_scan_stats {
	uint64_t bytes;
	uint64_t io_cpu_ns;
	double seconds;
	unsigned max_inflight;
};

int nvt_scan(const struct nvt_scan_opts *o, struct nvt_scan_stats *st, struct nvt_err *err);

#endif
