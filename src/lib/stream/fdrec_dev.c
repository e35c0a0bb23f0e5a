/* SPDX-License-Identifier: MIT */
/* Opening the FPGA Drive Recorder's device (fdrec_dev.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "stream/fdrec_dev.h"

int nvt_fdrec_open(const char *path, struct nvt_err *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), e = errno;

	if (fd >= 0)
		return fd;
	if (e == EBUSY)
		nvt_err_set(err, e,
			    "fdrec %s is in use: the driver takes one opener at a time; stop the "
			    "other recorder or player first",
			    path);
	else
		nvt_err_set(err, e, "cannot open fdrec %s: %s (is the driver loaded?)", path,
			    strerror(e));
	return -e;
}
