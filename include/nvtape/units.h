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
/* Seconds: "10", "2.5", "500ms", "2s", "3m", "1h". */
NVT_API int nvt_parse_duration_ns(const char *s, uint64_t *out_ns);
/* Strict unsigned decimal integer within [min, max]. */
NVT_API int nvt_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
