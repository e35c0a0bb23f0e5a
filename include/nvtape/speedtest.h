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

/* The NVMe controllers under path (a file, a block device, md or device-mapper over them). n=0:
 * none (not NVMe); *what says what the target sits on. */
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
	const volatile sig_atomic_t *interrupt;
	void (*notice)(const char *msg, void *arg);
	void *arg;
};

struct nvt_speed_target {
	const char *path;
	char on[96]; /* what it sits on */
	struct nvt_link link[NVT_LINK_MAX];
	unsigned nlinks;
	int write_exit, read_exit; /* -1: not run */
	uint64_t write_bytes, read_bytes;
	double write_s, read_s;
	double write_mbps, read_mbps;
	double write_cpu_s, read_cpu_s; /* the I/O thread / the reading and checking thread */
	uint64_t corrupt, gaps, backward;
	uint64_t first_bad_offset; /* file offset of the first bad beat (corrupt or gap) */
	char error[512];
	struct nvt_series wseries, rseries;
	uint64_t t_start_ns, t_end_ns; /* per phase, for the aggregate */
};

struct nvt_speedtest_result {
	unsigned n;
	struct nvt_speed_target t[NVT_SPEED_MAX_TARGETS];
	double agg_write_mbps, agg_read_mbps; /* all bytes / first start to last end */
	bool interrupted;
};

NVT_API void nvt_speedtest_opts_default(struct nvt_speedtest_opts *o);
/* 0 clean; 2 a read-back found bad data; 1 a target failed (its error); 64 bad options. */
NVT_API int nvt_speedtest(const struct nvt_speedtest_opts *o, struct nvt_speedtest_result *res);
NVT_API void nvt_speedtest_result_free(struct nvt_speedtest_result *res);

#ifdef __cplusplus
}
#endif

#endif
