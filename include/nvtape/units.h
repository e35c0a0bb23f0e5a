/* SPDX-License-Identifier: MIT */
/* Parsing of sizes, rates and durations as the CLI and the library accept them. */
#ifndef NVTAPE_UNITS_H
#define NVTAPE_UNITS_H

#include <stdint.h>

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "123", "8M" (1024-based: K M G T, also Ki/KiB), "1500MB" (1000-based: KB MB GB TB),
 * decimals ("1.5G") and a trailing "/s" for rates. Returns 0 or -EINVAL / -ERANGE. */
NVT_API int nvt_parse_size(const char *s, uint64_t *out);
/* A rate in bytes per second: what nvt_parse_size takes (1500MB, 1.5G, "/s" optional), or bits
 * per second with powers of 1000: Kbps Mbps Gbps Tbps (any case for the prefix, lowercase b),
 * kbit/s Mbit/s Gbit/s (also without "/s"), divided by 8 and rounded to the nearest byte;
 * KBps MBps GBps are bytes. A unit ending in a lowercase b ("12Gb", "100mb", "8kib") reads as
 * bytes or bits: -EDOM. Otherwise 0, -EINVAL or -ERANGE. */
NVT_API int nvt_parse_rate(const char *s, uint64_t *out);
/* Seconds: "10", "2.5", "500ms", "2s", "3m", "1h". */
NVT_API int nvt_parse_duration_ns(const char *s, uint64_t *out_ns);
/* Strict unsigned decimal integer within [min, max]. */
NVT_API int nvt_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
