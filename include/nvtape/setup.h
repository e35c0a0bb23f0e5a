/* SPDX-License-Identifier: MIT */
/* Preparing a recording volume the way the FPGA Drive Recorder's setup scripts do: an md RAID0
 * array (metadata 1.2) or a single drive, a filesystem aligned to the stripe, mounted noatime;
 * and tearing it down. External tools (mdadm, mkfs.*) do the work; nvtape checks first. */
#ifndef NVTAPE_SETUP_H
#define NVTAPE_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nvt_setup_mode { NVT_SETUP_RAID0, NVT_SETUP_SINGLE, NVT_SETUP_TEARDOWN };

struct nvt_setup_opts {
	enum nvt_setup_mode mode;
	const char *devs[NVT_MAX_MEMBERS];
	unsigned ndevs;
	uint64_t chunk;    /* RAID0 chunk, default 512 KiB */
	const char *fs;    /* xfs (default), ext4, exfat */
	const char *mount; /* mount point, default /mnt/rec */
	const char *md;    /* md device, default /dev/md0 */
	/* shown what will be destroyed; return true to go on (not called with yes) */
	bool (*confirm)(const char *plan, void *arg);
	bool yes;
	void (*log)(const char *line, void *arg); /* each command before it runs */
	void *arg;
};

NVT_API void nvt_setup_opts_default(struct nvt_setup_opts *o);
/* 0, or -errno with err saying why (refused options and a declined confirmation have
 * NVT_ERR_PARAM set). */
NVT_API int nvt_setup(const struct nvt_setup_opts *o, struct nvt_err *err);

#ifdef __cplusplus
}
#endif

#endif
