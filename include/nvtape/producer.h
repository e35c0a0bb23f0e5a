/* SPDX-License-Identifier: MIT */
/* A producer in another process writes straight into the ring of `nvtape record --source
 * shm:NAME` (or of a program recording with the "shm" source): the chunk it fills is the chunk
 * the drive is handed, no pipe, no copy. Header only: nothing to link but libc.
 *
 *     struct nvt_producer p;
 *     if (nvt_producer_connect(&p, "run1") < 0) ...     // p.error says why
 *     for (;;) {
 *             size_t room;
 *             void *buf = nvt_producer_acquire(&p, &room, NVT_PRODUCER_NOWAIT);
 *             if (!buf && errno == EAGAIN) { nvt_producer_drop(&p, lost_units); continue; }
 *             if (!buf) break;                        // nvtape is stopping
 *             size_t n = fill(buf, room);             // whole units of p.unit_bytes
 *             nvt_producer_commit(&p, n);
 *     }
 *     if (nvt_producer_close(&p) < 0)                 // the end of the stream; nvtape's
 *             fprintf(stderr, "%s\n", p.error);       // verdict: it failed (ENOSPC...)
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
 * eventfd only then.
 *
 * Whom a producer talks to: before it sends or maps anything it checks who listens
 * (SO_PEERCRED): its own user or root, else it refuses (another user listening there first
 * would otherwise receive the data). A name's socket lives in a directory only its owner can
 * write (nvt_shm_dir()). Every failure leaves its reason in words in p->error. */
#ifndef NVTAPE_PRODUCER_H
#define NVTAPE_PRODUCER_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
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
/* nvtape's answers other than NVT_SHM_HELLO: the word, a zero, the reason in words, a zero */
#define NVT_SHM_BUSY    "busy"    /* another producer is attached */
#define NVT_SHM_REFUSED "refused" /* the producer runs as another user than nvtape (or root) */
#define NVT_SHM_ERROR   "error"   /* no hello, or not this version's */
/* nvtape's last message (nvt_shm_ctl.features & NVT_SHM_F_END), once the recording is final:
 * "nvtape-end CODE BYTES", a zero, the reason in words, a zero. CODE 0: the recording is
 * complete; else the errno of its failure (ENOSPC...). BYTES: the data it holds. */
#define NVT_SHM_END "nvtape-end"
/* nvt_shm_ctl.features (nvtape, once) */
#define NVT_SHM_F_END 1u /* nvtape sends NVT_SHM_END when the recording is final */

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
	union {
		uint32_t pad0;
		uint32_t features; /* NVT_SHM_F_*: what this nvtape does beyond version 1 */
	};
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
NVT_STATIC_ASSERT(offsetof(struct nvt_shm_ctl, features) == 28, "features");
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

/* The directory of the names' sockets, one only its owner can write: /run/nvtape for root
 * (sudo, services), else $XDG_RUNTIME_DIR (an absolute path), else /tmp/nvtape-UID. nvtape
 * creates the last two when missing and refuses one another user could write. 0, or
 * -ENAMETOOLONG. */
static inline int nvt_shm_dir(char *dir, size_t len)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	int n;

	if (geteuid() == 0)
		n = snprintf(dir, len, "/run/nvtape");
	else if (x && x[0] == '/')
		n = snprintf(dir, len, "%s", x);
	else
		n = snprintf(dir, len, "/tmp/nvtape-%u", (unsigned)geteuid());
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* The socket address of a name: a path when it holds a '/', else nvt_shm_dir()/nvtape-NAME.sock.
 * -EINVAL for an empty name, -ENAMETOOLONG when it does not fit. */
static inline int nvt_shm_address(const char *name, struct sockaddr_un *a)
{
	char dir[sizeof(a->sun_path)];
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (!name || !*name)
		return -EINVAL;
	if (strchr(name, '/'))
		n = snprintf(a->sun_path, sizeof(a->sun_path), "%s", name);
	else if (nvt_shm_dir(dir, sizeof(dir)))
		return -ENAMETOOLONG;
	else
		n = snprintf(a->sun_path, sizeof(a->sun_path), "%s/nvtape-%s.sock", dir, name);
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
	/* why the last nvt_producer_connect() or nvt_producer_close() failed, in words ("" when
	 * it did not); kept when the producer is reset */
	char error[320];
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int
nvt_producer_say_(struct nvt_producer *p, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
	return rc;
}

/* Everything closed and zeroed but the error. */
static inline void nvt_producer_reset_(struct nvt_producer *p)
{
	char error[sizeof(p->error)];

	if (p->sock >= 0)
		close(p->sock);
	if (p->wake_me >= 0)
		close(p->wake_me);
	if (p->wake_nvtape >= 0)
		close(p->wake_nvtape);
	memcpy(error, p->error, sizeof(error));
	memset(p, 0, sizeof(*p));
	memcpy(p->error, error, sizeof(error));
	p->sock = p->wake_me = p->wake_nvtape = -1;
}

/* Who listens at the connected socket: 0 when it is this user or root, else -EACCES with the
 * reason in p->error. Nothing has been sent yet. */
static inline int nvt_producer_check_peer_(struct nvt_producer *p, const char *path)
{
	struct {
		int32_t pid; /* struct ucred, which <sys/socket.h> shows only with _GNU_SOURCE */
		uint32_t uid, gid;
	} peer;
	socklen_t len = sizeof(peer);

	if (getsockopt(p->sock, SOL_SOCKET, SO_PEERCRED, &peer, &len))
		return nvt_producer_say_(p, -errno, "shm %s: cannot tell who listens: %s", path,
					 strerror(errno));
	if (peer.uid == geteuid() || peer.uid == 0)
		return 0;
	return nvt_producer_say_(
		p, -EACCES,
		"shm %s: answered by uid %u (pid %d), neither your user (uid %u) nor root: "
		"another user's program listens there; nothing sent. Use a name (its socket "
		"lives in a directory only its owner can write) or a path in a directory of "
		"yours, and remove that socket",
		path, (unsigned)peer.uid, (int)peer.pid, (unsigned)geteuid());
}

/* Connect to the nvtape listening on name (nvt_shm_address) and map its ring. 0 or -errno
 * with the reason in p->error (-ENOENT: nobody listens there; -EBUSY: another producer is
 * attached; -EACCES: nvtape, or whoever listens there, runs as another user; -EPROTO: not an
 * nvtape of this version). */
static inline int nvt_producer_connect(struct nvt_producer *p, const char *name)
{
	struct sockaddr_un a;
	char msg[512];
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {msg, sizeof(msg) - 1};
	struct msghdr m;
	struct cmsghdr *c;
	const char *why;
	int fds[4] = {-1, -1, -1, -1}, rc;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->sock = p->wake_me = p->wake_nvtape = -1;
	rc = nvt_shm_address(name, &a);
	if (rc)
		return nvt_producer_say_(p, rc,
					 "shm:%s: not a usable name (a word, or a socket path of "
					 "at most %zu characters)",
					 name ? name : "", sizeof(a.sun_path) - 1);
	p->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (p->sock < 0) {
		rc = nvt_producer_say_(p, -errno, "shm %s: socket: %s", a.sun_path,
				       strerror(errno));
		goto fail;
	}
	if (connect(p->sock, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		if (rc == -ENOENT || rc == -ECONNREFUSED)
			nvt_producer_say_(p, rc,
					  "shm %s: nobody listens there (%s): start `nvtape record "
					  "--source shm:%s` first, as your user or root",
					  a.sun_path, strerror(-rc), name);
		else if (rc == -EACCES)
			nvt_producer_say_(
				p, rc,
				"shm %s: permission denied: the recording runs as another "
				"user; run the producer as that user or root",
				a.sun_path);
		else
			nvt_producer_say_(p, rc, "shm %s: connect: %s", a.sun_path, strerror(-rc));
		goto fail;
	}
	rc = nvt_producer_check_peer_(p, a.sun_path);
	if (rc)
		goto fail;
	/* a refusal may come (and the connection close) before this is read: the answer says */
	n = send(p->sock, NVT_SHM_ATTACH, sizeof(NVT_SHM_ATTACH), MSG_NOSIGNAL);
	(void)n;
	memset(msg, 0, sizeof(msg));
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	n = recvmsg(p->sock, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0) {
		rc = n < 0 ? -errno : -EPROTO;
		nvt_producer_say_(p, rc,
				  "shm %s: closed without an answer (%s): not an nvtape of this "
				  "version (protocol %u)?",
				  a.sun_path, n < 0 ? strerror(errno) : "no message",
				  NVT_SHM_VERSION);
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
	/* "word", a zero, the reason */
	why = strlen(msg) + 1 < (size_t)n ? msg + strlen(msg) + 1 : "";
	if (!strcmp(msg, NVT_SHM_BUSY) || !strcmp(msg, NVT_SHM_REFUSED) ||
	    !strcmp(msg, NVT_SHM_ERROR)) {
		rc = msg[0] == 'b' ? -EBUSY : msg[0] == 'r' ? -EACCES : -EPROTO;
		if (*why)
			nvt_producer_say_(p, rc, "%s", why);
		else
			nvt_producer_say_(p, rc, "shm %s: nvtape said \"%s\"", a.sun_path, msg);
		goto fail;
	}
	if (strcmp(msg, NVT_SHM_HELLO) || !c || c->cmsg_len != CMSG_LEN(4 * sizeof(int))) {
		rc = nvt_producer_say_(p, -EPROTO,
				       "shm %s: not an nvtape of protocol %u (its answer: %.40s)",
				       a.sun_path, NVT_SHM_VERSION, msg);
		goto fail;
	}
	p->ctl = (struct nvt_shm_ctl *)mmap(NULL, sizeof(*p->ctl), PROT_READ | PROT_WRITE,
					    MAP_SHARED, fds[0], 0);
	if (p->ctl == MAP_FAILED) {
		p->ctl = NULL;
		rc = nvt_producer_say_(p, -errno, "shm %s: cannot map the control page: %s",
				       a.sun_path, strerror(errno));
		goto fail;
	}
	if (p->ctl->magic != NVT_SHM_MAGIC || p->ctl->version != NVT_SHM_VERSION ||
	    !p->ctl->unit_bytes || !p->ctl->chunk_bytes ||
	    p->ctl->chunk_bytes % p->ctl->unit_bytes ||
	    p->ctl->ring_bytes != p->ctl->chunk_bytes * p->ctl->nchunks ||
	    p->ctl->map_bytes < p->ctl->ring_bytes) {
		rc = nvt_producer_say_(p, -EPROTO,
				       "shm %s: not an nvtape control page of version %u",
				       a.sun_path, NVT_SHM_VERSION);
		goto fail;
	}
	p->ring = (uint8_t *)mmap(NULL, p->ctl->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				  fds[1], 0);
	if (p->ring == MAP_FAILED) {
		p->ring = NULL;
		rc = nvt_producer_say_(p, -errno, "shm %s: cannot map the ring: %s", a.sun_path,
				       strerror(errno));
		goto fail;
	}
	close(fds[0]);
	close(fds[1]);
	p->wake_me = fds[2];
	p->wake_nvtape = fds[3];
	p->unit_bytes = p->ctl->unit_bytes;
	p->chunk_bytes = p->ctl->chunk_bytes;
	p->pos = NVT_LOAD(&p->ctl->pos);
	p->error[0] = 0;
	return 0;
fail:
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (p->ctl)
		munmap(p->ctl, sizeof(*p->ctl));
	nvt_producer_reset_(p);
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
				errno = EPIPE; /* nvtape went away, or sent its verdict */
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

/* nvtape's verdict on the recording, its last message: 0 when the recording is complete, else
 * -errno with nvtape's reason in p->error. */
static inline int nvt_producer_verdict_(struct nvt_producer *p)
{
	char msg[1024];
	unsigned long long bytes;
	int code;
	ssize_t n;

	memset(msg, 0, sizeof(msg));
	n = recv(p->sock, msg, sizeof(msg) - 1, 0);
	if (n < 0 && errno == EINTR)
		return nvt_producer_say_(p, -EINTR,
					 "interrupted before nvtape said whether the recording is "
					 "complete: see its own output, or nvtape verify");
	if (n <= 0)
		return nvt_producer_say_(
			p, -EPIPE,
			"nvtape went away before saying whether the recording is "
			"complete (killed?): check the recording with nvtape verify");
	if (sscanf(msg, NVT_SHM_END " %d %llu", &code, &bytes) != 2 || code < 0)
		return nvt_producer_say_(p, -EPROTO,
					 "nvtape ended with a message this producer does not know "
					 "(\"%.40s\"): check the recording with nvtape verify",
					 msg);
	if (!code)
		return 0;
	if (strlen(msg) + 1 < (size_t)n && msg[strlen(msg) + 1])
		return nvt_producer_say_(p, -code, "the recording failed: %s",
					 msg + strlen(msg) + 1);
	return nvt_producer_say_(p, -code, "the recording failed (%s); it holds %llu bytes",
				 strerror(code), bytes);
}

/* The end of the stream: nvtape writes what was committed and finalizes the recording. The
 * drop that found the log full is handed over first (waiting for nvtape up to a second). Then
 * it waits for nvtape's verdict: 0 when the recording is complete, else -errno with the reason
 * in p->error (-ENOSPC: the drive filled up...; -EPIPE: nvtape went away without one). An
 * nvtape older than the verdict (NVT_SHM_F_END not set): 0 at once. */
static inline int nvt_producer_close(struct nvt_producer *p)
{
	uint32_t features;
	int rc = 0;

	if (!p->ctl)
		return 0;
	for (int i = 0; p->pending_units && i < 100; i++) {
		nvt_producer_flush_drop(p);
		if (p->pending_units)
			usleep(10000);
	}
	features = p->ctl->features;
	NVT_STORE_X(&p->ctl->ended, NVT_SHM_CLOSED, release);
	nvt_shm_signal(&p->ctl->cons_sleep, p->wake_nvtape);
	munmap(p->ring, p->ctl->map_bytes);
	munmap(p->ctl, sizeof(*p->ctl));
	p->error[0] = 0;
	if (features & NVT_SHM_F_END)
		rc = nvt_producer_verdict_(p);
	nvt_producer_reset_(p);
	return rc;
}

#endif
