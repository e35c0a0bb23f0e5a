/* SPDX-License-Identifier: MIT */
/* A producer in another process writes straight into the ring of `nvtape record --source
 * shm:NAME` (or of a program recording with the "shm" source): the chunk it fills is the chunk
 * the drive is handed, no pipe, no copy. Header only: nothing to link but libc.
 *
 *     struct nvt_producer p;
 *     if (nvt_producer_connect(&p, "run1") < 0) ...     // nvtape listens on that name
 *     for (;;) {
 *             size_t room;
 *             void *buf = nvt_producer_acquire(&p, &room, NVT_PRODUCER_NOWAIT);
 *             if (!buf && errno == EAGAIN) { nvt_producer_drop(&p, lost_units); continue; }
 *             if (!buf) break;                        // nvtape is stopping
 *             size_t n = fill(buf, room);             // whole units of p.unit_bytes
 *             nvt_producer_commit(&p, n);
 *     }
 *     nvt_producer_close(&p);                         // the end of the stream
 *
 * The same calls, the same rules as the in-process push API (nvtape/recorder.h): one producer
 * thread; room is a whole number of units inside one ring chunk; drop() counts units lost
 * upstream, indexed at the current position. A producer that exits or dies without close() is
 * seen by nvtape (its socket closes): the recording ends with what was committed.
 *
 * How it works (docs/shm.md): nvtape listens on a UNIX socket; a producer connects and receives
 * two sealed memfds, the control page (struct nvt_shm_ctl) and the ring, and two eventfds, one
 * to wake each side. Both sides count bytes since the start: the producer publishes `pos`
 * (release) after writing the data, nvtape publishes `limit`, how far the producer may write
 * (the chunks the drive has written come free). Drops go through a small log of {position,
 * units}. A side that is about to sleep says so in the control page; the other writes its
 * eventfd only then. */
#ifndef NVTAPE_PRODUCER_H
#define NVTAPE_PRODUCER_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef __cplusplus
#include <atomic>
#define NVT_ATOMIC(T)                std::atomic<T>
#define NVT_LOAD(p)                  std::atomic_load(p)
#define NVT_STORE(p, v)              std::atomic_store(p, v)
#define NVT_LOAD_X(p, mo)            std::atomic_load_explicit(p, std::memory_order_##mo)
#define NVT_STORE_X(p, v, mo)        std::atomic_store_explicit(p, v, std::memory_order_##mo)
#define NVT_ADD_X(p, v, mo)          std::atomic_fetch_add_explicit(p, v, std::memory_order_##mo)
#define NVT_FENCE()                  std::atomic_thread_fence(std::memory_order_seq_cst)
#define NVT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#include <stdatomic.h>
#define NVT_ATOMIC(T)                _Atomic(T)
#define NVT_LOAD(p)                  atomic_load(p)
#define NVT_STORE(p, v)              atomic_store(p, v)
#define NVT_LOAD_X(p, mo)            atomic_load_explicit(p, memory_order_##mo)
#define NVT_STORE_X(p, v, mo)        atomic_store_explicit(p, v, memory_order_##mo)
#define NVT_ADD_X(p, v, mo)          atomic_fetch_add_explicit(p, v, memory_order_##mo)
#define NVT_FENCE()                  atomic_thread_fence(memory_order_seq_cst)
#define NVT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define NVT_SHM_MAGIC   0x314d48535456564eull /* "NVVTSHM1" little-endian */
#define NVT_SHM_VERSION 1u
#define NVT_SHM_DROPS   128u /* entries of the drop log */
/* nvtape's answer, with 4 descriptors: control page, ring, the producer's eventfd, nvtape's */
#define NVT_SHM_HELLO  "nvtape-shm 1"
#define NVT_SHM_ATTACH "nvtape-producer 1" /* the producer's first message */

/* nvt_shm_ctl.state (nvtape) */
#define NVT_SHM_RUN  0u /* recording */
#define NVT_SHM_STOP 1u /* stopping: commit what you hold, then close */
/* nvt_shm_ctl.ended (producer) */
#define NVT_SHM_OPEN   0u
#define NVT_SHM_CLOSED 1u /* nvt_producer_close(): the stream ended */

struct nvt_shm_drop {
	uint64_t pos;   /* byte position of the loss: before the byte committed there */
	uint64_t units; /* units lost */
};

/* The control page, 4096 bytes, shared by nvtape and its producer; little-endian on both sides
 * of one machine. Written once by nvtape before it hands the page over: */
struct nvt_shm_ctl {
	uint64_t magic;       /* NVT_SHM_MAGIC */
	uint32_t version;     /* NVT_SHM_VERSION */
	uint32_t unit_bytes;  /* commit and room are whole units; drops count units */
	uint64_t chunk_bytes; /* ring chunk: room never crosses one */
	uint32_t nchunks;     /* chunks in the ring */
	uint32_t pad0;
	uint64_t ring_bytes; /* nchunks * chunk_bytes: position p is at ring + p % ring_bytes */
	uint64_t map_bytes;  /* length to map the ring memfd with */
	uint64_t end_bytes;  /* the recording's size: the stream ends there (0 = no size) */
	uint8_t pad1[8];
	/* written by nvtape (cache line 1) */
	NVT_ATOMIC(uint64_t) limit;      /* the producer may fill positions below this */
	NVT_ATOMIC(uint32_t) state;      /* NVT_SHM_RUN / NVT_SHM_STOP */
	NVT_ATOMIC(uint32_t) cons_sleep; /* nvtape sleeps: write its eventfd */
	uint8_t pad2[48];
	/* written by the producer (cache line 2) */
	NVT_ATOMIC(uint64_t) pos;        /* bytes committed since the start */
	NVT_ATOMIC(uint64_t) dropped;    /* units dropped since the start (all of the log's) */
	NVT_ATOMIC(uint32_t) ended;      /* NVT_SHM_OPEN / NVT_SHM_CLOSED */
	NVT_ATOMIC(uint32_t) prod_sleep; /* the producer sleeps: write its eventfd */
	uint8_t pad3[40];
	NVT_ATOMIC(uint64_t) drop_head; /* log entries written (producer, cache line 3) */
	uint8_t pad4[56];
	NVT_ATOMIC(uint64_t) drop_tail; /* log entries taken (nvtape, cache line 4) */
	uint8_t pad5[56];
	struct nvt_shm_drop drops[NVT_SHM_DROPS]; /* entry k at drops[k % NVT_SHM_DROPS] */
	uint8_t pad6[4096 - 320 - NVT_SHM_DROPS * sizeof(struct nvt_shm_drop)];
};

NVT_STATIC_ASSERT(sizeof(struct nvt_shm_ctl) == 4096, "the control page is 4096 bytes");
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, limit) == 64, "nvtape's line");
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, pos) == 128, "the producer's line");
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, drop_head) == 192, "drop log head");
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, drop_tail) == 256, "drop log tail");
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, drops) == 320, "drop log");

/* Wake the other side when it said it sleeps. seq_cst fence: the sleeper stores its flag and
 * then reads the state; here the state was stored before the flag is read. */
static inline void nvt_shm_signal(NVT_ATOMIC(uint32_t) * sleeping, int efd)
{
	NVT_FENCE();
	if (NVT_LOAD(sleeping))
		eventfd_write(efd, 1);
}

/* The socket address of a name: a path when it holds a '/', else
 * $XDG_RUNTIME_DIR/nvtape-NAME.sock (/tmp without it). -ENAMETOOLONG when it does not fit. */
static inline int nvt_shm_address(const char *name, struct sockaddr_un *a)
{
	const char *dir = getenv("XDG_RUNTIME_DIR");
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (!name || !*name)
		return -EINVAL;
	if (strchr(name, '/'))
		n = snprintf(a->sun_path, sizeof(a->sun_path), "%s", name);
	else
		n = snprintf(a->sun_path, sizeof(a->sun_path), "%s/nvtape-%s.sock",
			     dir && *dir ? dir : "/tmp", name);
	return n > 0 && (size_t)n < sizeof(a->sun_path) ? 0 : -ENAMETOOLONG;
}

/* nvt_producer_acquire() flags */
#define NVT_PRODUCER_NOWAIT (1u << 0) /* NULL with errno EAGAIN when the ring is full */

struct nvt_producer {
	uint32_t unit_bytes;  /* from nvtape: commit and drop in these */
	uint64_t chunk_bytes; /* from nvtape: room never crosses a chunk */
	/* private */
	int sock;
	int wake_me, wake_nvtape; /* eventfds: nvtape writes the first, the producer the second */
	struct nvt_shm_ctl *ctl;
	uint8_t *ring;
	uint64_t pos;                        /* bytes committed (a copy of ctl->pos) */
	uint64_t room;                       /* bytes acquired and not committed */
	uint64_t pending_pos, pending_units; /* a drop waiting for room in the log */
	uint64_t full;                       /* NOWAIT acquires that found no room */
};

/* Connect to the nvtape listening on name (nvt_shm_address) and map its ring. 0 or -errno
 * (-ENOENT: nobody listens there; -EBUSY: another producer is attached; -EACCES: nvtape runs
 * as another user; -EPROTO: not an nvtape of this version). */
static inline int nvt_producer_connect(struct nvt_producer *p, const char *name)
{
	struct sockaddr_un a;
	char hello[sizeof(NVT_SHM_HELLO) + 64];
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {hello, sizeof(hello) - 1};
	struct msghdr m;
	struct cmsghdr *c;
	int fds[4] = {-1, -1, -1, -1}, rc;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->sock = p->wake_me = p->wake_nvtape = -1;
	rc = nvt_shm_address(name, &a);
	if (rc)
		return rc;
	p->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (p->sock < 0)
		return -errno;
	if (connect(p->sock, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		goto fail;
	}
	/* a refusal may come (and the connection close) before this is read: the answer says */
	n = send(p->sock, NVT_SHM_ATTACH, sizeof(NVT_SHM_ATTACH), MSG_NOSIGNAL);
	(void)n;
	memset(hello, 0, sizeof(hello));
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	n = recvmsg(p->sock, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0) {
		rc = n < 0 ? -errno : -EPROTO;
		goto fail;
	}
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
		/* whatever came is ours to close, whatever the message says */
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[4];
		memcpy(got, CMSG_DATA(c), (k < 4 ? k : 4) * sizeof(int));
		for (size_t i = 0; i < k && i < 4; i++)
			fds[i] = got[i];
	}
	if (!strcmp(hello, "busy") || !strcmp(hello, "refused")) {
		rc = hello[0] == 'b' ? -EBUSY : -EACCES;
		goto fail;
	}
	if (strcmp(hello, NVT_SHM_HELLO) || !c || c->cmsg_len != CMSG_LEN(4 * sizeof(int))) {
		rc = -EPROTO;
		goto fail;
	}
	p->ctl = (struct nvt_shm_ctl *)mmap(NULL, sizeof(*p->ctl), PROT_READ | PROT_WRITE,
					    MAP_SHARED, fds[0], 0);
	if (p->ctl == MAP_FAILED) {
		p->ctl = NULL;
		rc = -errno;
		goto fail;
	}
	if (p->ctl->magic != NVT_SHM_MAGIC || p->ctl->version != NVT_SHM_VERSION ||
	    !p->ctl->unit_bytes || !p->ctl->chunk_bytes ||
	    p->ctl->chunk_bytes % p->ctl->unit_bytes ||
	    p->ctl->ring_bytes != p->ctl->chunk_bytes * p->ctl->nchunks ||
	    p->ctl->map_bytes < p->ctl->ring_bytes) {
		rc = -EPROTO;
		goto fail;
	}
	p->ring = (uint8_t *)mmap(NULL, p->ctl->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				  fds[1], 0);
	if (p->ring == MAP_FAILED) {
		p->ring = NULL;
		rc = -errno;
		goto fail;
	}
	close(fds[0]);
	close(fds[1]);
	p->wake_me = fds[2];
	p->wake_nvtape = fds[3];
	p->unit_bytes = p->ctl->unit_bytes;
	p->chunk_bytes = p->ctl->chunk_bytes;
	p->pos = NVT_LOAD(&p->ctl->pos);
	return 0;
fail:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (p->ctl)
		munmap(p->ctl, sizeof(*p->ctl));
	close(p->sock);
	memset(p, 0, sizeof(*p));
	p->sock = p->wake_me = p->wake_nvtape = -1;
	return rc;
}

/* Nonzero once nvtape is stopping (Ctrl-C, its size or duration reached, an error): commit
 * what you hold and close. */
static inline int nvt_producer_stopping(const struct nvt_producer *p)
{
	return NVT_LOAD_X(&p->ctl->state, acquire) != NVT_SHM_RUN;
}

/* A drop that waited for room in the log goes in when there is some (its position stays that
 * of the loss unless nvtape has passed it: then nvtape counts it where it is). */
static inline void nvt_producer_flush_drop(struct nvt_producer *p)
{
	struct nvt_shm_ctl *c = p->ctl;
	uint64_t head = NVT_LOAD_X(&c->drop_head, relaxed);

	if (!p->pending_units || head - NVT_LOAD_X(&c->drop_tail, acquire) >= NVT_SHM_DROPS)
		return;
	c->drops[head % NVT_SHM_DROPS].pos = p->pending_pos;
	c->drops[head % NVT_SHM_DROPS].units = p->pending_units;
	NVT_STORE_X(&c->drop_head, head + 1, release);
	p->pending_units = 0;
	nvt_shm_signal(&c->cons_sleep, p->wake_nvtape);
}

/* Room in the current chunk: *room bytes (whole units) at the returned address. Without
 * NVT_PRODUCER_NOWAIT it waits for nvtape to free a chunk. NULL with errno EAGAIN (NOWAIT, the
 * ring is full: count what you lose with drop()), ECANCELED (nvtape is stopping) or EPIPE
 * (nvtape went away; NOWAIT finds out within 64 calls). */
static inline void *nvt_producer_acquire(struct nvt_producer *p, size_t *room, unsigned flags)
{
	struct nvt_shm_ctl *c = p->ctl;

	*room = 0;
	for (;;) {
		uint64_t limit = NVT_LOAD_X(&c->limit, acquire);
		uint64_t in_chunk = p->pos % c->chunk_bytes, left = c->chunk_bytes - in_chunk;

		if (nvt_producer_stopping(p) || (c->end_bytes && p->pos >= c->end_bytes)) {
			errno = ECANCELED;
			return NULL;
		}
		if (limit > p->pos) {
			if (limit - p->pos < left)
				left = limit - p->pos;
			left -= left % c->unit_bytes;
			if (left) {
				p->room = left;
				*room = (size_t)left;
				return p->ring + p->pos % c->ring_bytes;
			}
		}
		if (flags & NVT_PRODUCER_NOWAIT) {
			/* a producer that never waits still learns, now and then, that nvtape
			 * went away (killed, or ended on an error) */
			struct pollfd w = {p->sock, POLLIN, 0};
			if (++p->full % 64 == 0 && poll(&w, 1, 0) > 0) {
				errno = EPIPE;
				return NULL;
			}
			errno = EAGAIN;
			return NULL;
		}
		/* sleep until nvtape moves the limit or stops; the flag before the re-check */
		NVT_STORE(&c->prod_sleep, 1);
		if (NVT_LOAD(&c->limit) == limit && NVT_LOAD(&c->state) == NVT_SHM_RUN) {
			struct pollfd w[2] = {{p->wake_me, POLLIN, 0}, {p->sock, POLLIN, 0}};
			eventfd_t v;
			if (poll(w, 2, 100) > 0 && (w[1].revents & (POLLHUP | POLLERR | POLLIN))) {
				NVT_STORE(&c->prod_sleep, 0);
				errno = EPIPE; /* nvtape closed its end */
				return NULL;
			}
			if (w[0].revents & POLLIN)
				eventfd_read(p->wake_me, &v);
		}
		NVT_STORE(&c->prod_sleep, 0);
	}
}

/* bytes (<= room, whole units) were written at the acquired address: nvtape takes them. 0 or
 * -EINVAL. */
static inline int nvt_producer_commit(struct nvt_producer *p, size_t bytes)
{
	struct nvt_shm_ctl *c = p->ctl;
	uint64_t before = p->pos;

	if (bytes > p->room || bytes % c->unit_bytes)
		return -EINVAL;
	if (!bytes)
		return 0;
	p->room -= bytes;
	p->pos += bytes;
	NVT_STORE_X(&c->pos, p->pos, release);
	nvt_producer_flush_drop(p);
	/* nvtape looks at a chunk's first bytes (its capture time) and at a full chunk (to the
	 * drive); it finds the rest within milliseconds on its own */
	if (before % c->chunk_bytes == 0 || p->pos % c->chunk_bytes == 0)
		nvt_shm_signal(&c->cons_sleep, p->wake_nvtape);
	return 0;
}

/* units were lost upstream: counted, and indexed at the current position. 0 or -EOVERFLOW. */
static inline int nvt_producer_drop(struct nvt_producer *p, uint64_t units)
{
	struct nvt_shm_ctl *c = p->ctl;

	if (!units)
		return 0;
	if (p->pending_units && p->pending_pos != p->pos)
		nvt_producer_flush_drop(p);
	if (p->pending_units > UINT64_MAX - units)
		return -EOVERFLOW;
	if (!p->pending_units)
		p->pending_pos = p->pos;
	p->pending_units += units;
	NVT_ADD_X(&c->dropped, units, relaxed);
	nvt_producer_flush_drop(p);
	return 0;
}

/* The end of the stream: nvtape writes what was committed and finalizes the recording. The
 * drop that found the log full is handed over first (waiting for nvtape up to a second). */
static inline void nvt_producer_close(struct nvt_producer *p)
{
	if (!p->ctl)
		return;
	for (int i = 0; p->pending_units && i < 100; i++) {
		nvt_producer_flush_drop(p);
		if (p->pending_units)
			usleep(10000);
	}
	NVT_STORE_X(&p->ctl->ended, NVT_SHM_CLOSED, release);
	nvt_shm_signal(&p->ctl->cons_sleep, p->wake_nvtape);
	munmap(p->ring, p->ctl->map_bytes);
	munmap(p->ctl, sizeof(*p->ctl));
	close(p->sock);
	close(p->wake_me);
	close(p->wake_nvtape);
	memset(p, 0, sizeof(*p));
	p->sock = p->wake_me = p->wake_nvtape = -1;
}

#endif
