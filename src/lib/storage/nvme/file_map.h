/* SPDX-License-Identifier: MIT */
/* Where the nvme engine's bytes lie on NVMe namespaces: raw namespaces (one, or a stripe in the
 * md RAID0 layout), or the blocks of a file on a volume (a namespace, a partition of one, or an
 * md RAID0 array over them), found through FIEMAP (FIBMAP where the filesystem has no FIEMAP)
 * and md's sysfs. Logical byte -> (member, byte on that member's namespace). */
#ifndef NVT_NVME_TARGET_H
#define NVT_NVME_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape/layout.h"
#include "nvtape/nvtape.h"

struct nvt_nvme_member {
	unsigned ctrl, ns; /* the namespace: /dev/ngCnN */
	uint64_t base;     /* byte on the namespace where this member's share starts */
};

struct nvt_extent {
	uint64_t logical, physical, len; /* file bytes [logical, +len) at volume byte physical */
};

struct nvt_nvme_target {
	unsigned n; /* members */
	struct nvt_nvme_member m[NVT_MAX_MEMBERS];
	uint64_t stripe; /* RAID0 chunk (n > 1) */
	bool file;       /* a file on a volume: ext maps file bytes to volume bytes */
	struct nvt_extent *ext;
	size_t next;
	uint64_t mapped;  /* file bytes mapped, from 0 */
	char volume[160]; /* what the file is on, for messages */
};

/* Raw namespaces: the members of l are /dev/nvmeXnY, /dev/ngXnY or partitions /dev/nvmeXnYpZ. */
int nvt_nvme_target_raw(const struct nvt_layout *l, struct nvt_nvme_target *t, struct nvt_err *err);
/* The volume under the open file fd: a namespace, a partition of one, or md RAID0 over them. */
int nvt_nvme_target_volume(int fd, const char *path, struct nvt_nvme_target *t,
			   struct nvt_err *err);
/* Map the file's bytes [0, size) (sets t->ext). Ranges that are holes or unwritten extents go to
 * *fill (malloc'ed, *nfill entries; the caller writes them through the filesystem and maps
 * again); extents nvtape cannot write safely underneath the filesystem (shared, inline,
 * encoded, delayed, unaligned) are refused. */
int nvt_nvme_target_map_file(struct nvt_nvme_target *t, int fd, const char *path, uint64_t size,
			     struct nvt_extent **fill, size_t *nfill, struct nvt_err *err);
/* Member and namespace byte of logical byte x; *run = bytes that follow contiguously there
 * (0: x is not mapped). */
unsigned nvt_nvme_target_map(const struct nvt_nvme_target *t, uint64_t x, uint64_t *ns_off,
			     uint64_t *run);
void nvt_nvme_target_free(struct nvt_nvme_target *t);

#endif
