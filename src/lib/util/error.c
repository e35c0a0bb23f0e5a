/* SPDX-License-Identifier: MIT */
/* The error carrier: a code and a message that names the problem and its fix. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nvtape/nvtape.h"

void nvt_err_set(struct nvt_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return; /* the first error is the cause; later ones are consequences */
	err->code = code ? code : 1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

void nvt_err_clear(struct nvt_err *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
}

void nvt_err_param(struct nvt_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return;
	err->code = EINVAL;
	err->flags |= NVT_ERR_PARAM;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

const char *nvt_version(void)
{
	return NVT_VERSION;
}
