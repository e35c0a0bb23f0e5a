/* SPDX-License-Identifier: MIT */
/* The library's one reader of /sys: an attribute as text or a number (by path, or relative to
 * a block device), the block device a path lives on, and the NVMe controllers behind a block
 * device through partitions, md and device-mapper. */
#ifndef NVT_SYS_SYSFS_H
#define NVT_SYS_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVT_SYSFS_NAME 64 /* room for a kernel block-device or controller name */

/* The attribute /sys/PATH as text, trailing newlines and spaces removed ("" on error). PATH is
 * printf-formatted, relative to /sys ("block/md0/md/level"). 0 or -errno. */
int nvt_sysfs_str(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The attribute as an unsigned decimal number. 0, -errno, or -EINVAL when it is not one. */
int nvt_sysfs_u64(uint64_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An attribute of block device NAME (kernel name: nvme0n1, nvme0n1p2, md0), relative to its
 * directory /sys/class/block/NAME ("start", "queue/max_hw_sectors_kb"). */
int nvt_sysfs_blk_str(const char *name, const char *attr, char *buf, size_t cap);
int nvt_sysfs_blk_u64(const char *name, const char *attr, uint64_t *v);
/* The last component of the symlink /sys/PATH's target (block/md0/md/rd0 -> "dev-nvme0n1"). */
int nvt_sysfs_link_name(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Kernel name of the block device with major:minor maj:min. 0 or -ENOENT. */
int nvt_sysfs_blk_name(unsigned maj, unsigned min, char *buf, size_t cap);
/* The block device path is on (itself for a block device, the filesystem's device for a file;
 * for a file not yet created, its directory's): its number in *maj / *min and its kernel name
 * (-ENODEV with the numbers set when sysfs knows no block device of that number). 0 or -errno. */
int nvt_sysfs_blk_of_path(const char *path, unsigned *maj, unsigned *min, char *name, size_t cap);
/* Call fn for every entry of the directory /sys/class/block/NAME/SUB ("holders", "slaves").
 * Returns the number of entries, or -errno when the directory cannot be read. */
int nvt_sysfs_blk_each(const char *name, const char *sub, void (*fn)(const char *entry, void *arg),
		       void *arg);
/* The disk that partition NAME belongs to: true with its name, false when NAME is no
 * partition. */
bool nvt_sysfs_blk_disk(const char *name, char *buf, size_t cap);
/* The NVMe controllers ("nvme0") behind block device NAME: a namespace, a partition of one, or
 * md / dm over them, followed through their slaves. Fills at most max, without duplicates;
 * returns how many. */
unsigned nvt_sysfs_nvme_ctrls(const char *name, char (*ctrl)[NVT_SYSFS_NAME], unsigned max);
/* Where the tree is read from: "/sys" (NULL restores it); tests point it at a tree of their
 * own. */
void nvt_sysfs_set_root(const char *root);

#endif
