/* Engine registry and the helpers every engine shares. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/engine.h"

static const struct nvt_engine_ops *const engines[] = {&nvt_engine_file, &nvt_engine_null};

const struct nvt_engine_ops *nvt_engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (strcmp(engines[i]->name, name) == 0)
			return engines[i];
	return NULL;
}

const char *nvt_engine_names(void)
{
	return "file, null";
}

int nvt_engine_open(struct nvt_engine *e, const char *name, const struct nvt_engine_params *p,
		    struct nvt_err *err)
{
	const struct nvt_engine_ops *ops = nvt_engine_find(name);

	memset(e, 0, sizeof(*e));
	if (!ops) {
		nvt_err_set(err, EINVAL, "unknown engine \"%s\" (engines: %s)", name,
			    nvt_engine_names());
		return -EINVAL;
	}
	e->ops = ops;
	return ops->open(e, p, err);
}

void nvt_engine_close(struct nvt_engine *e)
{
	if (e->ops)
		e->ops->close(e);
	e->ops = NULL;
}

int nvt_engine_pio(struct nvt_engine *e, enum nvt_io_dir dir, void *buf, uint64_t len,
		   uint64_t offset, struct nvt_err *err)
{
	struct nvt_io io = {.dir = dir, .buf = buf, .len = len, .offset = offset, .buf_index = -1,
			    .tag = UINT64_MAX - 1};
	struct nvt_io_done done[8];
	int rc;

	if (e->inflight) {
		nvt_err_set(err, EBUSY, "internal: synchronous I/O with %u I/Os in flight",
			    e->inflight);
		return -EBUSY;
	}
	rc = e->ops->queue(e, &io);
	if (!rc)
		rc = e->ops->submit(e);
	while (!rc) {
		int n = e->ops->reap(e, done, 8, 1000000000);
		if (n < 0) {
			rc = n;
			break;
		}
		for (int i = 0; i < n; i++) {
			if (done[i].tag != io.tag)
				continue;
			if (done[i].res == (int64_t)len)
				return 0;
			rc = done[i].res < 0 ? (int)done[i].res : -EIO;
			nvt_err_set(err, -rc, "%s of %llu bytes at offset %llu: %s",
				    dir == NVT_IO_WRITE ? "write" : "read", (unsigned long long)len,
				    (unsigned long long)offset,
				    done[i].res < 0 ? strerror((int)-done[i].res) : "short transfer");
			return rc;
		}
	}
	nvt_err_set(err, -rc, "%s at offset %llu: %s", dir == NVT_IO_WRITE ? "write" : "read",
		    (unsigned long long)offset, strerror(-rc));
	return rc;
}
