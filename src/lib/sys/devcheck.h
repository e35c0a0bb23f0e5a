/* SPDX-License-Identifier: MIT */
/* Checks on an output path before anything is created or truncated, and the open of a
 * recording's output file. */
#ifndef NVT_TARGET_H
#define NVT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape/nvtape.h"

/* Refuse directories, special files and symbolic links (but one to a block device, as
 * /dev/disk/by-id/ names are); block devices that are mounted or held (md, device-mapper), and,
 * unless force, ones that carry a filesystem, RAID superblock, partition table or recording;
 * files being written by a recording (their lock is held), and, unless force, files that hold
 * anything (-EEXIST, saying what they hold, NVT_HINT_FORCE); with need_bytes, refuse when the
 * device is too small. engine (the recording's, may be NULL) words the message. */
int nvt_target_check_output(const char *path, uint64_t need_bytes, bool force, const char *engine,
			    struct nvt_err *err);

/* Open a recording's output file (flags: the access mode and O_DIRECT...): never through a
 * symbolic link (-ELOOP); created new (O_EXCL), or, when it exists already, opened only when it
 * is empty or force is set (-EEXIST otherwise), so nothing checked before changes unseen. A file
 * created and then refused (-EINVAL: no O_DIRECT) is removed. fd, or -errno with err set for
 * those cases (nvt_open_data's otherwise). */
int nvt_open_output(const char *path, int flags, bool force, const char *engine, bool *blockdev,
		    struct nvt_err *err);

/* What an open file holds, in words: "a complete nvtape recording (N data bytes, started
 * ...)", an interrupted one, an FPGA Drive Recorder (fdrec) recording, or "a file of N bytes".
 * true when it is a recording. */
bool nvt_describe_file(int fd, char *buf, size_t cap);

#endif
