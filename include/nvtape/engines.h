/* SPDX-License-Identifier: MIT */
/* The storage engines a recording can be written and read through, as the library lists them:
 * name, one line of help, capabilities. Lists, help texts and option checks come from here. */
#ifndef NVTAPE_ENGINES_H
#define NVTAPE_ENGINES_H

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nvt_engine_info.caps */
#define NVT_ENGINE_DISKLESS        (1u << 0) /* stores nothing: no target checks, no space */
#define NVT_ENGINE_FILE_NEEDS_SIZE (1u << 1) /* a file target needs its length up front */
#define NVT_ENGINE_QD_PER_DRIVE    (1u << 2) /* qd counts commands per drive, not per target */
#define NVT_ENGINE_FIXED_BUFS      (1u << 3) /* registers the ring for zero-copy DMA */
#define NVT_ENGINE_INTERNAL        (1u << 4) /* chosen by another engine, not by name */

struct nvt_engine_info {
	const char *name;
	const char *help;
	unsigned caps;       /* NVT_ENGINE_* */
	unsigned max_qd;     /* 0 = the general limit (1024) */
	unsigned default_qd; /* 0 = the general default (8) */
};

/* The i-th engine; 0, or -ENOENT past the end. */
NVT_API int nvt_engine_info_at(unsigned i, struct nvt_engine_info *out);
/* The engine called name; 0, or -ENOENT. */
NVT_API int nvt_engine_info_find(const char *name, struct nvt_engine_info *out);
/* "file, null, nvme" for messages: the engines chosen by name. */
NVT_API const char *nvt_engine_names(void);

#ifdef __cplusplus
}
#endif

#endif
