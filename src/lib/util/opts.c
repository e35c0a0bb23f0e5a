/* SPDX-License-Identifier: MIT */
/* Merging a caller's options struct over the defaults (see opts.h). */
#include <errno.h>
#include <string.h>

#include "util/opts.h"

int nvt_opts_merge(void *dst, size_t dst_size, const void *src, const char *init_fn,
		   struct nvt_err *err)
{
	size_t size;

	memcpy(&size, src, sizeof(size)); /* struct_size, the first member */
	if (size < sizeof(size_t) || size > dst_size) {
		nvt_err_param(err, "options not initialized: call %s() first", init_fn);
		return -EINVAL;
	}
	memcpy(dst, src, size);
	return 0;
}
