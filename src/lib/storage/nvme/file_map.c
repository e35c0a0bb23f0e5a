/* SPDX-License-Identifier: MIT */
/* Resolving what the nvme engine writes to: NVMe namespaces named directly, or the extents of a
 * file mapped through its volume (partition offsets, md RAID0 geometry and data offsets from
 * sysfs) down to namespace bytes. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "storage/nvme/file_map.h"
#include "sys/sysfs.h"

/* A namespace or a partition of one, by kernel name (nvme0n1, nvme0n1p2, ng0n1). */
static int resolve_nvme(const char *name, struct nvt_nvme_member *m, struct nvt_err *err)
{
	unsigned part;
	int used = 0;
	uint64_t start;

	if ((sscanf(name, "nvme%un%u%n", &m->ctrl, &m->ns, &used) != 2 &&
	     sscanf(name, "ng%un%u%n", &m->ctrl, &m->ns, &used) != 2)) {
		nvt_err_set(err, EINVAL, "%s is not an NVMe namespace", name);
		return -EINVAL;
	}
	if (name[used] == 0)
		return 0;
	if (sscanf(name + used, "p%u", &part) != 1 || name[0] != 'n') {
		nvt_err_set(err, EINVAL, "%s is not an NVMe namespace or a partition of one", name);
		return -EINVAL;
	}
	if (nvt_sysfs_blk_u64(name, "start", &start)) {
		nvt_err_set(err, ENOENT,
			    "%s: cannot read the partition start (/sys/class/block/%s/start)", name,
			    name);
		return -ENOENT;
	}
	m->base += start * 512;
	return 0;
}

int nvt_nvme_target_raw(const struct nvt_layout *l, struct nvt_nvme_target *t, struct nvt_err *err)
{
	memset(t, 0, sizeof(*t));
	t->n = l->n;
	t->stripe = l->stripe;
	for (unsigned i = 0; i < l->n; i++) {
		const char *p = l->path[i];
		const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		struct nvt_err e2 = {0};
		t->m[i].base = l->member_offset;
		if (strncmp(p, "/dev/", 5) || resolve_nvme(base, &t->m[i], &e2)) {
			nvt_err_set(err, EINVAL,
				    "%s: the nvme engine drives NVMe namespaces (/dev/nvmeXnY, "
				    "/dev/ngXnY, a partition /dev/nvmeXnYpZ) or a file on a volume "
				    "made of them",
				    p);
			return -EINVAL;
		}
	}
	return 0;
}

/* md RAID0 over namespaces or their partitions, from /sys/block/mdN/md. */
static int resolve_md(const char *md, struct nvt_nvme_target *t, struct nvt_err *err)
{
	char buf[128] = "";
	uint64_t disks, chunk, size0 = 0;

	if (nvt_sysfs_str(buf, sizeof(buf), "block/%s/md/level", md) || strcmp(buf, "raid0")) {
		nvt_err_set(
			err, EINVAL,
			"%s is an md array of level %s: the nvme engine writes through md RAID0 "
			"only",
			md, buf[0] ? buf : "unknown");
		return -EINVAL;
	}
	if (nvt_sysfs_u64(&disks, "block/%s/md/raid_disks", md) || disks < 1 ||
	    disks > NVT_MAX_MEMBERS) {
		nvt_err_set(err, EINVAL, "%s: cannot read its member count (1 to %u supported)", md,
			    NVT_MAX_MEMBERS);
		return -EINVAL;
	}
	if (nvt_sysfs_u64(&chunk, "block/%s/md/chunk_size", md) || !chunk || chunk % 4096) {
		nvt_err_set(err, EINVAL, "%s: chunk size unreadable or not a multiple of 4 KiB",
			    md);
		return -EINVAL;
	}
	t->n = (unsigned)disks;
	t->stripe = chunk;
	for (unsigned i = 0; i < t->n; i++) {
		char link[256], dev[64];
		uint64_t off, size;
		if (nvt_sysfs_link_name(link, sizeof(link), "block/%s/md/rd%u", md, i) ||
		    strlen(link) <= 4) {
			nvt_err_set(err, ENOENT, "%s: member %u is missing (/sys/block/%s/md/rd%u)",
				    md, i, md, i);
			return -ENOENT;
		}
		snprintf(dev, sizeof(dev), "%.40s", link + 4); /* "dev-nvme0n1" */
		if (nvt_sysfs_u64(&off, "block/%s/md/dev-%s/offset", md, dev))
			return nvt_err_set(err, ENOENT,
					   "%s: cannot read /sys/block/%s/md/dev-%s/offset", md, md,
					   dev),
			       -ENOENT;
		if (nvt_sysfs_u64(&size, "block/%s/md/dev-%s/size", md, dev))
			return nvt_err_set(err, ENOENT,
					   "%s: cannot read /sys/block/%s/md/dev-%s/size", md, md,
					   dev),
			       -ENOENT;
		size = size * 1024 / chunk; /* whole chunks: md's zones */
		if (i == 0)
			size0 = size;
		if (size != size0) {
			nvt_err_set(
				err, EINVAL,
				"%s: members of different sizes make a multi-zone RAID0; nvtape "
				"maps single-zone arrays only (equal members)",
				md);
			return -EINVAL;
		}
		t->m[i].base = off * 512;
		if (resolve_nvme(dev, &t->m[i], &(struct nvt_err){0})) {
			nvt_err_set(err, EINVAL,
				    "%s: member %s is not an NVMe namespace or a "
				    "partition of one: the nvme engine cannot reach it",
				    md, dev);
			return -EINVAL;
		}
	}
	snprintf(t->volume, sizeof(t->volume), "%s (md RAID0 over %u, %llu KiB chunks)", md, t->n,
		 (unsigned long long)(chunk >> 10));
	return 0;
}

int nvt_nvme_target_volume(int fd, const char *path, struct nvt_nvme_target *t, struct nvt_err *err)
{
	struct stat st;
	char name[32];

	memset(t, 0, sizeof(*t));
	t->file = true;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		nvt_err_set(err, EINVAL, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (nvt_sysfs_blk_name(major(st.st_dev), minor(st.st_dev), name, sizeof(name))) {
		nvt_err_set(err, ENODEV,
			    "%s is not on a block device (/sys/dev/block/%u:%u missing): the nvme "
			    "engine writes files on NVMe volumes only",
			    path, major(st.st_dev), minor(st.st_dev));
		return -ENODEV;
	}
	if (!strncmp(name, "md", 2))
		return resolve_md(name, t, err);
	t->n = 1;
	if (resolve_nvme(name, &t->m[0], &(struct nvt_err){0})) {
		nvt_err_set(
			err, EINVAL,
			"%s is on %s, which is not an NVMe namespace, a partition of one or an "
			"md RAID0 array over them: the nvme engine cannot reach its blocks (the "
			"file engine can)",
			path, name);
		return -EINVAL;
	}
	snprintf(t->volume, sizeof(t->volume), "%s", name);
	return 0;
}

static int add_extent(struct nvt_extent **v, size_t *n, size_t *cap, uint64_t logical,
		      uint64_t physical, uint64_t len)
{
	if (*n && (*v)[*n - 1].logical + (*v)[*n - 1].len == logical &&
	    (physical == UINT64_MAX ? (*v)[*n - 1].physical == UINT64_MAX
				    : (*v)[*n - 1].physical + (*v)[*n - 1].len == physical)) {
		(*v)[*n - 1].len += len;
		return 0;
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct nvt_extent *g = realloc(*v, c * sizeof(**v));
		if (!g)
			return -ENOMEM;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = (struct nvt_extent){logical, physical, len};
	return 0;
}

#define FIEMAP_BAD                                                                                 \
	(FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED |                  \
	 FIEMAP_EXTENT_DATA_ENCRYPTED | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE |    \
	 FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_SHARED)

static const char *fiemap_bad_name(uint32_t f)
{
	return (f & FIEMAP_EXTENT_SHARED)           ? "shared with another file (reflink)"
	       : (f & FIEMAP_EXTENT_DATA_INLINE)    ? "stored inline in metadata"
	       : (f & FIEMAP_EXTENT_ENCODED)        ? "compressed or encoded"
	       : (f & FIEMAP_EXTENT_DATA_ENCRYPTED) ? "encrypted"
	       : (f & FIEMAP_EXTENT_DELALLOC)       ? "not yet allocated"
						    : "of unknown or unaligned placement";
}

/* Extents of [0, size) as (logical, physical or UINT64_MAX for a hole/unwritten, len). */
static int map_fiemap(int fd, const char *path, uint64_t size, struct nvt_extent **v, size_t *n,
		      struct nvt_err *err)
{
	enum { PER_CALL = 256 };
	struct fiemap *fm = calloc(1, sizeof(*fm) + PER_CALL * sizeof(struct fiemap_extent));
	uint64_t pos = 0;
	size_t cap = 0;
	int rc = 0;

	if (!fm)
		return -ENOMEM;
	while (pos < size && !rc) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = pos;
		fm->fm_length = size - pos;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = PER_CALL;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			rc = -errno;
			break;
		}
		if (!fm->fm_mapped_extents) {
			rc = add_extent(v, n, &cap, pos, UINT64_MAX, size - pos);
			pos = size;
			break;
		}
		for (unsigned i = 0; i < fm->fm_mapped_extents && !rc && pos < size; i++) {
			const struct fiemap_extent *fe = &fm->fm_extents[i];
			uint64_t lo = fe->fe_logical, hi = fe->fe_logical + fe->fe_length;
			if (hi > size)
				hi = size;
			if (lo > pos)
				rc = add_extent(v, n, &cap, pos, UINT64_MAX, lo - pos);
			if (lo < pos) { /* overlapping report: skip what is mapped already */
				if (hi <= pos)
					continue;
				lo = pos;
			}
			if (!rc && (fe->fe_flags & FIEMAP_BAD)) {
				nvt_err_set(
					err, EINVAL,
					"%s: the extent at file offset %llu is %s: nvtape cannot "
					"write it underneath the filesystem (copy the file without "
					"reflinks, or let nvtape create it)",
					path, (unsigned long long)lo,
					fiemap_bad_name(fe->fe_flags));
				rc = -EINVAL;
				break;
			}
			if (!rc)
				rc = add_extent(v, n, &cap, lo,
						(fe->fe_flags & FIEMAP_EXTENT_UNWRITTEN)
							? UINT64_MAX
							: fe->fe_physical + (lo - fe->fe_logical),
						hi - lo);
			pos = hi;
			if (fe->fe_flags & FIEMAP_EXTENT_LAST && pos < size) {
				rc = add_extent(v, n, &cap, pos, UINT64_MAX, size - pos);
				pos = size;
			}
		}
	}
	free(fm);
	return rc;
}

/* Filesystems without FIEMAP (exFAT): FIBMAP, one cluster at a time. */
static int map_fibmap(int fd, const char *path, uint64_t size, struct nvt_extent **v, size_t *n,
		      struct nvt_err *err)
{
	struct statfs sfs;
	int bsz = 0;
	uint64_t step;
	size_t cap = 0;

	if (ioctl(fd, FIGETBSZ, &bsz) || bsz <= 0 || fstatfs(fd, &sfs)) {
		nvt_err_set(err, errno, "%s: the filesystem maps no blocks (no FIEMAP, no FIBMAP)",
			    path);
		return -EOPNOTSUPP;
	}
	step = (uint64_t)sfs.f_bsize >= (uint64_t)bsz ? (uint64_t)sfs.f_bsize : (uint64_t)bsz;
	for (uint64_t pos = 0; pos < size; pos += step) {
		int blk = (int)(pos / (uint64_t)bsz);
		uint64_t len = size - pos < step ? size - pos : step;
		if (ioctl(fd, FIBMAP, &blk)) {
			nvt_err_set(err, errno, "%s: FIBMAP at %llu: %s", path,
				    (unsigned long long)pos, strerror(errno));
			return -errno;
		}
		if (add_extent(v, n, &cap, pos, blk ? (uint64_t)blk * (uint64_t)bsz : UINT64_MAX,
			       len))
			return -ENOMEM;
	}
	return 0;
}

int nvt_nvme_target_map_file(struct nvt_nvme_target *t, int fd, const char *path, uint64_t size,
			     struct nvt_extent **fill, size_t *nfill, struct nvt_err *err)
{
	struct nvt_extent *v = NULL;
	size_t n = 0, k = 0, fcap = 0;
	int rc = map_fiemap(fd, path, size, &v, &n, err);

	*fill = NULL;
	*nfill = 0;
	if (rc == -EOPNOTSUPP) {
		n = 0;
		rc = map_fibmap(fd, path, size, &v, &n, err);
	} else if (rc && !err->code) {
		nvt_err_set(err, -rc, "%s: FIEMAP: %s", path, strerror(-rc));
	}
	for (size_t i = 0; !rc && i < n; i++) {
		if (v[i].physical == UINT64_MAX) {
			if (add_extent(fill, nfill, &fcap, v[i].logical, 0, v[i].len))
				rc = -ENOMEM;
			continue;
		}
		if (v[i].physical % 4096 || v[i].logical % 4096) {
			nvt_err_set(err, EINVAL,
				    "%s: the extent at file offset %llu lies at volume byte %llu, "
				    "not 4 KiB aligned: nvtape cannot address it with whole blocks",
				    path, (unsigned long long)v[i].logical,
				    (unsigned long long)v[i].physical);
			rc = -EINVAL;
		}
		v[k++] = v[i];
	}
	if (rc) {
		free(v);
		free(*fill);
		*fill = NULL;
		*nfill = 0;
		return rc;
	}
	free(t->ext);
	t->ext = v;
	t->next = k;
	t->mapped = *nfill ? 0 : size;
	return 0;
}

unsigned nvt_nvme_target_map(const struct nvt_nvme_target *t, uint64_t x, uint64_t *ns_off,
			     uint64_t *run)
{
	uint64_t v = x, r1 = UINT64_MAX - x, moff, r2;
	unsigned m = 0;

	if (t->file) {
		size_t lo = 0, hi = t->next;
		if (x >= t->mapped) {
			*run = 0;
			return 0;
		}
		while (lo < hi) { /* last extent with logical <= x */
			size_t mid = (lo + hi) / 2;
			if (t->ext[mid].logical <= x)
				lo = mid + 1;
			else
				hi = mid;
		}
		const struct nvt_extent *e = lo ? &t->ext[lo - 1] : NULL;
		if (!e || x >= e->logical + e->len) {
			*run = 0;
			return 0;
		}
		v = e->physical + (x - e->logical);
		r1 = e->logical + e->len - x;
	}
	if (t->n > 1) {
		struct nvt_layout l = {.n = t->n, .stripe = t->stripe};
		m = nvt_layout_map(&l, v, &moff, &r2);
	} else {
		moff = v;
		r2 = UINT64_MAX;
	}
	*ns_off = t->m[m].base + moff;
	*run = r1 < r2 ? r1 : r2;
	return m;
}

void nvt_nvme_target_free(struct nvt_nvme_target *t)
{
	free(t->ext);
	t->ext = NULL;
	t->next = 0;
}
