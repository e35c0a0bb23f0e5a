/* SPDX-License-Identifier: MIT */
/* Self-contained HTML reports of bench and speedtest results: inline SVG plots and tables, no
 * scripts and no external assets, so that the file opens in any browser, anywhere. */
#ifndef NVTAPE_REPORT_H
#define NVTAPE_REPORT_H

#include <stdio.h>

#include "bench.h"
#include "nvtape.h"
#include "speedtest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the report is about. Either result may be NULL (bench and speedtest alone or both). */
struct nvt_report {
	const char *title;
	const char *command; /* the command line, shown verbatim */
	const struct nvt_bench_opts *bench_opts;
	const struct nvt_bench_result *bench;
	const struct nvt_speedtest_result *speed;
};

NVT_API int nvt_report_html(FILE *f, const struct nvt_report *r);
/* Write to path (atomically: a temporary file renamed into place). */
NVT_API int nvt_report_write(const char *path, const struct nvt_report *r, struct nvt_err *err);

#ifdef __cplusplus
}
#endif

#endif
