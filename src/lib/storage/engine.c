/* SPDX-License-Identifier: MIT */
/* Engine registry and the helpers every engine shares. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include "storage/engine.h"
#include "nvtape/layout.h"

/* The registry: one line per engine (its ops table lives in its own file). */
extern const struct nvt_engine_ops nvt_engine_file, nvt_engine_null, nvt_engine_stripe,
	nvt_engine_nvme;
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

const struct nvt_engine_ops *nvt_engine_at(unsigned i)
{
	return i < sizeof(engines) / sizeof(engines[0]) ? engines[i] : NULL;
}

static void info_of(const struct nvt_engine_ops *e, struct nvt_engine_info *out)
{
	out->name = e->name;
	out->help = e->help;
	out->caps = e->caps;
	out->max_qd = e->max_qd;
	out->default_qd = e->default_qd;
}

int nvt_engine_info_at(unsigned i, struct nvt_engine_info *out)
{
	const struct nvt_engine_ops *e = nvt_engine_at(i);

	if (!e)
		return -ENOENT;
	info_of(e, out);
	return 0;
}

int nvt_engine_info_find(const char *name, struct nvt_engine_info *out)
{
	const struct nvt_engine_ops *e = name ? nvt_engine_find(name) : NULL;

	if (!e)
		return -ENOENT;
	info_of(e, out);
	return 0;
}

const char *nvt_engine_names(void)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = 0;
	for (unsigned i = 0; nvt_engine_at(i) && len < sizeof(buf); i++)
		if (!(engines[i]->caps & NVT_ENGINE_INTERNAL))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						len ? ", " : "", engines[i]->name);
	return buf;
}

const char *nvt_engine_fixed_bufs_note(const struct nvt_engine *e, uint64_t ring_bytes, char *buf,
				       size_t cap)
{
	struct rlimit rl;
	char lim[48] = "unknown";

	if (!e->ops || !(e->ops->caps & NVT_ENGINE_FIXED_BUFS) || e->fixed_bufs)
		return NULL;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(lim, sizeof(lim), "unlimited");
		else
			snprintf(lim, sizeof(lim), "%llu KiB",
				 (unsigned long long)rl.rlim_cur >> 10);
	}
	snprintf(buf, cap,
		 "fixed buffers are off: io_uring could not register the %llu MiB ring as fixed "
		 "buffers (locked-memory limit %s), so every I/O pins its pages at a CPU cost; "
		 "raise the limit (ulimit -l unlimited, or a memlock line in "
		 "/etc/security/limits.conf) or give the process CAP_IPC_LOCK (root has it)",
		 (unsigned long long)(ring_bytes >> 20), lim);
	return buf;
}

int nvt_engine_open(struct nvt_engine *e, const char *name, const struct nvt_engine_params *p,
		    struct nvt_err *err)
{
	const struct nvt_engine_ops *ops = nvt_engine_find(name);
	int rc;

	memset(e, 0, sizeof(*e));
	if (!ops) {
		nvt_err_param(err, "unknown engine \"%s\" (engines: %s)", name, nvt_engine_names());
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

int nvt_lock_output(int fd, const char *path, struct nvt_err *err)
{
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int rc = errno;
		if (rc == EWOULDBLOCK)
			nvt_err_set(err, EBUSY,
				    "%s is being written by another recording (it holds the file's "
				    "lock): nothing was changed",
				    path);
		else
			nvt_err_set(err, rc, "cannot lock %s: %s", path, strerror(rc));
		return -(rc == EWOULDBLOCK ? EBUSY : rc);
	}
	if (ftruncate(fd, 0)) {
		int rc = errno;
		nvt_err_set(err, rc, "cannot truncate %s: %s", path, strerror(rc));
		return -rc;
	}
	return 0;
}

void nvt_err_open(struct nvt_err *err, int rc, const char *path, bool blockdev, bool write,
		  const char *how)
{
	if (rc == EBUSY && blockdev)
		nvt_err_set(
			err, rc,
			"%s is in use (a filesystem on it or on one of its partitions is mounted, "
			"or md, device-mapper or another program holds it): nothing was written",
			path);
	else
		nvt_err_set(err, rc, "cannot open %s%s%s: %s", path, write ? " for writing" : "",
			    how, strerror(rc));
}

void nvt_engine_stuck(struct nvt_engine *e, char *buf, size_t cap)
{
	char who[224] = "";

	if (e->ops && e->ops->stuck)
		e->ops->stuck(e, who, sizeof(who));
	snprintf(buf, cap, "%s%s", who[0] ? "; waiting on " : "", who);
}
