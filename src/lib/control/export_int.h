/* SPDX-License-Identifier: MIT */
/* Inside export: the checked read of a data range, and the packet formats (export_pcap.c). */
#ifndef NVT_CONTROL_EXPORT_INT_H
#define NVT_CONTROL_EXPORT_INT_H

#include <signal.h>

#include "format/index.h"
#include "nvtape/export.h"

/* What becomes of the data read: its bytes k at data offset at. 0 or -errno with err set. */
typedef int (*nvt_export_put_fn)(void *ctx, const uint8_t *buf, uint64_t k, uint64_t at,
				 struct nvt_export_result *res);
/* Read length bytes from data offset offset, checked against the checksums, handed to put;
 * stopped (-EINTR) between pieces once *stop is set. 0 or -1 with res->err set. */
int nvt_export_read(const struct nvt_layout *L, const struct nvt_index *ix, uint64_t offset,
		    uint64_t length, nvt_export_put_fn put, void *ctx,
		    const volatile sig_atomic_t *stop, struct nvt_export_result *res);
/* All k bytes to fd (a write a signal interrupts is taken up again unless *stop is set).
 * 0 or -errno with res->err set. */
int nvt_export_write(int fd, const uint8_t *buf, uint64_t k, const volatile sig_atomic_t *stop,
		     struct nvt_export_result *res);
/* The time range of o in absolute ns, relative times counted from t0: refused (-EINVAL,
 * NVT_ERR_PARAM) when it is empty or inverted. */
int nvt_export_times(const struct nvt_export_opts *o, uint64_t t0, uint64_t *from, uint64_t *to,
		     struct nvt_export_result *res);
/* Bytes of one sample of a SigMF datatype (checked: nvt_meta_datatype_ok), times the channels
 * (0: one). */
uint64_t nvt_sigmf_sample_bytes(const char *dt, uint64_t channels);
/* ... of the datatype and channels the metadata text says (NULL, or none or not valid: ru8,
 * one channel): what a recording's index is padded to (nvt_index_pad). */
uint64_t nvt_sigmf_meta_sample_bytes(const char *meta);
/* pcapng or pcap of a packet recording (res->rec read, range resolved). 0 or -errno. */
int nvt_export_packets(const struct nvt_export_opts *o, const struct nvt_layout *L,
		       const struct nvt_index *ix, int fd, struct nvt_export_result *res);

#endif
