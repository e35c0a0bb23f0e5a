/* SPDX-License-Identifier: MIT */
/* Checks on an output path before anything is created or truncated. */
#ifndef NVT_TARGET_H
#define NVT_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "nvtape/nvtape.h"

/* Refuse directories and special files; block devices that are mounted or held (md,
 * device-mapper), and, unless force, ones that carry a filesystem, RAID superblock, partition
 * table or recording; with need_bytes, refuse when the filesystem or device is too small. */
int nvt_target_check_output(const char *path, uint64_t need_bytes, bool force, struct nvt_err *err);

#endif
