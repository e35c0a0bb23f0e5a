/* SPDX-License-Identifier: MIT */
/* The dev source's loss-counter parser, for the unit tests. */
#ifndef NVT_STREAM_SOURCE_DEV_H
#define NVT_STREAM_SOURCE_DEV_H

#include <stdint.h>

/* "123", " 0x1f\n": a decimal or 0x hexadecimal count, whitespace around it. 0 or -EINVAL
 * (not a number, trailing text) or -ERANGE (more than 2^64 - 1); *v is left alone on error. */
int nvt_dev_parse_counter(const char *s, uint64_t *v);

#endif
