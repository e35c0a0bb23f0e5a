/* SPDX-License-Identifier: MIT */
/* Options structs that can grow: each begins with its struct_size, set by its init function.
 * A caller built against an older, smaller struct gets the defaults for what it lacks. */
#ifndef NVT_UTIL_OPTS_H
#define NVT_UTIL_OPTS_H

#include <stddef.h>

#include "nvtape/nvtape.h"

/* dst (dst_size bytes) holds the defaults; copy src over it. 0, or -EINVAL with err
 * (NVT_ERR_PARAM) when src was not initialized by init_fn. */
int nvt_opts_merge(void *dst, size_t dst_size, const void *src, const char *init_fn,
		   struct nvt_err *err);

#endif
