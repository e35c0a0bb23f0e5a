/* SPDX-License-Identifier: MIT */
/* Exit-code values still returned by the qualification and setup calls while they move to
 * 0 / -errno results; the CLI owns the codes themselves (src/cli/cli.h). */
#ifndef NVT_UTIL_EXIT_COMPAT_H
#define NVT_UTIL_EXIT_COMPAT_H

enum nvt_exit {
	NVT_EXIT_OK = 0,
	NVT_EXIT_RUNTIME = 1,
	NVT_EXIT_DATA = 2,
	NVT_EXIT_USAGE = 64,
};

#endif
