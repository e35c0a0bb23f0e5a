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

/* A failed call leaves its reason here: errno-style code plus a message that names the fix. */
struct nvt_err {
	int code; /* positive errno, 0 = no error */
	unsigned flags;
	char msg[512];
};

NVT_API void nvt_err_set(struct nvt_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, marking the error as a refused option or argument (NVT_ERR_PARAM). */
NVT_API void nvt_err_param(struct nvt_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
NVT_API void nvt_err_clear(struct nvt_err *err);
/* The library's version ("0.1.0"). */
NVT_API const char *nvt_version(void);

#ifdef __cplusplus
}
#endif

#endif
