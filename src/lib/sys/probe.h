/* SPDX-License-Identifier: MIT */
/* Recognizing what a block device already holds (filesystems, md superblocks, partition
 * tables, recordings) before nvtape writes over it. */
#ifndef NVT_PROBE_H
#define NVT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVT_PROBE_HEAD (128u << 10) /* bytes at the start of the device the probe needs */
#define NVT_PROBE_TAIL (128u << 10) /* bytes at the end */

/* head: the first NVT_PROBE_HEAD bytes (or all, if shorter); tail: the last NVT_PROBE_TAIL
 * bytes of a device of `size` bytes. Writes a description into what and returns true when
 * something is found. */
bool nvt_probe_buffers(const uint8_t *head, size_t head_len, const uint8_t *tail, size_t tail_len,
		       uint64_t size, char *what, size_t cap);
/* Read and probe a device. Returns 1 found, 0 nothing, -errno on a read error. */
int nvt_probe_device(const char *path, char *what, size_t cap);
/* Names of the holders of a block device (md arrays, device-mapper), "" when none. */
bool nvt_blockdev_holders(const char *path, char *buf, size_t cap);

#endif
