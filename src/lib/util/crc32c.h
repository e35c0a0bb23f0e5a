/* SPDX-License-Identifier: MIT */
/* CRC32C beyond nvt_crc32c() (nvtape/format.h): combining, the table version, which one runs. */
#ifndef NVT_UTIL_CRC32C_H
#define NVT_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC32C of A followed by B, from the CRC32C of A, that of B and B's length. */
uint32_t nvt_crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);
/* nvt_crc32c() with the tables, whatever the CPU has (for tests and measurements). */
uint32_t nvt_crc32c_soft(uint32_t crc, const void *buf, size_t len);
/* "sse4.2", "armv8-crc" or "table": what nvt_crc32c() runs on. */
const char *nvt_crc32c_impl(void);

#endif
