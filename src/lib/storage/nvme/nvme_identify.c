/* SPDX-License-Identifier: MIT */
/* The nvme engine's Identify step: open a namespace's char device, read Identify Namespace
 * (LBA format, capacity, write protection) and Identify Controller (MDTS, serial, model,
 * firmware), and bound a command by what the drive and the kernel accept (MDTS,
 * max_hw_sectors_kb, max_segments x 4 KiB: a passthrough command is never split). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "format/lifecycle.h"
#include "storage/nvme/nvme_engine.h"
#include "storage/nvme/nvme_status.h"
#include "sys/sysfs.h"

/* A queue (or device) attribute of namespace nvmeCnN, 0 when unreadable. */
static uint64_t ns_attr(const struct nvt_nvme_member *m, const char *attr)
{
	char name[NVT_SYSFS_NAME];
	uint64_t v = 0;

	snprintf(name, sizeof(name), "nvme%un%u", m->ctrl, m->ns);
	if (nvt_sysfs_blk_u64(name, attr, &v))
		v = 0;
	return v;
}

static int admin_identify(const struct nvme_ns *n, uint32_t cns, uint32_t nsid, uint8_t *buf,
			  struct nvt_err *err)
{
	struct nvme_admin_cmd c = {.opcode = 0x06,
				   .nsid = nsid,
				   .addr = (uintptr_t)buf,
				   .data_len = 4096,
				   .cdw10 = cns};
	int rc = ioctl(n->fd, NVME_IOCTL_ADMIN_CMD, &c);

	if (rc) {
		char st[128];
		nvt_err_set(err, rc < 0 ? errno : EIO, "%s: Identify (CNS %u) failed: %s", n->ng,
			    cns,
			    rc < 0 ? strerror(errno)
				   : nvt_nvme_status_str((unsigned)rc, st, sizeof(st)));
		return -EIO;
	}
	return 0;
}

/* Identify Namespace: a format nvtape drives, writable when recording, room for a recording. */
static int check_namespace(struct nvme_ns *n, const struct nvt_nvme_member *m, const uint8_t *id,
			   bool write, struct nvt_err *err)
{
	uint64_t nsze;
	uint32_t lbaf;

	memcpy(&nsze, id, 8);
	memcpy(&lbaf, id + 128 + 4 * (id[26] & 0xf), 4);
	n->lba_shift = (lbaf >> 16) & 0xff;
	n->capacity = nsze << n->lba_shift;
	if ((lbaf & 0xffff) || (id[29] & 0x7) || n->lba_shift < 9 || n->lba_shift > 12) {
		nvt_err_set(err, EINVAL,
			    "%s: LBA format with %u bytes of metadata, protection type %u, "
			    "%u-byte blocks: nvtape drives 512-byte to 4 KiB blocks without "
			    "metadata or protection information (reformat: nvme format)",
			    n->ng, lbaf & 0xffff, id[29] & 0x7, 1u << n->lba_shift);
		return -EINVAL;
	}
	if (write && (id[99] & 1)) {
		nvt_err_set(err, EROFS,
			    "%s: the namespace is write protected (NSATTR): nvtape cannot "
			    "record to it",
			    n->ng);
		return -EROFS;
	}
	if (write && ns_attr(m, "ro") > 0) {
		nvt_err_set(err, EROFS, "%s: the kernel has it read-only (blockdev --setrw)",
			    n->ng);
		return -EROFS;
	}
	if (n->capacity < (16u << 20) + m->base) {
		nvt_err_set(err, ENOSPC, "%s: namespace of %llu bytes is too small for a recording",
			    n->ng, (unsigned long long)n->capacity);
		return -ENOSPC;
	}
	return 0;
}

/* Identify Controller: the largest command (MDTS counts CAP.MPSMIN pages, 4 KiB here; the
 * kernel's max_hw_sectors_kb knows the real one) and the drive's names. */
static void controller_limits(struct nvme_ns *n, const struct nvt_nvme_member *m, const uint8_t *id,
			      struct nvt_drive *d)
{
	uint64_t mdts = id[77] ? 4096ull << id[77] : UINT64_MAX;
	uint64_t hw = ns_attr(m, "queue/max_hw_sectors_kb") << 10;
	uint64_t segs = ns_attr(m, "queue/max_segments") * 4096;

	n->max_cmd = mdts;
	if (hw && hw < n->max_cmd)
		n->max_cmd = hw;
	if (segs && segs < n->max_cmd)
		n->max_cmd = segs;
	if (n->max_cmd > (1u << 30))
		n->max_cmd = 1u << 30;
	n->max_cmd &= ~((1ull << n->lba_shift) - 1);
	n->max_cmd &= ~4095ull;
	nvt_id_str(d->serial, sizeof(d->serial), (const char *)id + 4, 20);
	nvt_id_str(d->model, sizeof(d->model), (const char *)id + 24, 40);
	nvt_id_str(d->firmware, sizeof(d->firmware), (const char *)id + 64, 8);
	d->nsid = n->nsid;
	d->lba_bytes = 1u << n->lba_shift;
	d->max_cmd_kib = (uint32_t)(n->max_cmd >> 10);
}

int nvme_ns_open(struct nvt_engine *e, struct nvme_priv *np, unsigned i, bool write,
		 struct nvt_err *err)
{
	struct nvme_ns *n = &np->ns[i];
	const struct nvt_nvme_member *m = &np->t.m[i];
	uint8_t *id = NULL;
	int rc;

	snprintf(n->ng, sizeof(n->ng), "/dev/ng%un%u", m->ctrl, m->ns);
	if (write && !np->t.file) {
		/* passthrough bypasses the block device's claims: claim it as mkfs would, so that
		 * nothing mounts or assembles it while nvtape writes, and a holder is refused */
		char blk[40];
		snprintf(blk, sizeof(blk), "/dev/nvme%un%u", m->ctrl, m->ns);
		n->claim_fd = open(blk, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
		if (n->claim_fd < 0 && errno == EBUSY) {
			nvt_err_set(
				err, EBUSY,
				"%s is in use (mounted, or held by md, device-mapper or another "
				"recording): nvtape never writes a namespace that is in use",
				blk);
			return -EBUSY;
		}
	}
	n->fd = open(n->ng, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (n->fd < 0) {
		rc = errno;
		nvt_err_set(err, rc, "cannot open %s: %s (NVMe char devices need Linux 5.13+)",
			    n->ng, strerror(rc));
		return -rc;
	}
	rc = ioctl(n->fd, NVME_IOCTL_ID);
	if (rc <= 0 || posix_memalign((void **)&id, 4096, 4096)) {
		nvt_err_set(err, EIO, "%s: cannot get the namespace id", n->ng);
		return -EIO;
	}
	n->nsid = (uint32_t)rc;
	rc = admin_identify(n, 0, n->nsid, id, err);
	if (!rc)
		rc = check_namespace(n, m, id, write, err);
	if (!rc)
		rc = admin_identify(n, 1, 0, id, err);
	if (!rc)
		controller_limits(n, m, id, &e->drive[i]);
	free(id);
	return rc;
}
