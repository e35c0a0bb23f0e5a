/* SPDX-License-Identifier: MIT */
/* Rewriting a finished or interrupted recording in place (recover, metadata edits): claiming its
 * members against a live writer, writing, cutting and syncing every member, the header block.
 * The same claim tells readers (info, verify) whether a writer is alive. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "control/members.h"
#include "storage/layout_io.h"
#include "util/sysutil.h"

int nvt_members_write(const struct nvt_layout *l, const int *fd, const void *buf, size_t len,
		      uint64_t off, struct nvt_err *err)
{
	int rc = nvt_layout_pwrite(l, fd, buf, len, off);

	if (rc)
		nvt_err_set(err, -rc, "write of %zu bytes at %llu: %s", len,
			    (unsigned long long)off, strerror(-rc));
	return rc;
}

int nvt_members_truncate(const struct nvt_layout *L, const int *fd, uint64_t end,
			 struct nvt_err *err)
{
	for (unsigned m = 0; m < L->n; m++) {
		if (!nvt_is_blockdev(fd[m]) &&
		    ftruncate(fd[m], (off_t)(L->member_offset + nvt_layout_share(L, m, end)))) {
			nvt_err_set(err, errno, "%s: ftruncate: %s", L->path[m], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The header block as on disk, patched: an fdrec header keeps the fields nvtape does not model
 * (design, clock); an nvtape one gets the next generation in its slot, the other slot kept. */
int nvt_members_write_header(const struct nvt_layout *L, const int *fd, struct nvt_recording *rec,
			     struct nvt_err *err)
{
	uint8_t hdr[NVT_HEADER_SIZE];

	if (nvt_layout_pread(L, fd, hdr, sizeof(hdr), 0)) {
		nvt_err_set(err, EIO, "cannot re-read the header");
		return -1;
	}
	if (rec->format == NVT_FMT_FDREC) {
		struct fdrec_header *fh = (struct fdrec_header *)hdr;
		fh->flags |= FDREC_FLAG_COMPLETE;
		fh->data_bytes = rec->data_bytes;
		fh->drop_count = rec->drop_count;
		if (!fh->stop_time_ns)
			fh->stop_time_ns = nvt_real_ns();
	} else {
		if (rec->version != NVT_FORMAT_VERSION) /* a version 1 header becomes version 2 */
			rec->generation = 0;
		rec->version = NVT_FORMAT_VERSION;
		nvt_header_block_encode(rec, hdr);
	}
	return nvt_members_write(L, fd, hdr, sizeof(hdr), 0, err) ? -1 : 0;
}

int nvt_members_sync(const struct nvt_layout *L, const int *fd, struct nvt_err *err)
{
	for (unsigned m = 0; m < L->n; m++) {
		if (fsync(fd[m])) {
			nvt_err_set(err, errno, "%s: fsync: %s", L->path[m], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* One try at claiming every member: each device exclusively, each file's lock. 0, -EBUSY
 * (held; *busy names the member), or -1 with err set. */
static int try_claim(const struct nvt_layout *L, int *fd, const char **busy, struct nvt_err *err)
{
	struct nvt_err oerr = {0};

	if (nvt_layout_open(L, O_RDONLY | O_EXCL, fd, &oerr)) {
		if (oerr.code != EBUSY) {
			*err = oerr;
			return -1;
		}
		*busy = NULL;
		return -EBUSY;
	}
	for (unsigned m = 0; m < L->n; m++) {
		struct stat st;
		if (fstat(fd[m], &st) == 0 && S_ISREG(st.st_mode) &&
		    flock(fd[m], LOCK_EX | LOCK_NB)) {
			*busy = L->path[m];
			nvt_layout_close(L, fd);
			return -EBUSY;
		}
	}
	return 0;
}

/* A recording still being written is left alone: its writer holds each member file's lock, or
 * each device exclusively. The claim is kept while the caller (recover, a metadata edit) works,
 * so that no recording starts on the members meanwhile. A writer that was just killed lets go a
 * moment after it died (its io_uring is torn down after the process): ask again for up to two
 * seconds. */
int nvt_members_claim(const struct nvt_layout *L, int *fd, const char *then, struct nvt_err *err)
{
	const char *busy = NULL;
	char name[256];
	int rc;

	for (int i = 0; (rc = try_claim(L, fd, &busy, err)) == -EBUSY && i < 20; i++)
		nvt_sleep_until(nvt_mono_ns() + 100000000ull);
	if (rc != -EBUSY)
		return rc ? -1 : 0;
	if (busy)
		nvt_err_set(err, EBUSY,
			    "%s is being written by a recording (it holds the file's lock): "
			    "%s once that recording has ended; nothing was changed",
			    busy, then);
	else
		nvt_err_set(err, EBUSY,
			    "%s is in use (a recording is writing it, or it is mounted or held): "
			    "%s once that has ended; nothing was changed",
			    nvt_layout_name(L, name, sizeof(name)), then);
	return -1;
}

/* The process holding a BSD lock on path, from /proc/locks ("1: FLOCK ADVISORY WRITE PID
 * MAJ:MIN:INODE 0 EOF", the device in hex); 0 when it is not found there, -1 when the holder has
 * ended (the kernel shows PID 0 for a lock whose process is gone). */
static int flock_holder(const char *path)
{
	struct stat st;
	char line[256];
	int pid = 0;
	FILE *f;

	if (stat(path, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		char type[16];
		unsigned maj, min;
		unsigned long long ino;
		int p;
		if (strstr(line, "->") || /* a waiter, not the holder */
		    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", type, &p, &maj, &min, &ino) !=
			    5)
			continue;
		if (!strcmp(type, "FLOCK") && maj == major(st.st_dev) && min == minor(st.st_dev) &&
		    ino == (unsigned long long)st.st_ino)
			pid = p > 0 ? p : -1;
	}
	fclose(f);
	return pid;
}

/* Has the process ended (gone, or a zombie not yet reaped)? */
static bool process_ended(int pid)
{
	char path[64], line[512];
	bool zombie = false;
	FILE *f;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!(f = fopen(path, "re")))
		return false;
	if (fgets(line, sizeof(line), f)) {
		const char *p = strrchr(line, ')'); /* the name may hold spaces and parentheses */
		zombie = p && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return zombie;
}

/* A lock whose holder has ended belongs to a writer that was killed: its io_uring, torn down
 * after the process, lets the file go a moment later. Such a holder is dead, not live: wait up to
 * two seconds for the lock to go, and call it dead either way. A lock gone from /proc/locks by
 * the time it is read was just let go, and one shown with PID 0 is held by a process that has
 * ended or lives in another PID namespace: ask again for up to two seconds; a lock still held
 * then with PID 0 is a live writer's whose PID this namespace cannot see. */
int nvt_recording_writer(const struct nvt_layout *l, int *pid, struct nvt_err *err)
{
	int fd[NVT_MAX_MEMBERS];

	for (int i = 0;; i++) {
		const char *busy = NULL;
		int rc = try_claim(l, fd, &busy, err);
		*pid = 0;
		if (rc == 0) {
			nvt_layout_close(l, fd);
			return 0;
		}
		if (rc != -EBUSY)
			return -(err->code ? err->code : EIO);
		int holder = busy ? flock_holder(busy) : 0;
		*pid = holder > 0 ? holder : 0;
		if (!busy || (holder > 0 && !process_ended(holder)))
			return 1; /* a device held exclusively, or a live holder */
		if (i == 20) {
			*pid = 0;
			return holder > 0 ? 0 : 1;
		}
		nvt_sleep_until(nvt_mono_ns() + 100000000ull);
	}
}
