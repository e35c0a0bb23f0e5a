/* SPDX-License-Identifier: MIT */
/* Synchronous I/O over a layout's members through open descriptors: headers, indexes and
 * scans outside the queued data path. */
#ifndef NVT_STORAGE_LAYOUT_IO_H
#define NVT_STORAGE_LAYOUT_IO_H

#include <stdbool.h>

#include "nvtape/layout.h"

/* Synchronous I/O over the layout through open descriptors fd[0..n-1]. */
int nvt_layout_pread(const struct nvt_layout *l, const int *fd, void *buf, uint64_t len,
		     uint64_t off);
int nvt_layout_pwrite(const struct nvt_layout *l, const int *fd, const void *buf, uint64_t len,
		      uint64_t off);
/* Open every member (flags as for open(2)); on failure closes what it opened. */
int nvt_layout_open(const struct nvt_layout *l, int flags, int *fd, struct nvt_err *err);
void nvt_layout_close(const struct nvt_layout *l, int *fd);
/* Logical size: a single member's size; for stripes, what the members hold together (files)
 * or n x the smallest member (devices), whole stripe rows only for devices. */
int nvt_layout_size(const struct nvt_layout *l, const int *fd, uint64_t *size, bool *blockdev,
		    struct nvt_err *err);

#endif
