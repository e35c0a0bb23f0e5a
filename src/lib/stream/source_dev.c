/* SPDX-License-Identifier: MIT */
/* dev source: a character device or FIFO that delivers its data through read() (a DMA
 * driver's c2h channel, an AXI-Stream FIFO driver, an SDR driver), read straight into ring
 * chunks: one copy by the driver, none here. Reads are chunk-sized (the whole room left in the
 * chunk); a short read commits what came. Such a device overflows in the device when it is not
 * read in time, so this source never waits for the storage: when no ring chunk is free it still
 * reads the device and counts what it had to discard as dropped bytes at that position.
 *
 * The device's own losses: with a loss counter (nvt_source_args.drops_from: a sysfs file of
 * the device, or a file the producer maintains) the counter is read at the start (the base),
 * after every read of the device and whenever the device is silent for 100 ms; an increase of
 * d is reported as d dropped bytes at the position reached when it was seen. A counter that
 * goes backwards or does not hold a number stops the recording with an error. The counter
 * file stays open and is read at offset 0; one replaced by a rename is opened again. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvtape/format.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"
#include "stream/source_dev.h"

#define DEV_POLL_MS     100
#define DEV_SCRATCH     (1u << 20) /* discard buffer while no chunk is free */
#define DEV_COUNTER_MAX 64         /* bytes of a counter file, whitespace included */

int nvt_dev_parse_counter(const char *s, uint64_t *v)
{
	unsigned base = 10;
	uint64_t x = 0;
	bool digits = false;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (x > (UINT64_MAX - d) / base)
			return -ERANGE;
		x = x * base + d;
		digits = true;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (!digits || *s)
		return -EINVAL;
	*v = x;
	return 0;
}

/* A loss counter file, kept open between reads. */
struct counter {
	const char *path; /* NULL: none */
	int fd;           /* -1 until opened */
	uint64_t last;    /* the value read last */
};

/* The counter's value, read at offset 0 of the open file (a sysfs attribute is generated
 * anew by such a read). A file that was replaced (a producer writing a new file and renaming
 * it over the old one, which leaves the old one without a link) is opened again. */
static int read_counter(struct counter *c, uint64_t *v, struct nvt_err *err)
{
	char buf[DEV_COUNTER_MAX + 1];
	struct stat st;
	ssize_t n;
	int rc;

	if (c->fd >= 0 && (fstat(c->fd, &st) || st.st_nlink == 0)) {
		close(c->fd);
		c->fd = -1;
	}
	if (c->fd < 0) {
		/* O_NONBLOCK: a FIFO given as the counter must not block the start */
		c->fd = open(c->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (c->fd < 0) {
			nvt_err_set(err, errno, "cannot open the loss counter %s: %s", c->path,
				    strerror(errno));
			return -err->code;
		}
	}
	do
		n = pread(c->fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		nvt_err_set(err, errno, "cannot read the loss counter %s: %s", c->path,
			    strerror(errno));
		return -err->code;
	}
	if (n > DEV_COUNTER_MAX) {
		nvt_err_set(err, EPROTO,
			    "the loss counter %s holds more than %d bytes: give a file that holds "
			    "one number, such as a sysfs counter",
			    c->path, DEV_COUNTER_MAX);
		return -EPROTO;
	}
	buf[n] = 0;
	rc = memchr(buf, 0, (size_t)n) ? -EINVAL : nvt_dev_parse_counter(buf, v);
	if (rc) {
		nvt_err_set(err, EPROTO,
			    "the loss counter %s does not hold a count of lost bytes%s: it must "
			    "hold one decimal or 0x hexadecimal number",
			    c->path, rc == -ERANGE ? " (more than 2^64 - 1)" : "");
		return -EPROTO;
	}
	return 0;
}

static void close_counter(struct counter *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* 0 for a character device or a FIFO, else -EINVAL with a parameter error (a file or a
 * directory is not a device). */
static int check_type(const char *path, mode_t mode, struct nvt_err *err)
{
	if (S_ISCHR(mode) || S_ISFIFO(mode))
		return 0;
	if (S_ISREG(mode))
		nvt_err_param(err,
			      "dev:%s is a regular file: the dev source reads character devices "
			      "and FIFOs; record a file through the stdin source (its standard "
			      "input redirected from %s)",
			      path, path);
	else if (S_ISDIR(mode))
		nvt_err_param(err,
			      "dev:%s is a directory: give the character device or FIFO to read "
			      "(such as dev:/dev/xdma0_c2h_0)",
			      path);
	else
		nvt_err_param(err,
			      "dev:%s is not a character device or FIFO (a block device or "
			      "a socket?): the dev source reads those only; feed anything else to "
			      "the stdin source",
			      path);
	return -EINVAL;
}

static int dev_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	struct stat st;

	if (!a->arg || !*a->arg) {
		nvt_err_param(err, "the dev source needs the path of the device to read: "
				   "dev:/dev/xdma0_c2h_0, or dev:FIFO");
		return -EINVAL;
	}
	if (stat(a->arg, &st)) {
		nvt_err_set(err, errno,
			    "dev:%s: %s (give the character device or FIFO that delivers the "
			    "data)",
			    a->arg, strerror(errno));
		return -err->code;
	}
	if (check_type(a->arg, st.st_mode, err))
		return -EINVAL;
	if (a->drops_from && !*a->drops_from) {
		nvt_err_param(
			err,
			"the loss counter needs a path (a sysfs file or one the producer keeps)");
		return -EINVAL;
	}
	if (a->drops_from) {
		struct counter c = {.path = a->drops_from, .fd = -1};
		int rc = read_counter(&c, &c.last, err);
		close_counter(&c);
		return rc;
	}
	return 0;
}

/* Read the counter again and report its increase as dropped bytes at the current position. */
static int dev_counter(struct nvt_recorder *r, struct counter *c, struct nvt_err *err)
{
	uint64_t v;
	int rc;

	if (!c->path)
		return 0;
	rc = read_counter(c, &v, err);
	if (rc)
		return rc;
	if (v < c->last) {
		nvt_err_set(err, ERANGE,
			    "the loss counter %s went back from %llu to %llu: a counter of lost "
			    "bytes only grows (was the device reset, or the file rewritten?)",
			    c->path, (unsigned long long)c->last, (unsigned long long)v);
		return -ERANGE;
	}
	if (v > c->last && nvt_recorder_drop(r, v - c->last)) {
		nvt_err_set(err, EOVERFLOW,
			    "the loss counter %s reports more than 2^64 - 1 lost bytes in one "
			    "place",
			    c->path);
		return -EOVERFLOW;
	}
	c->last = v;
	return 0;
}

/* One read of the device: into the current chunk, or, when no chunk is free, into scratch and
 * counted as dropped. 1 = data came, 0 = end of input or stopping, -EAGAIN = nothing to read
 * now, else -errno with err set. */
static int dev_read(struct nvt_recorder *r, int fd, const char *path, void **scratch,
		    struct nvt_err *err)
{
	size_t room;
	void *p = nvt_recorder_acquire(r, &room, NVT_ACQUIRE_NOWAIT);
	ssize_t n;

	if (!p && errno != EAGAIN)
		return 0; /* stopping */
	if (!p && !*scratch && !(*scratch = malloc(DEV_SCRATCH))) {
		nvt_err_set(err, ENOMEM, "no memory for the dev source's discard buffer");
		return -ENOMEM;
	}
	if (p && !room)
		return -EAGAIN;
	n = read(fd, p ? p : *scratch, p ? room : DEV_SCRATCH);
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return -EAGAIN;
		nvt_err_set(err, errno, "read from dev:%s: %s", path, strerror(errno));
		return -err->code;
	}
	if (n == 0)
		return 0;
	if (p)
		nvt_recorder_commit(r, (size_t)n);
	else
		nvt_recorder_drop(r, (uint64_t)n);
	return 1;
}

/* c: the loss counter, its base read */
static int dev_loop(struct nvt_recorder *r, const struct nvt_source_args *a, int fd,
		    struct counter *c, struct nvt_err *err)
{
	void *scratch = NULL;
	int rc = 0;

	while (!rc) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = poll(&pfd, 1, DEV_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			nvt_err_set(err, errno, "poll on dev:%s: %s", a->arg, strerror(errno));
			rc = -err->code;
			break;
		}
		if (pr <= 0) {
			/* silent: a stop is honoured, losses meanwhile are placed here */
			if (nvt_recorder_stopping(r))
				break;
			if (pr == 0)
				rc = dev_counter(r, c, err);
			continue;
		}
		rc = dev_read(r, fd, a->arg, &scratch, err);
		if (rc == -EAGAIN) {
			rc = 0;
			continue;
		}
		if (rc <= 0) {
			/* end of input (a final look at the counter) or stopping */
			if (rc == 0 && !nvt_recorder_stopping(r))
				rc = dev_counter(r, c, err);
			break;
		}
		rc = dev_counter(r, c, err);
	}
	free(scratch);
	return rc;
}

static int dev_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		   struct nvt_source_report *rep, struct nvt_err *err)
{
	struct counter c = {.path = a->drops_from, .fd = -1};
	struct stat st;
	int fd, rc = 0;

	(void)rep;
	/* the base, before the device is opened: a producer waiting for a reader may count
	 * losses as soon as it has one */
	if (c.path && (rc = read_counter(&c, &c.last, err)))
		goto out;
	fd = open(a->arg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		nvt_err_set(err, errno, "cannot open dev:%s: %s", a->arg, strerror(errno));
		rc = -err->code;
		goto out;
	}
	if (fstat(fd, &st)) {
		nvt_err_set(err, errno, "dev:%s: %s", a->arg, strerror(errno));
		rc = -err->code;
	} else {
		rc = check_type(a->arg, st.st_mode, err);
		if (!rc)
			rc = dev_loop(r, a, fd, &c, err);
	}
	close(fd);
out:
	close_counter(&c);
	return rc;
}

const struct nvt_source_ops nvt_source_dev = {
	.name = "dev",
	.help = "a character device or FIFO (DMA drivers) read() straight into the ring; never "
		"stalled: what finds no free chunk is dropped, counted and indexed; a loss counter "
		"file of the device adds its own losses",
	.kind = NVT_SRC_DEV,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_DROPS_FROM,
	.check = dev_check,
	.run = dev_run,
};
