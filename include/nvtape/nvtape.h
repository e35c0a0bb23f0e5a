/* SPDX-License-Identifier: MIT */
/* libnvtape: version, the export marker and the error carrier used by every call. Library calls
 * return 0 or -errno and leave a message in struct nvt_err; they never exit and know nothing of
 * command-line flags or exit codes. */
#ifndef NVTAPE_NVTAPE_H
#define NVTAPE_NVTAPE_H

#include <stdarg.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(NVT_STATIC_ONLY)
#define NVT_API __attribute__((visibility("default")))
#else
#define NVT_API
#endif

/* C++ spells C11's _Static_assert (used by the on-disk layouts in format.h) static_assert. */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#ifndef NVT_VERSION
#define NVT_VERSION "0.1.0"
#endif

/* nvt_err.flags */
#define NVT_ERR_PARAM (1u << 0) /* the caller's options or arguments were refused */

/* nvt_err.hint: which of the caller's settings gets past the error; a program names its own
 * option for it (the nvtape CLI appends its flag) */
enum nvt_err_hint {
	NVT_HINT_NONE = 0,
	NVT_HINT_FORCE,        /* the target carries data: the force option overwrites it */
	NVT_HINT_LESS_DATA,    /* the requested size does not fit: record less */
	NVT_HINT_SMALLER_RING, /* the ring cannot be allocated: fewer or smaller chunks */
	NVT_HINT_LAYOUT,       /* a striped recording: hint_val = members, stripe, offset */
	NVT_HINT_OTHER_SINK,   /* the sink cannot take this recording: choose another */
	NVT_HINT_GIVE_SIZE,    /* the length must be known up front: a size, or duration and rate */
};

/* A failed call leaves its reason here: errno-style code plus a message that names the fix. */
struct nvt_err {
	int code; /* positive errno, 0 = no error */
	unsigned flags;
	unsigned hint;        /* enum nvt_err_hint */
	uint64_t hint_val[3]; /* NVT_HINT_LAYOUT: members, stripe bytes, member offset */
	char msg[512];
};

NVT_API void nvt_err_set(struct nvt_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, marking the error as a refused option or argument (NVT_ERR_PARAM). */
NVT_API void nvt_err_param(struct nvt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
NVT_API void nvt_err_clear(struct nvt_err *err);
/* Attach a hint to the error just set (the first error's hint stays). */
NVT_API void nvt_err_set_hint(struct nvt_err *err, unsigned hint, uint64_t a, uint64_t b,
			      uint64_t c);
/* The library's version ("0.1.0"). */
NVT_API const char *nvt_version(void);

#ifdef __cplusplus
}
#endif

#endif
