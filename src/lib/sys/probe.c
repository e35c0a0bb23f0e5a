/* SPDX-License-Identifier: MIT */
/* Recognizing what a block device already holds before nvtape writes over it: nvtape's and the
 * FPGA Drive Recorder's own recordings, then everything libblkid knows (the probe wipefs and
 * mkfs use: filesystems, RAID members, volume managers, crypto containers, partition tables),
 * then nvtape's own short list of magic numbers as a second opinion. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid/blkid.h>

#include "sys/probe.h"
#include "sys/sysfs.h"
#include "util/sysutil.h"

#define MD_MAGIC 0xa92b4efcu

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool at(const uint8_t *buf, size_t len, size_t off, const void *magic, size_t n)
{
	return off + n <= len && memcmp(buf + off, magic, n) == 0;
}

static bool md_at(const uint8_t *buf, size_t len, size_t off)
{
	return off + 4 <= len && le32(buf + off) == MD_MAGIC;
}

bool nvt_probe_buffers(const uint8_t *h, size_t hl, const uint8_t *t, size_t tl, uint64_t size,
		       char *what, size_t cap)
{
	static const struct {
		size_t off;
		const char *magic;
		size_t n;
		const char *name;
	} sigs[] = {
		{0, "NVTAPE\0\0", 8, "an nvtape recording"},
		{0, "FDREC\0\0\0", 8, "an FPGA Drive Recorder recording"},
		{0, "XFSB", 4, "an XFS filesystem"},
		{1080, "\x53\xef", 2, "an ext2/3/4 filesystem"},
		{65600, "_BHRfS_M", 8, "a btrfs filesystem"},
		{3, "EXFAT   ", 8, "an exFAT filesystem"},
		{3, "NTFS    ", 8, "an NTFS filesystem"},
		{82, "FAT32   ", 8, "a FAT32 filesystem"},
		{54, "FAT1", 4, "a FAT filesystem"},
		{4086, "SWAPSPACE2", 10, "swap space"},
		{512, "LABELONE", 8, "an LVM physical volume"},
		{512, "EFI PART", 8, "a GPT partition table"},
	};

	/* md superblocks first: an array member matters more than what the array held;
	 * 1.1 at 0, 1.2 at 4 KiB, 1.0 and 0.90 near the end */
	if (md_at(h, hl, 0) || md_at(h, hl, 4096)) {
		snprintf(what, cap, "an md RAID superblock (metadata 1.%d)",
			 md_at(h, hl, 0) ? 1 : 2);
		return true;
	}
	if (t && tl && size >= tl) {
		uint64_t base = size - tl;
		uint64_t off10 = (((size >> 9) - 16) & ~7ull) << 9; /* 1.0: 8 KiB from the end */
		uint64_t off090 = ((size >> 16) << 16) - 65536;     /* 0.90: last 64 KiB boundary */
		if (off10 >= base && md_at(t, tl, off10 - base)) {
			snprintf(what, cap, "an md RAID superblock (metadata 1.0)");
			return true;
		}
		if (size >= 131072 && off090 >= base && md_at(t, tl, off090 - base)) {
			snprintf(what, cap, "an md RAID superblock (metadata 0.90)");
			return true;
		}
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (at(h, hl, sigs[i].off, sigs[i].magic, sigs[i].n)) {
			snprintf(what, cap, "%s", sigs[i].name);
			return true;
		}
	}
	if (hl >= 512 && h[510] == 0x55 && h[511] == 0xaa) {
		snprintf(what, cap, "a DOS partition table or boot sector");
		return true;
	}
	return false;
}

/* blkid's TYPE in words; the type itself is appended for the record. */
static void describe(const char *type, const char *usage, const char *version, char *what,
		     size_t cap)
{
	static const struct {
		const char *type, *words;
	} names[] = {
		{"ext2", "an ext2/3/4 filesystem"},
		{"ext3", "an ext2/3/4 filesystem"},
		{"ext4", "an ext2/3/4 filesystem"},
		{"xfs", "an XFS filesystem"},
		{"btrfs", "a btrfs filesystem"},
		{"exfat", "an exFAT filesystem"},
		{"vfat", "a FAT filesystem"},
		{"ntfs", "an NTFS filesystem"},
		{"swap", "swap space"},
		{"crypto_LUKS", "a LUKS encrypted volume"},
		{"LVM2_member", "an LVM physical volume"},
		{"iso9660", "an ISO9660 image"},
		{"zfs_member", "a ZFS pool member"},
		{"bcache", "a bcache device"},
		{"f2fs", "an F2FS filesystem"},
	};

	if (!strcmp(type, "linux_raid_member")) {
		snprintf(what, cap, "an md RAID superblock (metadata %s; blkid: %s)",
			 version ? version : "?", type);
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(type, names[i].type)) {
			snprintf(what, cap, "%s (blkid: %s)", names[i].words, type);
			return;
		}
	snprintf(what, cap, "a %s signature (%s; blkid: %s)", type, usage ? usage : "data", type);
}

/* libblkid's safe probe: 1 found (what says what), 0 nothing, -errno. */
static int probe_blkid(const char *path, char *what, size_t cap)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *type = NULL, *usage = NULL, *version = NULL;
	int rc;

	if (!pr)
		return errno ? -errno : -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
						      BLKID_SUBLKS_VERSION);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0) {
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			blkid_probe_lookup_value(pr, "VERSION", &version, NULL);
			describe(type, usage, version, what, cap);
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			snprintf(what, cap, "a %s partition table (blkid: %s)",
				 !strcmp(type, "dos")   ? "DOS (MBR)"
				 : !strcmp(type, "gpt") ? "GPT"
							: type,
				 type);
		} else {
			snprintf(what, cap, "a signature blkid recognizes");
		}
		rc = 1;
	} else if (rc == -2) {
		snprintf(what, cap, "several conflicting signatures (blkid: ambiguous)");
		rc = 1;
	} else if (rc == 1) {
		rc = 0;
	} else {
		rc = -EIO;
	}
	blkid_free_probe(pr);
	return rc;
}

int nvt_probe_device(const char *path, char *what, size_t cap)
{
	struct nvt_err err = {0};
	uint64_t size;
	size_t hl, tl;
	uint8_t *h = NULL, *t = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (nvt_fd_size(fd, &size, &err)) {
		close(fd);
		return -EIO;
	}
	hl = size < NVT_PROBE_HEAD ? size : NVT_PROBE_HEAD;
	tl = size < NVT_PROBE_TAIL ? size : NVT_PROBE_TAIL;
	h = calloc(1, NVT_PROBE_HEAD);
	t = calloc(1, NVT_PROBE_TAIL);
	if (!h || !t)
		rc = -ENOMEM;
	else if (pread(fd, h, hl, 0) != (ssize_t)hl ||
		 pread(fd, t, tl, (off_t)(size - tl)) != (ssize_t)tl)
		rc = -EIO;
	else if (hl >= 8 && (!memcmp(h, "NVTAPE\0\0", 8) || !memcmp(h, "FDREC\0\0\0", 8)))
		rc = nvt_probe_buffers(h, hl, t, tl, size, what, cap) ? 1 : 0;
	else if ((rc = probe_blkid(path, what, cap)) == 0)
		rc = nvt_probe_buffers(h, hl, t, tl, size, what, cap) ? 1 : 0;
	free(h);
	free(t);
	close(fd);
	return rc;
}

struct holders {
	char *buf;
	size_t cap, used;
};

static void add_holder(const char *name, void *arg)
{
	struct holders *h = arg;
	int n = snprintf(h->buf + h->used, h->cap - h->used, "%s%s", h->used ? ", " : "", name);
	if (n > 0 && (size_t)n < h->cap - h->used)
		h->used += (size_t)n;
	else
		h->buf[h->used] = 0;
}

bool nvt_blockdev_holders(const char *path, char *buf, size_t cap)
{
	char real[4096];
	struct holders h = {.buf = buf, .cap = cap};

	buf[0] = 0;
	if (!realpath(path, real))
		return false;
	nvt_sysfs_blk_each(basename(real), "holders", add_holder, &h);
	return h.used > 0;
}
