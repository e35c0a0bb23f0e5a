/* SPDX-License-Identifier: MIT */
/* The NVMe controllers behind a file or block device and the PCIe link each one reports in
 * sysfs (speed and width, current and maximum), for the speedtest's report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtape/speedtest.h"
#include "sys/sysfs.h"

static unsigned link_width(const char *ctrl, const char *attr)
{
	uint64_t v = 0;

	if (nvt_sysfs_u64(&v, "class/nvme/%s/device/%s", ctrl, attr) || v > 1024)
		return 0;
	return (unsigned)v;
}

static void read_link(struct nvt_link *l, const char *ctrl)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->ctrl, sizeof(l->ctrl), "%.31s", ctrl);
	nvt_sysfs_str(l->model, sizeof(l->model), "class/nvme/%s/model", ctrl);
	nvt_sysfs_str(l->cur_speed, sizeof(l->cur_speed), "class/nvme/%s/device/current_link_speed",
		      ctrl);
	nvt_sysfs_str(l->max_speed, sizeof(l->max_speed), "class/nvme/%s/device/max_link_speed",
		      ctrl);
	l->cur_width = link_width(ctrl, "current_link_width");
	l->max_width = link_width(ctrl, "max_link_width");
}

int nvt_links_of(const char *path, struct nvt_link *links, unsigned max, unsigned *n, char *what,
		 size_t what_cap)
{
	char name[NVT_SYSFS_NAME], ctrl[NVT_LINK_MAX][NVT_SYSFS_NAME];
	unsigned maj = 0, min = 0, k;
	int rc;

	*n = 0;
	snprintf(what, what_cap, "unknown");
	rc = nvt_sysfs_blk_of_path(path, &maj, &min, name, sizeof(name));
	if (rc == -ENODEV) {
		snprintf(what, what_cap, "no block device (%u:%u)", maj, min);
		return 0;
	}
	if (rc)
		return rc;
	snprintf(what, what_cap, "%s", name);
	k = nvt_sysfs_nvme_ctrls(name, ctrl, max < NVT_LINK_MAX ? max : NVT_LINK_MAX);
	for (unsigned i = 0; i < k; i++)
		read_link(&links[i], ctrl[i]);
	*n = k;
	return 0;
}
