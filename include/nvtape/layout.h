/* SPDX-License-Identifier: MIT */
/* Where a recording lives: one file or device, or a stripe over several in the Linux md RAID0
 * layout (equal members, chunk `stripe`): logical byte x is on member (x / stripe) % n at
 * member_offset + (x / (stripe * n)) * stripe + x % stripe. A recording is laid out in this
 * logical space exactly as in a file: header at 0, data at 4096. See docs/file-format.md. */
#ifndef NVTAPE_LAYOUT_H
#define NVTAPE_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVT_MAX_MEMBERS 16

struct nvt_layout {
	unsigned n; /* members; 1 = a plain file or device */
	const char *path[NVT_MAX_MEMBERS];
	uint64_t stripe;        /* RAID0 chunk in bytes (n > 1), a multiple of 4 KiB */
	uint64_t member_offset; /* where the striped data starts on every member (the md
				   data offset when writing an md array's members) */
};

/* A one-member layout for path. */
NVT_API void nvt_layout_single(struct nvt_layout *l, const char *path);
/* given when it names members, else a one-member layout for path. */
NVT_API void nvt_layout_resolve(const struct nvt_layout *given, const char *path,
				struct nvt_layout *out);
/* Member and member byte offset of logical byte x; *run = bytes until the chunk ends. */
NVT_API unsigned nvt_layout_map(const struct nvt_layout *l, uint64_t x, uint64_t *member_off,
				uint64_t *run);
/* Bytes of the logical range [0, size) that lie on member m (without member_offset). */
NVT_API uint64_t nvt_layout_share(const struct nvt_layout *l, unsigned m, uint64_t size);
/* "a.nvt" or "a.nvt+b.nvt (stripe 512 KiB)" for messages. */
NVT_API const char *nvt_layout_name(const struct nvt_layout *l, char *buf, size_t cap);
/* Check the geometry (member count, stripe a multiple of 4 KiB, offset aligned). */
NVT_API int nvt_layout_check(const struct nvt_layout *l, struct nvt_err *err);

#ifdef __cplusplus
}
#endif

#endif
