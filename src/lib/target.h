/* Checks on an output path before anything is created or truncated. */
#ifndef NVT_TARGET_H
#define NVT_TARGET_H

#include <stdint.h>

#include "nvtape/nvtape.h"

/* Refuse directories, mounted block devices, raw devices and special files; with need_bytes,
 * refuse when the filesystem does not have that much free space. */
int nvt_target_check_output(const char *path, uint64_t need_bytes, struct nvt_err *err);

#endif
