/* SPDX-License-Identifier: MIT */
/* The library's one reader of /sys: attributes by path or relative to a block device, symlink
 * names, the block device under a path, and the walk from a block device down to the NVMe
 * controllers behind it (partitions to their disk, md and dm to their slaves). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/sysfs.h"

static char sys_root[PATH_MAX] = "/sys";

void nvt_sysfs_set_root(const char *root)
{
	snprintf(sys_root, sizeof(sys_root), "%s", root ? root : "/sys");
}

/* /sys/ + the formatted relative path; -ENAMETOOLONG when it does not fit. */
static int sys_path(char *out, size_t cap, const char *fmt, va_list ap)
{
	char rel[PATH_MAX];
	int n = vsnprintf(rel, sizeof(rel), fmt, ap);

	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	n = snprintf(out, cap, "%s/%s", sys_root, rel);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int read_text(const char *path, char *buf, size_t cap)
{
	FILE *f;
	size_t n;

	buf[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || end == s || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	*v = x;
	return 0;
}

int nvt_sysfs_str(char *buf, size_t cap, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int rc;

	buf[0] = 0;
	va_start(ap, fmt);
	rc = sys_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	return rc ? rc : read_text(path, buf, cap);
}

int nvt_sysfs_u64(uint64_t *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sys_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (!rc)
		rc = read_text(path, buf, sizeof(buf));
	return rc ? rc : parse_u64(buf, v);
}

int nvt_sysfs_blk_str(const char *name, const char *attr, char *buf, size_t cap)
{
	return nvt_sysfs_str(buf, cap, "class/block/%s/%s", name, attr);
}

int nvt_sysfs_blk_u64(const char *name, const char *attr, uint64_t *v)
{
	return nvt_sysfs_u64(v, "class/block/%s/%s", name, attr);
}

static void last_component(char *buf, size_t cap, const char *path)
{
	const char *slash = strrchr(path, '/');
	snprintf(buf, cap, "%s", slash ? slash + 1 : path);
}

int nvt_sysfs_link_name(char *buf, size_t cap, const char *fmt, ...)
{
	char path[PATH_MAX], link[PATH_MAX];
	va_list ap;
	ssize_t k;
	int rc;

	buf[0] = 0;
	va_start(ap, fmt);
	rc = sys_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (rc)
		return rc;
	k = readlink(path, link, sizeof(link) - 1);
	if (k <= 0)
		return k < 0 ? -errno : -ENOENT;
	link[k] = 0;
	last_component(buf, cap, link);
	return 0;
}

int nvt_sysfs_blk_name(unsigned maj, unsigned min, char *buf, size_t cap)
{
	return nvt_sysfs_link_name(buf, cap, "dev/block/%u:%u", maj, min);
}

int nvt_sysfs_blk_of_path(const char *path, unsigned *maj, unsigned *min, char *name, size_t cap)
{
	struct stat st;
	dev_t dev;

	name[0] = 0;
	if (stat(path, &st)) {
		/* a file about to be created: its directory */
		char dir[PATH_MAX];
		char *slash;
		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		if (stat(slash ? (dir[0] ? dir : "/") : ".", &st))
			return -errno;
	}
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	*maj = major(dev);
	*min = minor(dev);
	return nvt_sysfs_blk_name(*maj, *min, name, cap) ? -ENODEV : 0;
}

int nvt_sysfs_blk_each(const char *name, const char *sub, void (*fn)(const char *entry, void *arg),
		       void *arg)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (snprintf(dir, sizeof(dir), "%s/class/block/%s/%s", sys_root, name, sub) >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		fn(de->d_name, arg);
		n++;
	}
	closedir(d);
	return n;
}

bool nvt_sysfs_blk_disk(const char *name, char *buf, size_t cap)
{
	char dir[PATH_MAX], real[PATH_MAX], *slash;

	if (snprintf(dir, sizeof(dir), "%s/class/block/%s", sys_root, name) >= (int)sizeof(dir) ||
	    !realpath(dir, real))
		return false;
	if (snprintf(dir, sizeof(dir), "%s/partition", real) >= (int)sizeof(dir) ||
	    access(dir, F_OK))
		return false;
	slash = strrchr(real, '/'); /* a partition's disk is its parent directory */
	if (!slash)
		return false;
	*slash = 0;
	last_component(buf, cap, real);
	return true;
}

struct ctrl_walk {
	char (*ctrl)[NVT_SYSFS_NAME];
	unsigned max, n;
	int depth;
};

static void add_ctrl(struct ctrl_walk *w, const char *ctrl)
{
	for (unsigned i = 0; i < w->n; i++)
		if (!strcmp(w->ctrl[i], ctrl))
			return;
	if (w->n < w->max)
		snprintf(w->ctrl[w->n++], NVT_SYSFS_NAME, "%s", ctrl);
}

/* A namespace's controller: its device link (multipath: the head's first path), else the
 * controller number in its name. */
static void namespace_ctrl(struct ctrl_walk *w, const char *name, unsigned c)
{
	char ctrl[NVT_SYSFS_NAME];

	if (!nvt_sysfs_link_name(ctrl, sizeof(ctrl), "class/block/%s/device", name) &&
	    !strncmp(ctrl, "nvme", 4) && !strchr(ctrl + 4, 'n')) {
		add_ctrl(w, ctrl);
		return;
	}
	snprintf(ctrl, sizeof(ctrl), "nvme%u", c);
	add_ctrl(w, ctrl);
}

static void walk_block(const char *name, void *arg);

static void walk_block(const char *name, void *arg)
{
	struct ctrl_walk *w = arg;
	char disk[NVT_SYSFS_NAME];
	unsigned c, ns;

	if (w->depth > 4)
		return;
	w->depth++;
	if (nvt_sysfs_blk_disk(name, disk, sizeof(disk)))
		walk_block(disk, w);
	else if (sscanf(name, "nvme%un%u", &c, &ns) == 2)
		namespace_ctrl(w, name, c);
	else if (nvt_sysfs_blk_each(name, "slaves", walk_block, w) < 0) {
		/* no slaves: not a stack over other devices, and not NVMe */
	}
	w->depth--;
}

unsigned nvt_sysfs_nvme_ctrls(const char *name, char (*ctrl)[NVT_SYSFS_NAME], unsigned max)
{
	struct ctrl_walk w = {.ctrl = ctrl, .max = max};

	walk_block(name, &w);
	return w.n;
}
