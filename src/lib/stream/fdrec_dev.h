/* SPDX-License-Identifier: MIT */
/* Opening the FPGA Drive Recorder's device, shared by the fdrec source and sink: its default
 * path and the messages for a device in use or missing. */
#ifndef NVTAPE_FDREC_DEV_H
#define NVTAPE_FDREC_DEV_H

#include "nvtape/nvtape.h"

#define FDREC_DEFAULT_DEV "/dev/fdrec0"

/* The device at path, read-write: a descriptor, or -errno with err saying why (the driver
 * takes one opener at a time). */
int nvt_fdrec_open(const char *path, struct nvt_err *err);

#endif
