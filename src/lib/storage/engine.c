/* SPDX-License-Identifier: MIT */
/* Engine registry and the helpers every engine shares. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "storage/engine.h"
#include "nvtape/layout.h"

static const struct nvt_engine_ops *const engines[] = {&nvt_engine_file, &nvt_engine_null,
						       &nvt_engine_stripe, &nvt_engine_nvme};

const struct nvt_engine_ops *nvt_engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i];
	return NULL;
}

const char *nvt_engine_for(const char *name, const struct nvt_layout *l)
{
	if (!name || !strcmp(name, "file"))
		return l && l->n > 1 ? "stripe" : "file";
	return name;
}

const char *nvt_engine_names(void)
{
	return "file, null, stripe, nvme";
}

int nvt_engine_open(struct nvt_engine *e, const char *name, const struct nvt_engine_params *p,
		    struct nvt_err *err)
{
	const struct nvt_engine_ops *ops = nvt_engine_find(name);
	int rc;

	memset(e, 0, sizeof(*e));
	if (!ops) {
		nvt_err_set(err, EINVAL, "unknown engine \"%s\" (engines: %s)", name,
			    nvt_engine_names());
		return -EINVAL;
	}
	e->ops = ops;
	rc = ops->open(e, p, err);
	if (!e->depth)
		e->depth = p->qd;
	if (p->nbufs && e->depth > p->nbufs)
		e->depth = p->nbufs; /* every I/O in flight holds a buffer */
	return rc;
}

void nvt_engine_close(struct nvt_engine *e)
{
	if (e->ops)
		e->ops->close(e);
	e->ops = NULL;
}
