/* SPDX-License-Identifier: MIT */
/* The ring: hugepage-backed chunk memory and the single-producer / single-consumer protocol. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/ring.h"
#include "util/sysutil.h"

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26)
#endif

static void efd_signal(int fd)
{
	uint64_t one = 1;
	ssize_t rc = write(fd, &one, sizeof(one));
	(void)rc; /* counter saturation cannot happen at our rates; nothing to do on failure */
}

static void efd_drain(int fd)
{
	uint64_t v;
	ssize_t rc = read(fd, &v, sizeof(v));
	(void)rc;
}

/* Every hugepage of the mapping present. MAP_POPULATE is best effort: a hugepage the pool
 * cannot give after all (its reservation count gone wrong, seen on Linux 6.18 with
 * HugePages_Rsvd wrapped below zero) would fail the first I/O into it with EFAULT, or the
 * process with SIGBUS on a store. */
static bool populated(void *mem, size_t len)
{
	unsigned char v;

	for (size_t off = 0; off < len; off += NVT_HUGEPAGE)
		if (mincore((uint8_t *)mem + off, 4096, &v) || !(v & 1))
			return false;
	return true;
}

/* The chunk memory, len bytes: 2 MiB hugepages from the pool when it has them, else locked,
 * pre-faulted ordinary memory (notice says why). shared: a sealed memfd (its size fixed) that
 * another process can map, the shm source's producer. */
static int map_ring(struct nvt_ring *r, size_t len, bool shared, struct nvt_err *err)
{
	const int prot = PROT_READ | PROT_WRITE;
	size_t pages = len / NVT_HUGEPAGE;
	uint8_t *m = MAP_FAILED;
	int fd = -1;

	if (shared) {
		fd = memfd_create("nvtape-ring",
				  MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB | MFD_HUGE_2MB);
		if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
			m = mmap(NULL, len, prot, MAP_SHARED | MAP_POPULATE, fd, 0);
	} else {
		m = mmap(NULL, len, prot,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB | MAP_POPULATE,
			 -1, 0);
	}
	bool short_pool = m != MAP_FAILED && !populated(m, len);
	if (short_pool) {
		munmap(m, len); /* the pool promised pages it could not give */
		m = MAP_FAILED;
	}
	if (m != MAP_FAILED) {
		r->hugetlb = true;
	} else {
		uint64_t free_pages = nvt_hugepages_free();
		if (fd >= 0)
			close(fd);
		fd = -1;
		if (shared) {
			fd = memfd_create("nvtape-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
			if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
				m = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
		} else {
			m = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		}
		if (m == MAP_FAILED) {
			int e = errno;
			if (fd >= 0)
				close(fd);
			nvt_err_set(err, ENOMEM, "cannot map a %zu MiB ring%s: %s", len >> 20,
				    shared ? " in shared memory" : "", strerror(e));
			nvt_err_set_hint(err, NVT_HINT_SMALLER_RING, 0, 0, 0);
			return -ENOMEM;
		}
		madvise(m, len, MADV_HUGEPAGE);
		r->locked = mlock(m, len) == 0;
		memset(m, 0, len); /* pre-fault: no page faults while recording */
		if (short_pool)
			snprintf(r->notice, sizeof(r->notice),
				 "ring uses ordinary %smemory: the hugepage pool granted %zu "
				 "hugepages but could not fill them (its reservation count is "
				 "wrong: HugePages_Rsvd in /proc/meminfo wrapped below zero?)",
				 r->locked ? "locked " : "unlocked ", pages);
		else
			snprintf(r->notice, sizeof(r->notice),
				 "ring uses ordinary %smemory: need %zu free 2 MiB hugepages, %llu "
				 "free: echo %zu > /proc/sys/vm/nr_hugepages",
				 r->locked ? "locked " : "unlocked ", pages,
				 (unsigned long long)free_pages, pages + (size_t)free_pages);
	}
	/* the other process may not shrink the file under nvtape (a SIGBUS here); the shm source
	 * adds F_SEAL_FUTURE_WRITE | F_SEAL_SEAL once its producer has mapped the ring */
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW)) {
		int e = errno;
		munmap(m, len);
		close(fd);
		nvt_err_set(err, e, "cannot seal the shared ring's memfd: %s", strerror(e));
		return -e;
	}
	r->mem = m;
	r->mem_fd = fd;
	return 0;
}

int nvt_ring_create(struct nvt_ring *r, unsigned n, uint64_t chunk_bytes, unsigned flags,
		    struct nvt_err *err)
{
	size_t len;
	int rc;

	memset(r, 0, sizeof(*r));
	r->prod_efd = r->cons_efd = r->mem_fd = -1;
	if (n < 2 || chunk_bytes < 4096 || chunk_bytes % 4096 || chunk_bytes > (1u << 30)) {
		nvt_err_set(
			err, EINVAL,
			"ring of %u x %llu bytes: need at least 2 chunks of a multiple of 4 KiB, "
			"at most 1 GiB each",
			n, (unsigned long long)chunk_bytes);
		return -EINVAL;
	}
	len = (size_t)n * chunk_bytes;
	len = (len + NVT_HUGEPAGE - 1) / NVT_HUGEPAGE * NVT_HUGEPAGE;
	rc = map_ring(r, len, flags & NVT_RING_SHARED, err);
	if (rc)
		return rc;
	r->map_bytes = len;
	r->chunk_bytes = chunk_bytes;
	r->nchunks = n;
	r->fill = calloc(n, sizeof(*r->fill));
	r->flags = calloc(n, sizeof(*r->flags));
	r->prod_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->cons_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!r->fill || !r->flags || r->prod_efd < 0 || r->cons_efd < 0) {
		nvt_err_set(err, errno ? errno : ENOMEM, "ring setup: %s", strerror(errno));
		nvt_ring_destroy(r);
		return -ENOMEM;
	}
	return 0;
}

void nvt_ring_destroy(struct nvt_ring *r)
{
	if (r->mem)
		munmap(r->mem, r->map_bytes);
	if (r->prod_efd >= 0)
		close(r->prod_efd);
	if (r->cons_efd >= 0)
		close(r->cons_efd);
	if (r->mem_fd >= 0)
		close(r->mem_fd);
	free(r->fill);
	free(r->flags);
	memset(r, 0, sizeof(*r));
	r->prod_efd = r->cons_efd = r->mem_fd = -1;
}

bool nvt_ring_can_produce(struct nvt_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	return head - atomic_load_explicit(&r->tail, memory_order_acquire) < r->nchunks;
}

int nvt_ring_wait_free(struct nvt_ring *r, int timeout_ms)
{
	struct pollfd pfd = {.fd = r->prod_efd, .events = POLLIN};

	for (;;) {
		if (atomic_load(&r->aborted))
			return -ECANCELED;
		if (nvt_ring_can_produce(r))
			return 0;
		atomic_store(&r->prod_waiting, 1);
		if (nvt_ring_can_produce(r) || atomic_load(&r->aborted)) {
			atomic_store(&r->prod_waiting, 0);
			continue;
		}
		int rc = poll(&pfd, 1, timeout_ms);
		atomic_store(&r->prod_waiting, 0);
		if (rc > 0)
			efd_drain(r->prod_efd);
		else if (rc == 0)
			return nvt_ring_can_produce(r) ? 0 : -ETIME;
	}
}

void nvt_ring_publish(struct nvt_ring *r, uint32_t bytes)
{
	nvt_ring_publish_flags(r, bytes, 0);
}

void nvt_ring_publish_flags(struct nvt_ring *r, uint32_t bytes, uint32_t flags)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t fill;

	r->fill[head % r->nchunks] = bytes;
	r->flags[head % r->nchunks] = flags;
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	fill = head + 1 - atomic_load_explicit(&r->tail, memory_order_acquire);
	if (fill > atomic_load_explicit(&r->hwm, memory_order_relaxed))
		atomic_store_explicit(&r->hwm, fill, memory_order_relaxed);
	efd_signal(r->cons_efd);
}

void nvt_ring_close(struct nvt_ring *r)
{
	atomic_store(&r->closed, 1);
	efd_signal(r->cons_efd);
}

void nvt_ring_release(struct nvt_ring *r)
{
	atomic_fetch_add(&r->tail, 1); /* seq_cst: ordered before the prod_waiting load */
	if (atomic_load(&r->prod_waiting))
		efd_signal(r->prod_efd);
}

void nvt_ring_abort(struct nvt_ring *r)
{
	atomic_store(&r->aborted, 1);
	efd_signal(r->prod_efd);
}

void nvt_ring_wake_producer(struct nvt_ring *r)
{
	efd_signal(r->prod_efd);
}

void nvt_ring_init(struct nvt_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->prod_efd = r->cons_efd = r->mem_fd = -1;
}

void nvt_ring_wait_published(struct nvt_ring *r, int timeout_ms)
{
	struct pollfd pfd = {.fd = r->cons_efd, .events = POLLIN};

	if (poll(&pfd, 1, timeout_ms) > 0)
		efd_drain(r->cons_efd);
}
