/* SPDX-License-Identifier: MIT */
/* NVMe completion status as words. */
#ifndef NVT_NVME_STATUS_H
#define NVT_NVME_STATUS_H

#include <stddef.h>

/* status: the 15-bit status field (SC in bits 0-7, SCT in bits 8-10, as the Linux
 * passthrough reports it) */
const char *nvt_nvme_status_str(unsigned status, char *buf, size_t cap);

#endif
