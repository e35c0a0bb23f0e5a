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

void nvt_err_set_hint(struct nvt_err *err, unsigned hint, uint64_t a, uint64_t b, uint64_t c)
{
	if (!err || err->hint)
		return;
	err->hint = hint;
	err->hint_val[0] = a;
	err->hint_val[1] = b;
	err->hint_val[2] = c;
}
