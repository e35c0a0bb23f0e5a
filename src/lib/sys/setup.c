/* SPDX-License-Identifier: MIT */
/* nvtape setup: check the drives (block devices, not mounted, not held, what they carry), say
 * what will be destroyed, then mdadm --create (RAID0, metadata 1.2), mkfs with the stripe
 * geometry, mount noatime; or unmount and stop the array. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvtape/setup.h"
#include "sys/probe.h"
#include "util/sysutil.h"

extern char **environ;

void nvt_setup_opts_default(struct nvt_setup_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->chunk = 512u << 10;
	o->fs = "xfs";
	o->mount = "/mnt/rec";
	o->md = "/dev/md0";
}

/* Run argv with "y" on its standard input (mdadm asks before overwriting). */
static int run(const struct nvt_setup_opts *o, char *const argv[], struct nvt_err *err)
{
	char line[1024];
	size_t used = 0;
	int in[2], status;
	pid_t pid;
	posix_spawn_file_actions_t fa;

	for (int i = 0; argv[i] && used < sizeof(line); i++) {
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "", argv[i]);
		used += n > 0 ? (size_t)n : 0;
	}
	if (o->log)
		o->log(line, o->arg);
	if (pipe(in)) {
		nvt_err_set(err, errno, "pipe: %s", strerror(errno));
		return -errno;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	if (rc) {
		close(in[1]);
		nvt_err_set(err, rc, "cannot run %s: %s (install it: apt-get install %s)", argv[0],
			    strerror(rc),
			    !strcmp(argv[0], "mdadm")        ? "mdadm"
			    : !strcmp(argv[0], "mkfs.xfs")   ? "xfsprogs"
			    : !strcmp(argv[0], "mkfs.exfat") ? "exfatprogs"
							     : "e2fsprogs");
		return -rc;
	}
	if (write(in[1], "y\n", 2) < 0) {
		/* the tool did not want an answer */
	}
	close(in[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		nvt_err_set(err, EIO, "%s failed (exit %d)", line,
			    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	return 0;
}

/* Each device must be a block device that is neither mounted nor held; collect what it holds. */
static int check_devices(const struct nvt_setup_opts *o, char *plan, size_t cap,
			 struct nvt_err *err)
{
	size_t used = 0;

	for (unsigned i = 0; i < o->ndevs; i++) {
		struct stat st;
		char what[160] = "nothing nvtape recognizes", mnt[512];
		if (stat(o->devs[i], &st) || !S_ISBLK(st.st_mode)) {
			nvt_err_set(err, EINVAL, "%s is not a block device", o->devs[i]);
			return -EINVAL;
		}
		if (nvt_blockdev_mounted(st.st_rdev, mnt, sizeof(mnt))) {
			nvt_err_set(err, EBUSY, "%s is mounted at %s: unmount it first", o->devs[i],
				    mnt);
			return -EBUSY;
		}
		if (nvt_blockdev_holders(o->devs[i], mnt, sizeof(mnt))) {
			nvt_err_set(err, EBUSY,
				    "%s is in use by %s: stop it first (tear the volume down, or "
				    "mdadm --stop /dev/%s)",
				    o->devs[i], mnt, mnt);
			return -EBUSY;
		}
		/* the exclusive claim mkfs relies on: refused while any partition is in use */
		int xfd = open(o->devs[i], O_RDONLY | O_EXCL | O_CLOEXEC);
		if (xfd < 0 && errno == EBUSY) {
			nvt_err_set(
				err, EBUSY,
				"%s is in use (a filesystem on one of its partitions is mounted, "
				"or another program holds it): nothing was changed",
				o->devs[i]);
			return -EBUSY;
		}
		if (xfd >= 0)
			close(xfd);
		if (nvt_probe_device(o->devs[i], what, sizeof(what)) < 0)
			snprintf(what, sizeof(what), "unreadable contents");
		int fd = open(o->devs[i], O_RDONLY | O_CLOEXEC);
		uint64_t size = 0;
		struct nvt_err serr = {0};
		if (fd >= 0) {
			nvt_fd_size(fd, &size, &serr);
			close(fd);
		}
		int n = snprintf(plan + used, cap - used, "  %s (%.1f GB): holds %s\n", o->devs[i],
				 size / 1e9, what);
		used += n > 0 && (size_t)n < cap - used ? (size_t)n : 0;
	}
	return 0;
}

static int make_fs(const struct nvt_setup_opts *o, const char *dev, unsigned members,
		   struct nvt_err *err)
{
	char su[64], geom[96];

	if (!strcmp(o->fs, "xfs")) {
		snprintf(su, sizeof(su), "su=%llu,sw=%u", (unsigned long long)o->chunk, members);
		char *argv[] = {"mkfs.xfs", "-f", "-q", "-d", su, (char *)dev, NULL};
		return run(o,
			   members > 1 ? argv
				       : (char *[]){"mkfs.xfs", "-f", "-q", (char *)dev, NULL},
			   err);
	}
	if (!strcmp(o->fs, "ext4")) {
		unsigned stride = (unsigned)(o->chunk / 4096);
		snprintf(geom, sizeof(geom), "stride=%u,stripe-width=%u", stride, stride * members);
		char *argv[] = {"mkfs.ext4", "-F", "-q", "-E", geom, (char *)dev, NULL};
		return run(o, argv, err);
	}
	char *argv[] = {"mkfs.exfat", (char *)dev, NULL};
	return run(o, argv, err);
}

static int do_mount(const struct nvt_setup_opts *o, const char *dev, struct nvt_err *err)
{
	if (mkdir(o->mount, 0755) && errno != EEXIST) {
		nvt_err_set(err, errno, "mkdir %s: %s", o->mount, strerror(errno));
		return -errno;
	}
	if (o->log) {
		char line[512];
		snprintf(line, sizeof(line), "mount -t %s -o noatime %s %s", o->fs, dev, o->mount);
		o->log(line, o->arg);
	}
	if (mount(dev, o->mount, o->fs, MS_NOATIME, NULL)) {
		nvt_err_set(err, errno, "mount %s on %s: %s", dev, o->mount, strerror(errno));
		return -errno;
	}
	return 0;
}

static int teardown(const struct nvt_setup_opts *o, struct nvt_err *err)
{
	struct stat st;

	if (o->log) {
		char line[512];
		snprintf(line, sizeof(line), "umount %s", o->mount);
		o->log(line, o->arg);
	}
	if (umount2(o->mount, 0) && errno != EINVAL && errno != ENOENT) {
		nvt_err_set(err, errno, "umount %s: %s (a recording still running there?)",
			    o->mount, strerror(errno));
		return -errno;
	}
	if (stat(o->md, &st) == 0 && S_ISBLK(st.st_mode)) {
		char *argv[] = {"mdadm", "--stop", (char *)o->md, NULL};
		return run(o, argv, err);
	}
	return 0;
}

int nvt_setup(const struct nvt_setup_opts *o, struct nvt_err *err)
{
	char plan[4096], head[5120];
	const char *target;

	if (o->mode == NVT_SETUP_TEARDOWN)
		return teardown(o, err) ? -(err->code ? err->code : EIO) : 0;
	if (strcmp(o->fs, "xfs") && strcmp(o->fs, "ext4") && strcmp(o->fs, "exfat")) {
		nvt_err_param(err, "the filesystem must be xfs, ext4 or exfat");
		return -EINVAL;
	}
	if ((o->mode == NVT_SETUP_RAID0 && o->ndevs < 2) ||
	    (o->mode == NVT_SETUP_SINGLE && o->ndevs != 1)) {
		nvt_err_param(err, "RAID0 needs two or more devices, a single volume exactly one");
		return -EINVAL;
	}
	if (o->chunk < 4096 || o->chunk % 4096) {
		nvt_err_param(err, "the RAID0 chunk must be a multiple of 4 KiB");
		return -EINVAL;
	}
	if (check_devices(o, plan, sizeof(plan), err))
		return -(err->code ? err->code : EIO);
	target = o->mode == NVT_SETUP_RAID0 ? o->md : o->devs[0];
	snprintf(head, sizeof(head),
		 "nvtape setup will DESTROY everything on these devices:\n%s"
		 "and make %s%s, %s with the stripe geometry, mounted noatime at %s\n",
		 plan, target, o->mode == NVT_SETUP_RAID0 ? " (md RAID0, metadata 1.2)" : "", o->fs,
		 o->mount);
	if (!o->yes && (!o->confirm || !o->confirm(head, o->arg))) {
		nvt_err_set(err, ECANCELED, "declined: nothing was changed");
		err->flags |= NVT_ERR_PARAM;
		return -ECANCELED;
	}
	if (o->mode == NVT_SETUP_RAID0) {
		char chunk[32], n[32];
		char *argv[NVT_MAX_MEMBERS + 12];
		int k = 0;
		snprintf(chunk, sizeof(chunk), "--chunk=%llu",
			 (unsigned long long)(o->chunk >> 10));
		snprintf(n, sizeof(n), "--raid-devices=%u", o->ndevs);
		argv[k++] = "mdadm";
		argv[k++] = "--create";
		argv[k++] = (char *)o->md;
		argv[k++] = "--level=0";
		argv[k++] = "--metadata=1.2";
		argv[k++] = chunk;
		argv[k++] = n;
		argv[k++] = "--run";
		for (unsigned i = 0; i < o->ndevs; i++)
			argv[k++] = (char *)o->devs[i];
		argv[k] = NULL;
		if (run(o, argv, err))
			return -(err->code ? err->code : EIO);
	}
	if (make_fs(o, target, o->mode == NVT_SETUP_RAID0 ? o->ndevs : 1, err) ||
	    do_mount(o, target, err))
		return -(err->code ? err->code : EIO);
	return 0;
}
