/* SPDX-License-Identifier: MIT */
/* Getting data out of a recording: a byte range or a time range (through the chunk capture
 * times), raw or as SigMF (a .sigmf-data copy with its .sigmf-meta, or only a .sigmf-meta that
 * describes the recording file in place). In SigMF every drop event starts a new capture whose
 * core:global_index jumps by the samples missing, so SigMF readers see the gaps nvtape counted.
 * Chunks are checked against their checksums as they are read. An output is never the recording
 * itself nor another recording; a file is written under a temporary name beside it and renamed
 * into place once whole, so a failed or interrupted export leaves nothing behind. */
#ifndef NVTAPE_EXPORT_H
#define NVTAPE_EXPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "layout.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nvt_export_format {
	NVT_EXPORT_RAW = 0,        /* the bytes, to out (a file) or out_fd */
	NVT_EXPORT_SIGMF = 1,      /* out.sigmf-data and out.sigmf-meta */
	NVT_EXPORT_SIGMF_META = 2, /* out.sigmf-meta only, describing the recording in place */
	/* packet recordings (docs/packets.md): the packets whose blocks start inside a byte
	 * range, or whose capture times lie inside a time range (relative times count from the
	 * first packet's), to out or out_fd */
	NVT_EXPORT_PCAPNG = 3, /* pcapng; a drop event becomes the next packet's epb_dropcount */
	NVT_EXPORT_PCAP = 4,   /* classic pcap, nanosecond timestamps; one link type only */
};

/* nvt_export_opts.time: which of from_ns / to_ns are set, and how */
#define NVT_EXPORT_FROM     (1u << 0)
#define NVT_EXPORT_TO       (1u << 1)
#define NVT_EXPORT_FROM_REL (1u << 2) /* from_ns counts from the first chunk's capture time */
#define NVT_EXPORT_TO_REL   (1u << 3)

struct nvt_export_opts {
	const char *path;         /* one file or device, or ... */
	struct nvt_layout layout; /* ... several members (n > 0) */
	uint64_t offset, length;  /* data bytes; length 0: to the end */
	unsigned time;            /* NVT_EXPORT_FROM... : a time range instead (CLOCK_REALTIME) */
	uint64_t from_ns, to_ns;
	enum nvt_export_format format;
	const char *out; /* raw: a file (NULL: out_fd); SigMF: the base name */
	int out_fd;
	void (*notice)(const char *msg, void *arg);
	void *arg;
	/* non-zero: stop between pieces of data; a file output is removed, the call returns
	 * -EINTR with res->interrupted set (as nvt_record_opts.interrupt; NULL: not stopped) */
	const volatile sig_atomic_t *interrupt;
};

struct nvt_export_result {
	struct nvt_recording rec;
	uint64_t offset, length;  /* the data range exported */
	uint64_t sample_bytes;    /* SigMF: bytes of one sample (all channels) */
	uint64_t captures;        /* SigMF: capture segments (1 + drop events inside the range) */
	uint64_t dropped_samples; /* SigMF: samples missing inside the range */
	uint64_t sums_good, sums_bad; /* chunks checked on the way out */
	/* pcapng / pcap: packets written, packets the drop index says were lost among them,
	 * capture times of the first and last packet written (ns since the epoch) */
	uint64_t packets, packets_dropped, first_ns, last_ns;
	char meta_path[4096], data_path[4096];
	struct nvt_err err;
	bool interrupted;    /* stopped by opts.interrupt */
	uint64_t bytes_read; /* data bytes read and written out when it ended */
	/* SigMF: samples the recording counts as lost but whose places it does not keep (an fdrec
	 * file keeps only its drop count; an nvtape one whose index could not be written), rounded
	 * up: its time axis is right only up to the first of them. The metadata says so in an
	 * annotation over the whole range; nvt_export still returns 0 (the CLI exits 2). */
	uint64_t unplaced_samples;
};

NVT_API void nvt_export_opts_init(struct nvt_export_opts *o);
/* 0 (res->sums_bad > 0: data that does not match its checksums was exported as it is;
 * res->unplaced_samples > 0: SigMF whose drops could not all be placed), or
 * -errno with res->err set (NVT_ERR_PARAM for a range or format the recording cannot give). */
NVT_API int nvt_export(const struct nvt_export_opts *o, struct nvt_export_result *res);

#ifdef __cplusplus
}
#endif

#endif
