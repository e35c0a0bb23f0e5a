/* SPDX-License-Identifier: MIT */
/* The md RAID0 address arithmetic and synchronous I/O over a layout of one or more members. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/layout_io.h"
#include "nvtape/layout.h"
#include "util/sysutil.h"

void nvt_layout_single(struct nvt_layout *l, const char *path)
{
	memset(l, 0, sizeof(*l));
	l->n = 1;
	l->path[0] = path;
}

void nvt_layout_resolve(const struct nvt_layout *given, const char *path, struct nvt_layout *out)
{
	if (given && given->n)
		*out = *given;
	else
		nvt_layout_single(out, path);
}

unsigned nvt_layout_map(const struct nvt_layout *l, uint64_t x, uint64_t *member_off, uint64_t *run)
{
	if (l->n <= 1) {
		*member_off = l->member_offset + x;
		*run = UINT64_MAX - x;
		return 0;
	}
	uint64_t row = x / (l->stripe * l->n), within = x % (l->stripe * l->n);
	unsigned m = (unsigned)(within / l->stripe);
	*member_off = l->member_offset + row * l->stripe + within % l->stripe;
	*run = l->stripe - within % l->stripe;
	return m;
}

uint64_t nvt_layout_share(const struct nvt_layout *l, unsigned m, uint64_t size)
{
	if (l->n <= 1)
		return size;
	uint64_t row = l->stripe * l->n, full = size / row, rem = size % row;
	uint64_t start = (uint64_t)m * l->stripe, part = 0;
	if (rem > start)
		part = rem - start < l->stripe ? rem - start : l->stripe;
	return full * l->stripe + part;
}

const char *nvt_layout_name(const struct nvt_layout *l, char *buf, size_t cap)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned m = 0; m < l->n && used < cap; m++) {
		int k = snprintf(buf + used, cap - used, "%s%s", m ? "+" : "", l->path[m]);
		used += k > 0 ? (size_t)k : 0;
	}
	if (l->n > 1 && used < cap)
		snprintf(buf + used, cap - used, " (stripe %llu KiB)",
			 (unsigned long long)(l->stripe >> 10));
	return buf;
}

/* Two members that are one file (the same name, a link to it) or one device would each hold
 * half of a stripe in the same place: refused. Members that do not exist yet are distinct. */
static int check_distinct(const struct nvt_layout *l, struct nvt_err *err)
{
	struct stat st[NVT_MAX_MEMBERS];
	bool known[NVT_MAX_MEMBERS];

	for (unsigned m = 0; m < l->n; m++) {
		known[m] = stat(l->path[m], &st[m]) == 0;
		for (unsigned k = 0; known[m] && k < m; k++) {
			bool same = known[k] &&
				    (S_ISBLK(st[m].st_mode) ? S_ISBLK(st[k].st_mode) &&
								      st[m].st_rdev == st[k].st_rdev
							    : st[m].st_dev == st[k].st_dev &&
								      st[m].st_ino == st[k].st_ino);
			if (same) {
				nvt_err_param(
					err,
					"%s and %s are the same %s: every striped member must "
					"be a file or device of its own",
					l->path[k], l->path[m],
					S_ISBLK(st[m].st_mode) ? "device" : "file");
				return -EINVAL;
			}
		}
		for (unsigned k = 0; !known[m] && k < m; k++)
			if (!strcmp(l->path[k], l->path[m])) {
				nvt_err_param(err,
					      "%s is given twice: every striped member must be "
					      "a file or device of its own",
					      l->path[m]);
				return -EINVAL;
			}
	}
	return 0;
}

int nvt_layout_check(const struct nvt_layout *l, struct nvt_err *err)
{
	if (l->n < 1 || l->n > NVT_MAX_MEMBERS) {
		nvt_err_set(err, EINVAL, "%u members: 1 to %u are supported", l->n,
			    NVT_MAX_MEMBERS);
		return -EINVAL;
	}
	if (l->n > 1 && (l->stripe < 4096 || l->stripe % 4096 || l->stripe > (1u << 30))) {
		nvt_err_param(err, "the stripe chunk must be a multiple of 4 KiB from 4K to 1G");
		return -EINVAL;
	}
	if (l->member_offset % 4096) {
		nvt_err_param(err, "the member offset must be a multiple of 4 KiB");
		return -EINVAL;
	}
	return check_distinct(l, err);
}

static int layout_io(const struct nvt_layout *l, const int *fd, void *buf, uint64_t len,
		     uint64_t off, bool write)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t moff, run;
		unsigned m = nvt_layout_map(l, off, &moff, &run);
		uint64_t k = run < len ? run : len;
		/* what the medium holds, not a page cached earlier: the nvme engine writes
		 * beneath the page cache, and a cached page outlives its reader while another
		 * opener (the recording's own claim) keeps the device open */
		if (!write)
			(void)posix_fadvise(fd[m], (off_t)moff, (off_t)k, POSIX_FADV_DONTNEED);
		ssize_t n =
			write ? pwrite(fd[m], p, k, (off_t)moff) : pread(fd[m], p, k, (off_t)moff);
		if (n < 0)
			return -errno;
		if ((uint64_t)n != k)
			return write ? -ENOSPC : -ENODATA;
		p += k;
		off += k;
		len -= k;
	}
	return 0;
}

int nvt_layout_pread(const struct nvt_layout *l, const int *fd, void *buf, uint64_t len,
		     uint64_t off)
{
	return layout_io(l, fd, buf, len, off, false);
}

int nvt_layout_pwrite(const struct nvt_layout *l, const int *fd, const void *buf, uint64_t len,
		      uint64_t off)
{
	return layout_io(l, fd, (void *)buf, len, off, true);
}

int nvt_layout_open(const struct nvt_layout *l, int flags, int *fd, struct nvt_err *err)
{
	for (unsigned m = 0; m < l->n; m++) {
		fd[m] = nvt_open_data(l->path[m], flags, NULL, err);
		if (fd[m] < 0) {
			int rc = -fd[m];
			if (rc != ESPIPE)
				nvt_err_set(err, rc, "cannot open %s: %s", l->path[m],
					    strerror(rc));
			while (m--)
				close(fd[m]);
			return -rc;
		}
	}
	return 0;
}

void nvt_layout_close(const struct nvt_layout *l, int *fd)
{
	for (unsigned m = 0; m < l->n; m++)
		if (fd[m] >= 0)
			close(fd[m]);
}

int nvt_layout_size(const struct nvt_layout *l, const int *fd, uint64_t *size, bool *blockdev,
		    struct nvt_err *err)
{
	uint64_t total = 0, min = UINT64_MAX;

	*blockdev = false;
	for (unsigned m = 0; m < l->n; m++) {
		uint64_t s;
		struct nvt_err serr = {0};
		if (nvt_fd_size(fd[m], &s, &serr)) {
			nvt_err_set(err, serr.code, "%s: %s", l->path[m], serr.msg);
			return -serr.code;
		}
		if (nvt_is_blockdev(fd[m]))
			*blockdev = true;
		s = s > l->member_offset ? s - l->member_offset : 0;
		total += s;
		if (s < min)
			min = s;
	}
	if (l->n == 1)
		*size = total;
	else if (*blockdev)
		*size = min / l->stripe * l->stripe * l->n;
	else
		*size = total;
	return 0;
}
