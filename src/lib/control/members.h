/* SPDX-License-Identifier: MIT */
/* Rewriting a recording in place (members.c), for recover and metadata edits. */
#ifndef NVT_CONTROL_MEMBERS_H
#define NVT_CONTROL_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "nvtape/format.h"
#include "nvtape/layout.h"

/* Claim every member (each device exclusively, each file's lock), waiting up to two seconds for
 * a writer that just died to let go; fd holds them until nvt_layout_close. then says what to do
 * once a live writer has ended ("recover it"). 0, or -1 with err set. */
int nvt_members_claim(const struct nvt_layout *L, int *fd, const char *then, struct nvt_err *err);
int nvt_members_write(const struct nvt_layout *l, const int *fd, const void *buf, size_t len,
		      uint64_t off, struct nvt_err *err);
/* Cut every member file to its share of end logical bytes (devices are left as they are). */
int nvt_members_truncate(const struct nvt_layout *L, const int *fd, uint64_t end,
			 struct nvt_err *err);
int nvt_members_sync(const struct nvt_layout *L, const int *fd, struct nvt_err *err);
/* The header block as on disk, patched: an fdrec header marked complete with rec's length and
 * drops (it keeps the fields nvtape does not model); an nvtape one gets rec as its next
 * generation in its slot, the other slot kept. */
int nvt_members_write_header(const struct nvt_layout *L, const int *fd, struct nvt_recording *rec,
			     struct nvt_err *err);

#endif
