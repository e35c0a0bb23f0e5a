/* SPDX-License-Identifier: MIT */
/* SHA-512 (sha512.c). */
#ifndef NVT_UTIL_SHA512_H
#define NVT_UTIL_SHA512_H

#include <stddef.h>
#include <stdint.h>

struct nvt_sha512 {
	uint64_t h[8];
	uint64_t len; /* bytes so far */
	uint8_t buf[128];
	size_t fill;
};

void nvt_sha512_init(struct nvt_sha512 *s);
void nvt_sha512_update(struct nvt_sha512 *s, const void *data, size_t n);
/* The digest as 128 lowercase hex digits. */
void nvt_sha512_final(struct nvt_sha512 *s, char hex[129]);

#endif
