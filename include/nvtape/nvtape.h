/* libnvtape: umbrella header, version, exit codes and the error carrier used by every call. */
#ifndef NVTAPE_NVTAPE_H
#define NVTAPE_NVTAPE_H

#include <stdarg.h>
#include <stdint.h>

#ifndef NVT_VERSION
#define NVT_VERSION "0.1.0"
#endif

/* Exit codes shared by every subcommand. */
enum nvt_exit {
	NVT_EXIT_OK = 0,      /* clean */
	NVT_EXIT_RUNTIME = 1, /* I/O error, stall, no space, bad file */
	NVT_EXIT_DATA = 2,    /* completed, but drops / gaps / corrupt beats / underflows */
	NVT_EXIT_USAGE = 64,  /* bad command line */
};

/* A failed call leaves its reason here: errno-style code plus a message that names the fix. */
struct nvt_err {
	int code; /* positive errno, 0 = no error */
	char msg[512];
};

void nvt_err_set(struct nvt_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void nvt_err_clear(struct nvt_err *err);

#endif
