/* SPDX-License-Identifier: MIT */
/* speedtest: the seeds' dd scripts done right. Every target gets its own thread; all write the
 * test pattern at once (unthrottled record), then all read it back at once through verify, so
 * every byte is checked; per target and aggregate rates, and the PCIe link of the NVMe
 * controllers behind each target from sysfs. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/exit_compat.h"
#include "nvtape/record.h"
#include "nvtape/speedtest.h"
#include "nvtape/verify.h"
#include "util/sysutil.h"

static void read_attr(const char *dir, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX + 64];
	FILE *f;
	size_t n = 0;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
}

static void add_ctrl(const char *ctrl, struct nvt_link *links, unsigned max, unsigned *n)
{
	char dir[64], pci[80], v[64];
	struct nvt_link *l;

	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(links[i].ctrl, ctrl))
			return;
	if (*n >= max)
		return;
	l = &links[(*n)++];
	memset(l, 0, sizeof(*l));
	snprintf(l->ctrl, sizeof(l->ctrl), "%.31s", ctrl);
	snprintf(dir, sizeof(dir), "/sys/class/nvme/%s", ctrl);
	read_attr(dir, "model", l->model, sizeof(l->model));
	snprintf(pci, sizeof(pci), "%s/device", dir);
	read_attr(pci, "current_link_speed", l->cur_speed, sizeof(l->cur_speed));
	read_attr(pci, "max_link_speed", l->max_speed, sizeof(l->max_speed));
	read_attr(pci, "current_link_width", v, sizeof(v));
	l->cur_width = (unsigned)strtoul(v, NULL, 10);
	read_attr(pci, "max_link_width", v, sizeof(v));
	l->max_width = (unsigned)strtoul(v, NULL, 10);
}

/* A block device by kernel name: an NVMe namespace (or a partition of one), or something with
 * slaves (md, dm) to follow. */
static void walk_block(const char *name, struct nvt_link *links, unsigned max, unsigned *n,
		       int depth)
{
	char dir[PATH_MAX + 32], real[PATH_MAX], parent[NAME_MAX + 1];
	unsigned c, ns;
	DIR *d;
	struct dirent *de;

	if (depth > 4)
		return;
	snprintf(dir, sizeof(dir), "/sys/class/block/%s", name);
	if (!realpath(dir, real))
		return;
	snprintf(dir, sizeof(dir), "%s/partition", real);
	if (access(dir, F_OK) == 0) { /* a partition: its disk is the parent directory */
		char *slash = strrchr(real, '/');
		if (slash) {
			*slash = 0;
			snprintf(parent, sizeof(parent), "%.255s",
				 strrchr(real, '/') ? strrchr(real, '/') + 1 : real);
			*slash = '/';
			walk_block(parent, links, max, n, depth + 1);
		}
		return;
	}
	if (sscanf(name, "nvme%un%u", &c, &ns) == 2) {
		char link[PATH_MAX], ctrl[32];
		ssize_t k;
		/* the namespace's controller (multipath: the head's first path) */
		snprintf(dir, sizeof(dir), "/sys/class/block/%s/device", name);
		k = readlink(dir, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = 0;
			snprintf(ctrl, sizeof(ctrl), "%.31s",
				 strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
			if (!strncmp(ctrl, "nvme", 4) && !strchr(ctrl + 4, 'n')) {
				add_ctrl(ctrl, links, max, n);
				return;
			}
		}
		snprintf(ctrl, sizeof(ctrl), "nvme%u", c);
		add_ctrl(ctrl, links, max, n);
		return;
	}
	snprintf(dir, sizeof(dir), "%s/slaves", real);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			walk_block(de->d_name, links, max, n, depth + 1);
	closedir(d);
}

int nvt_links_of(const char *path, struct nvt_link *links, unsigned max, unsigned *n, char *what,
		 size_t what_cap)
{
	struct stat st;
	char sys[96], link[PATH_MAX];
	const char *name;
	dev_t dev;
	ssize_t k;

	*n = 0;
	snprintf(what, what_cap, "unknown");
	if (stat(path, &st)) {
		/* a file about to be created: its directory */
		char dirbuf[PATH_MAX];
		char *slash;
		snprintf(dirbuf, sizeof(dirbuf), "%s", path);
		slash = strrchr(dirbuf, '/');
		if (slash)
			*slash = 0;
		if (stat(slash ? (dirbuf[0] ? dirbuf : "/") : ".", &st))
			return -errno;
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	k = readlink(sys, link, sizeof(link) - 1);
	if (k <= 0) {
		snprintf(what, what_cap, "no block device (%u:%u)", major(dev), minor(dev));
		return 0;
	}
	link[k] = 0;
	name = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(what, what_cap, "%s", name);
	walk_block(name, links, max, n, 0);
	return 0;
}

void nvt_speedtest_opts_default(struct nvt_speedtest_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->write = o->read = true;
	o->size_bytes = 8ull << 30;
	o->chunk_bytes = 8u << 20;
	o->chunks = 32;
	o->qd = 8;
	o->sample_ns = 100000000ull;
}

struct worker {
	const struct nvt_speedtest_opts *o;
	struct nvt_speed_target *t;
	pthread_t th;
	bool joinable;
	uint64_t next_sample, t0;
};

static void on_write_stats(const struct nvt_record_stats *st, void *arg)
{
	struct worker *w = arg;
	nvt_series_add_record(&w->t->wseries, st);
}

static void on_read_progress(uint64_t done, uint64_t total, void *arg)
{
	struct worker *w = arg;
	uint64_t now = nvt_mono_ns();
	struct nvt_sample s = {.t_ns = now - w->t0, .bytes = done};

	if (now < w->next_sample && done < total)
		return;
	w->next_sample = now + w->o->sample_ns;
	if (nvt_series_add(&w->t->rseries, &s)) {
		/* out of memory: a shorter series */
	}
}

static void on_event(const struct nvt_check_event *ev, void *arg)
{
	struct worker *w = arg;
	if (!w->t->first_bad_offset || ev->offset < w->t->first_bad_offset)
		w->t->first_bad_offset = ev->offset;
}

static void notice(const char *msg, void *arg)
{
	struct worker *w = arg;
	if (w->o->notice)
		w->o->notice(msg, w->o->arg);
}

static void *write_thread(void *arg)
{
	struct worker *w = arg;
	struct nvt_record_opts ro;
	struct nvt_record_result *r = calloc(1, sizeof(*r));

	if (!r) {
		w->t->write_exit = NVT_EXIT_RUNTIME;
		snprintf(w->t->error, sizeof(w->t->error), "out of memory");
		return NULL;
	}
	nvt_record_opts_init(&ro);
	ro.path = w->t->path;
	ro.engine = w->o->engine ? w->o->engine : "file";
	ro.size_bytes = w->o->size_bytes;
	ro.chunk_bytes = w->o->chunk_bytes;
	ro.chunks = w->o->chunks;
	ro.qd = w->o->qd;
	ro.force = w->o->force;
	ro.stats_ns = w->o->sample_ns;
	ro.progress = on_write_stats;
	ro.notice = notice;
	ro.interrupt = w->o->interrupt;
	ro.arg = w;
	nvt_series_add(&w->t->wseries, &(struct nvt_sample){0});
	w->t->t_start_ns = nvt_mono_ns();
	w->t->write_exit = nvt_record(&ro, r);
	w->t->t_end_ns = nvt_mono_ns();
	w->t->write_bytes = r->st.bytes_written;
	w->t->write_s = r->seconds;
	w->t->write_mbps = r->seconds > 0 ? r->st.bytes_written / r->seconds / 1e6 : 0;
	w->t->write_cpu_s = r->io_cpu_ns / 1e9;
	if (r->err.code)
		snprintf(w->t->error, sizeof(w->t->error), "write: %.500s", r->err.msg);
	free(r);
	return NULL;
}

static void *read_thread(void *arg)
{
	struct worker *w = arg;
	struct nvt_verify_opts vo;
	struct nvt_verify_result *r = calloc(1, sizeof(*r));

	if (!r) {
		w->t->read_exit = NVT_EXIT_RUNTIME;
		snprintf(w->t->error, sizeof(w->t->error), "out of memory");
		return NULL;
	}
	nvt_verify_opts_default(&vo);
	vo.path = w->t->path;
	vo.engine = w->o->engine;
	vo.chunk_bytes = w->o->chunk_bytes;
	vo.qd = w->o->qd;
	if (vo.qd * 2 > vo.chunks)
		vo.chunks = vo.qd * 2;
	vo.progress = on_read_progress;
	vo.on_event = on_event;
	vo.notice = notice;
	vo.arg = w;
	nvt_series_add(&w->t->rseries, &(struct nvt_sample){0});
	w->t->t_start_ns = w->t0 = nvt_mono_ns();
	w->next_sample = w->t0 + w->o->sample_ns;
	w->t->read_exit = nvt_verify(&vo, r);
	w->t->t_end_ns = nvt_mono_ns();
	w->t->read_bytes = r->checked_bytes;
	w->t->read_s = r->seconds;
	w->t->read_mbps = r->seconds > 0 ? r->checked_bytes / r->seconds / 1e6 : 0;
	w->t->read_cpu_s = r->cpu_ns / 1e9;
	w->t->corrupt = r->chk.corrupt;
	w->t->gaps = r->chk.gaps;
	w->t->backward = r->chk.backward;
	if (r->err.code)
		snprintf(w->t->error, sizeof(w->t->error), "read: %.500s", r->err.msg);
	else if (w->t->read_exit == NVT_EXIT_DATA && !r->pattern_checked)
		snprintf(w->t->error, sizeof(w->t->error),
			 "read: %s holds no test pattern to check (run speedtest --write first)",
			 w->t->path);
	free(r);
	return NULL;
}

/* Run fn for every target at once; the aggregate is all bytes over first start to last end. */
static double run_phase(struct worker *w, unsigned n, void *(*fn)(void *), bool writing)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, bytes = 0;

	for (unsigned i = 0; i < n; i++) {
		w[i].joinable = pthread_create(&w[i].th, NULL, fn, &w[i]) == 0;
		if (!w[i].joinable)
			fn(&w[i]); /* no thread: run it here (then not concurrently) */
	}
	for (unsigned i = 0; i < n; i++) {
		if (w[i].joinable)
			pthread_join(w[i].th, NULL);
		if (w[i].t->t_start_ns < t0)
			t0 = w[i].t->t_start_ns;
		if (w[i].t->t_end_ns > t1)
			t1 = w[i].t->t_end_ns;
		bytes += writing ? w[i].t->write_bytes : w[i].t->read_bytes;
	}
	return t1 > t0 ? bytes / ((t1 - t0) / 1e9) / 1e6 : 0;
}

int nvt_speedtest(const struct nvt_speedtest_opts *o, struct nvt_speedtest_result *res)
{
	struct worker w[NVT_SPEED_MAX_TARGETS];
	int rc = NVT_EXIT_OK;

	memset(res, 0, sizeof(*res));
	memset(w, 0, sizeof(w));
	if (!o->ntargets || o->ntargets > NVT_SPEED_MAX_TARGETS || (!o->write && !o->read))
		return NVT_EXIT_USAGE;
	res->n = o->ntargets;
	for (unsigned i = 0; i < o->ntargets; i++) {
		struct nvt_speed_target *t = &res->t[i];
		t->path = o->target[i];
		t->write_exit = t->read_exit = -1;
		nvt_links_of(t->path, t->link, NVT_LINK_MAX, &t->nlinks, t->on, sizeof(t->on));
		w[i].o = o;
		w[i].t = t;
	}
	if (o->write)
		res->agg_write_mbps = run_phase(w, o->ntargets, write_thread, true);
	for (unsigned i = 0; i < o->ntargets; i++)
		if (res->t[i].write_exit > 0 && res->t[i].write_exit != NVT_EXIT_DATA)
			rc = NVT_EXIT_RUNTIME;
	res->interrupted = o->interrupt && *o->interrupt;
	if (o->read && rc == NVT_EXIT_OK && !res->interrupted) {
		res->agg_read_mbps = run_phase(w, o->ntargets, read_thread, false);
	}
	for (unsigned i = 0; i < o->ntargets; i++) {
		const struct nvt_speed_target *t = &res->t[i];
		if (t->read_exit == NVT_EXIT_RUNTIME || t->read_exit == NVT_EXIT_USAGE)
			rc = NVT_EXIT_RUNTIME;
		else if ((t->read_exit == NVT_EXIT_DATA || t->write_exit == NVT_EXIT_DATA) &&
			 rc == NVT_EXIT_OK)
			rc = NVT_EXIT_DATA;
	}
	return rc;
}

void nvt_speedtest_result_free(struct nvt_speedtest_result *res)
{
	for (unsigned i = 0; i < res->n; i++) {
		nvt_series_free(&res->t[i].wseries);
		nvt_series_free(&res->t[i].rseries);
	}
}
