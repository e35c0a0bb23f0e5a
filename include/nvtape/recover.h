/* SPDX-License-Identifier: MIT */
/* Recovery: finalize a recording whose writer died (crash, kill -9, power loss). */
#ifndef NVTAPE_RECOVER_H
#define NVTAPE_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "layout.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nvt_recover_opts {
	const char *path;
	struct nvt_layout layout; /* several members when n > 0 */
	uint64_t chunk_bytes;
	unsigned chunks, qd;
	void (*progress)(uint64_t done, uint64_t total, void *arg);
	void (*notice)(const char *msg, void *arg);
	void *arg;
};

struct nvt_recover_result {
	struct nvt_recording before; /* as found */
	struct nvt_recording after;  /* as finalized */
	bool already_complete;
	uint64_t checkpoint_bytes;   /* data the last checkpoint vouched for */
	uint64_t extended_bytes;     /* test pattern found intact beyond the checkpoint */
	uint64_t dropped_tail_bytes; /* bytes after the valid data that were cut off */
	struct nvt_err err;
};

NVT_API void nvt_recover_opts_default(struct nvt_recover_opts *o);
/* 0 when the file is (now) complete, -errno with res->err saying why otherwise. */
NVT_API int nvt_recover(const struct nvt_recover_opts *o, struct nvt_recover_result *res);

#ifdef __cplusplus
}
#endif

#endif
