/* SPDX-License-Identifier: MIT */
/* Sequential write and read speed of one or several targets at once, every byte written as test
 * pattern and checked on read-back; the PCIe link of the NVMe controllers behind each target. */
#ifndef NVTAPE_SPEEDTEST_H
#define NVTAPE_SPEEDTEST_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench.h"
#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVT_SPEED_MAX_TARGETS 8
#define NVT_LINK_MAX          8

/* An NVMe controller behind a target, and its PCIe link as sysfs reports it. */
struct nvt_link {
	char ctrl[32];  /* nvme0 */
	char model[48]; /* Identify model */
	char cur_speed[32], max_speed[32];
	unsigned cur_width, max_width; /* 0: unknown */
};

/* The NVMe controllers under path (a file, a block device, md or device-mapper over them), read
 * from sysfs (src/lib/sys/nvme_link.c). n=0: none (not NVMe); *what says what the target sits
 * on. 0 or -errno. */
NVT_API int nvt_links_of(const char *path, struct nvt_link *links, unsigned max, unsigned *n,
			 char *what, size_t what_cap);

struct nvt_speedtest_opts {
	unsigned ntargets;
	const char *target[NVT_SPEED_MAX_TARGETS];
	bool write, read;     /* both by default */
	uint64_t size_bytes;  /* per target */
	const char *engine;   /* file (default) or nvme */
	uint64_t chunk_bytes; /* default 8 MiB */
	unsigned chunks, qd;  /* default 32, 8 */
	bool force;           /* overwrite block devices that carry data */
	uint64_t sample_ns;   /* time series interval, default 100 ms */
	/* as nvt_record_opts.interrupt */
	const volatile sig_atomic_t *interrupt;
	void (*notice)(const char *msg, void *arg);
	void *arg;
};

enum nvt_speed_problem {
	NVT_SPP_DROPS = 1u << 0,      /* the write dropped beats */
	NVT_SPP_BAD_DATA = 1u << 1,   /* the read-back found corrupt, missing or misplaced beats */
	NVT_SPP_NO_PATTERN = 1u << 2, /* the read found no test pattern to check */
};

/* Every rate is bytes over the interval in which they moved, on CLOCK_MONOTONIC: for a write
 * from the first beat to the last write done, for a read from the start of the read to its
 * end. */
struct nvt_speed_target {
	const char *path;
	char on[96]; /* what it sits on */
	struct nvt_link link[NVT_LINK_MAX];
	unsigned nlinks;
	bool wrote, read;      /* the phase ran */
	int write_rc, read_rc; /* 0, or -errno when the phase failed (error says why) */
	unsigned problems;     /* enum nvt_speed_problem */
	uint64_t write_bytes, read_bytes;
	uint64_t write_t0_ns, write_t1_ns; /* CLOCK_MONOTONIC */
	uint64_t read_t0_ns, read_t1_ns;
	double write_s, read_s;
	double write_mbps, read_mbps;
	double write_cpu_s, read_cpu_s; /* the I/O thread / the reading and checking thread */
	uint64_t corrupt, gaps, backward;
	uint64_t first_bad_offset; /* file offset of the first bad beat (corrupt or gap) */
	char error[512];
	struct nvt_series wseries, rseries;
};

struct nvt_speedtest_result {
	unsigned n;
	struct nvt_speed_target t[NVT_SPEED_MAX_TARGETS];
	/* all bytes of a phase over its first target's start to its last target's end */
	double agg_write_mbps, agg_read_mbps;
	double agg_write_s, agg_read_s;
	unsigned failed;   /* targets whose write or read failed */
	unsigned problems; /* targets with a data problem (their problems) */
	bool interrupted;
	struct nvt_err err; /* refused options */
};

NVT_API void nvt_speedtest_opts_default(struct nvt_speedtest_opts *o);
/* 0 when every phase ran (failed / problems say how each target did), -EINVAL for refused
 * options (err, NVT_ERR_PARAM). */
NVT_API int nvt_speedtest(const struct nvt_speedtest_opts *o, struct nvt_speedtest_result *res);
/* The aggregate of one phase (write or read) of the n targets: bytes over first start to last
 * end, into *mbps and *seconds (0 when none ran). */
NVT_API void nvt_speed_aggregate(const struct nvt_speed_target *t, unsigned n, bool write,
				 double *mbps, double *seconds);
NVT_API void nvt_speedtest_result_free(struct nvt_speedtest_result *res);

#ifdef __cplusplus
}
#endif

#endif
