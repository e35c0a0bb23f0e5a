/* SPDX-License-Identifier: MIT */
/* Inside export: the checked read of a data range, and the packet formats (export_pcap.c). */
#ifndef NVT_CONTROL_EXPORT_INT_H
#define NVT_CONTROL_EXPORT_INT_H

#include "format/index.h"
#include "nvtape/export.h"

/* What becomes of the data read: its bytes k at data offset at. 0 or -errno with err set. */
typedef int (*nvt_export_put_fn)(void *ctx, const uint8_t *buf, uint64_t k, uint64_t at,
				 struct nvt_export_result *res);
/* Read length bytes from data offset offset, checked against the checksums, handed to put.
 * 0 or -1 with res->err set. */
int nvt_export_read(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		    uint64_t length, nvt_export_put_fn put, void *ctx,
		    struct nvt_export_result *res);
/* pcapng or pcap of a packet recording (res->rec read, range resolved). 0 or -errno. */
int nvt_export_packets(const struct nvt_export_opts *o, const struct nvt_layout *L,
		       const struct nvt_index *ix, int fd, struct nvt_export_result *res);

#endif
