/* SPDX-License-Identifier: MIT */
/* shm source: a producer in another process writes into the recorder's ring itself
 * (include/nvtape/producer.h, docs/shm.md). The ring lives in a sealed memfd (shared_ring);
 * this source listens on a UNIX socket, hands the first producer that connects the control
 * page, the ring and two eventfds, and then follows it: every byte the producer commits is
 * committed to the recorder where it already lies (no copy), each entry of its drop log becomes
 * nvt_recorder_drop() at its position, and the producer's limit moves as the drive frees
 * chunks. Nothing the producer writes in shared memory is trusted: a position that goes back,
 * passes the limit or splits a unit stops the recording with what came before it. The stream
 * ends when the producer closes it; a producer that dies is seen by its socket closing, and
 * the recording ends with what it committed (exit 1: the stream did not end as it should).
 * A stop (Ctrl-C, nvt_recorder_stop) asks the producer to close, and takes what it commits
 * until it does, for at most SHM_STOP_GRACE_NS. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/recorder_ring.h"
#include "nvtape/format.h"
#include "nvtape/producer.h"
#include "nvtape/recorder.h"
#include "nvtape/source.h"
#include "util/sysutil.h"

#define SHM_WAIT_MS       20 /* the longest sleep: socket, stop and partial commits */
#define SHM_STOP_GRACE_NS 2000000000ull

struct shmsrc {
	struct nvt_recorder *r;
	struct nvt_ring_view v;
	struct nvt_shm_ctl *ctl;
	struct sockaddr_un addr;
	int ctl_fd, lsock, sock;
	int wake_prod, wake_me; /* eventfds: we write the first, the producer the second */
	uint64_t cons;          /* bytes committed to the recorder */
	uint64_t ring_bytes;
	/* nvtape's own fields of the page, kept here: the producer can write the page */
	uint64_t limit, tail;
	bool stopping;
	uint64_t logged; /* units taken from the drop log */
	pid_t pid;
	bool bound;
};

static int sys_err(struct nvt_err *err, int e, const char *what, const struct shmsrc *s)
{
	nvt_err_set(err, e, "shm %s: %s: %s", s->addr.sun_path, what, strerror(e));
	return -e;
}

/* The control page: a sealed 4 KiB memfd with the ring's geometry. */
static int make_ctl(struct shmsrc *s, struct nvt_err *err)
{
	struct nvt_shm_ctl *c;

	s->ctl_fd = memfd_create("nvtape-shm-ctl", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->ctl_fd < 0 || ftruncate(s->ctl_fd, sizeof(*c)) ||
	    fcntl(s->ctl_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return sys_err(err, errno, "control page memfd", s);
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, s->ctl_fd, 0);
	if (c == MAP_FAILED)
		return sys_err(err, errno, "control page mmap", s);
	s->ctl = c;
	c->magic = NVT_SHM_MAGIC;
	c->version = NVT_SHM_VERSION;
	c->unit_bytes = 1;
	c->chunk_bytes = s->v.chunk_bytes;
	c->nchunks = s->v.nchunks;
	c->ring_bytes = s->ring_bytes = s->v.chunk_bytes * s->v.nchunks;
	c->map_bytes = s->v.map_bytes;
	c->end_bytes = s->v.limit_bytes;
	s->wake_prod = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_me = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_prod < 0 || s->wake_me < 0)
		return sys_err(err, errno, "eventfd", s);
	return 0;
}

/* Listen on the name's socket. A socket file nobody answers on is left over from a run that
 * died: replaced. One that answers belongs to another recording: refused. */
static int listen_on(struct shmsrc *s, const char *name, struct nvt_err *err)
{
	int rc = nvt_shm_address(name, &s->addr);

	if (rc) {
		nvt_err_set(err, -rc,
			    "shm:%s: not a usable name (a word, or a socket path of at most %zu "
			    "characters)",
			    name, sizeof(s->addr.sun_path) - 1);
		return rc;
	}
	s->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lsock < 0)
		return sys_err(err, errno, "socket", s);
	if (bind(s->lsock, (struct sockaddr *)&s->addr, sizeof(s->addr))) {
		struct stat st;
		int probe;
		bool live;

		if (errno != EADDRINUSE)
			return sys_err(err, errno, "bind", s);
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		live = probe >= 0 && !connect(probe, (struct sockaddr *)&s->addr, sizeof(s->addr));
		if (probe >= 0)
			close(probe);
		if (live) {
			nvt_err_set(err, EADDRINUSE,
				    "shm %s: another recording listens on this name: give another "
				    "name, or stop that one",
				    s->addr.sun_path);
			return -EADDRINUSE;
		}
		if (lstat(s->addr.sun_path, &st) || !S_ISSOCK(st.st_mode)) {
			nvt_err_set(err, EEXIST,
				    "shm %s exists and is not a socket: give another name, or "
				    "remove it",
				    s->addr.sun_path);
			return -EEXIST;
		}
		unlink(s->addr.sun_path); /* left by a run that died */
		if (bind(s->lsock, (struct sockaddr *)&s->addr, sizeof(s->addr)))
			return sys_err(err, errno, "bind", s);
	}
	s->bound = true;
	if (chmod(s->addr.sun_path, 0600) || listen(s->lsock, 4))
		return sys_err(err, errno, "listen", s);
	return 0;
}

/* Refuse a connection: a second producer, or another user's. */
static void refuse(int fd, const char *why)
{
	ssize_t n = send(fd, why, strlen(why) + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)n;
	close(fd);
}

/* The connection's first message is the producer's NVT_SHM_ATTACH, within timeout_ms. */
static bool said_attach(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char msg[sizeof(NVT_SHM_ATTACH) + 8];
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return false;
	n = recv(fd, msg, sizeof(msg), MSG_DONTWAIT);
	return n == (ssize_t)sizeof(NVT_SHM_ATTACH) && !memcmp(msg, NVT_SHM_ATTACH, (size_t)n);
}

/* Take one connection: the recording's owner (or root) gets the descriptors. 1 attached, 0
 * nothing to take, -errno. */
static int take_producer(struct shmsrc *s, struct nvt_err *err)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char hello[] = NVT_SHM_HELLO;
	int fds[4] = {s->ctl_fd, s->v.mem_fd, s->wake_prod, s->wake_me};
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {(void *)hello, sizeof(hello)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;
	int fd = accept4(s->lsock, NULL, NULL, SOCK_CLOEXEC);

	(void)err;
	if (fd < 0)
		return 0; /* gone again, or out of descriptors: the recording goes on */
	/* a producer says so first; anything else (another nvtape probing whether this name is
	 * taken, a stray client) is let go without taking its place. Its message read, a refusal
	 * reaches it (closing on an unread message would reset the connection instead). */
	/* while a producer is attached, following it comes first: 50 ms for the message */
	if (!said_attach(fd, s->sock >= 0 ? 50 : 1000)) {
		close(fd);
		return 0;
	}
	if (s->sock >= 0) {
		refuse(fd, "busy");
		return 0;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		refuse(fd, "refused");
		return 0;
	}
	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (sendmsg(fd, &m, MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		close(fd); /* it went away: wait for the next one */
		return 0;
	}
	s->sock = fd;
	s->pid = cred.pid;
	return 1;
}

/* How far the producer may write: the chunks not yet written stay its own until released,
 * and never past the recording's size. Published, and the producer woken if it sleeps. */
static void move_limit(struct shmsrc *s)
{
	uint64_t limit = (nvt_recorder_ring_released(s->r) + s->v.nchunks) * s->v.chunk_bytes;

	if (s->v.limit_bytes && limit > s->v.limit_bytes)
		limit = s->v.limit_bytes;
	if (limit == s->limit)
		return;
	s->limit = limit;
	atomic_store_explicit(&s->ctl->limit, limit, memory_order_release);
	nvt_shm_signal(&s->ctl->prod_sleep, s->wake_prod);
}

/* Commit [cons, to) to the recorder, chunk piece by chunk piece, where the producer wrote it.
 * 0, 1 when the recording takes no more (a limit, a failure), -EPROTO. */
static int commit_to(struct shmsrc *s, uint64_t to, struct nvt_err *err)
{
	while (s->cons < to) {
		size_t room;
		uint8_t *p =
			nvt_recorder_acquire(s->r, &room, NVT_ACQUIRE_NOWAIT | NVT_ACQUIRE_DRAIN);
		uint64_t n = to - s->cons;

		if (!p && errno == EAGAIN) {
			nvt_err_set(err, EPROTO,
				    "shm %s: no ring chunk free below the producer's limit "
				    "(internal error)",
				    s->addr.sun_path);
			return -EPROTO;
		}
		if (!p)
			return 1;
		if (p != s->v.mem + s->cons % s->ring_bytes) {
			nvt_err_set(err, EPROTO,
				    "shm %s: the ring and the producer's position disagree "
				    "(internal error)",
				    s->addr.sun_path);
			return -EPROTO;
		}
		if (n > room)
			n = room;
		nvt_recorder_commit(s->r, (size_t)n);
		s->cons += n;
	}
	return 0;
}

/* Everything the producer published: data up to its position, each logged drop where it
 * happened. 0, 1 (the recording takes no more), -errno. */
static int follow(struct shmsrc *s, struct nvt_err *err)
{
	struct nvt_shm_ctl *c = s->ctl;
	/* the log first: every entry in it lies at or before the position read after it */
	uint64_t head = atomic_load_explicit(&c->drop_head, memory_order_acquire);
	uint64_t pos = atomic_load_explicit(&c->pos, memory_order_acquire);
	uint64_t tail = s->tail, limit = s->limit;
	int rc;

	if (pos < s->cons || pos > limit || head - tail > NVT_SHM_DROPS) {
		nvt_err_set(err, EPROTO,
			    "shm %s: the producer (pid %d) published position %llu (taken %llu, "
			    "limit %llu) or %llu drop entries (at most %u): a producer that does "
			    "not follow include/nvtape/producer.h; the recording keeps what came "
			    "before",
			    s->addr.sun_path, (int)s->pid, (unsigned long long)pos,
			    (unsigned long long)s->cons, (unsigned long long)limit,
			    (unsigned long long)(head - tail), NVT_SHM_DROPS);
		return -EPROTO;
	}
	for (; tail != head; tail++) {
		struct nvt_shm_drop d = c->drops[tail % NVT_SHM_DROPS];
		/* a loss logged late (the log was full) counts where the data is now */
		rc = commit_to(s, d.pos > s->cons && d.pos <= pos ? d.pos : s->cons, err);
		if (rc)
			return rc;
		nvt_recorder_drop(s->r, d.units);
		s->logged += d.units;
		s->tail = tail + 1;
		atomic_store_explicit(&c->drop_tail, s->tail, memory_order_release);
	}
	return commit_to(s, pos, err);
}

/* Sleep until the producer or the drive moves, the socket says something, or SHM_WAIT_MS. */
static void sleep_a_while(struct shmsrc *s, uint64_t pos, uint64_t head)
{
	struct nvt_shm_ctl *c = s->ctl;
	struct pollfd w[3] = {{.fd = s->wake_me, .events = POLLIN},
			      {.fd = s->sock, .events = POLLIN | POLLRDHUP},
			      {.fd = s->lsock, .events = POLLIN}};
	eventfd_t v;

	atomic_store(&c->cons_sleep, 1);
	if (atomic_load(&c->pos) == pos && atomic_load(&c->drop_head) == head &&
	    atomic_load(&c->ended) == NVT_SHM_OPEN && poll(w, 3, SHM_WAIT_MS) > 0 &&
	    (w[0].revents & POLLIN))
		eventfd_read(s->wake_me, &v);
	atomic_store(&c->cons_sleep, 0);
}

/* Ask the producer to commit what it holds and close (once). */
static void tell_stop(struct shmsrc *s)
{
	if (s->stopping || !s->ctl)
		return;
	s->stopping = true;
	atomic_store(&s->ctl->state, NVT_SHM_STOP);
	nvt_shm_signal(&s->ctl->prod_sleep, s->wake_prod);
}

/* Units the producer counted as dropped but could not log (its log full at its close, or it
 * died with one waiting): one drop at the end, so that the count stays the producer's. Not
 * after a stop: what it loses then is not the recording's. */
static void unlogged_drops(struct shmsrc *s)
{
	uint64_t said = atomic_load_explicit(&s->ctl->dropped, memory_order_acquire);

	if (said > s->logged) {
		nvt_recorder_drop(s->r, said - s->logged);
		s->logged = said;
	}
}

static bool peer_gone(struct shmsrc *s)
{
	struct pollfd p = {.fd = s->sock, .events = POLLIN | POLLRDHUP};
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLIN));
}

static int shm_loop(struct shmsrc *s, struct nvt_err *err)
{
	struct nvt_shm_ctl *c = s->ctl;
	uint64_t stop_at = 0;
	int rc;

	/* the producer may fill the whole ring from the start */
	move_limit(s);
	while (s->sock < 0) {
		struct pollfd p = {.fd = s->lsock, .events = POLLIN};
		if (nvt_recorder_stopping(s->r))
			return 0; /* stopped before a producer came: an empty recording */
		if (poll(&p, 1, 100) > 0 && (rc = take_producer(s, err)) < 0)
			return rc;
	}
	for (;;) {
		uint64_t pos = atomic_load_explicit(&c->pos, memory_order_acquire);
		uint64_t head = atomic_load_explicit(&c->drop_head, memory_order_acquire);
		bool ended =
			atomic_load_explicit(&c->ended, memory_order_acquire) == NVT_SHM_CLOSED;

		rc = follow(s, err);
		if (rc)
			return rc > 0 ? 0 : rc;
		move_limit(s);
		if (ended && s->cons == pos && head == s->tail) {
			/* the producer closed the stream and all of it is in */
			if (!s->stopping)
				unlogged_drops(s);
			return 0;
		}
		if (nvt_recorder_stopping(s->r) && !stop_at) {
			tell_stop(s);
			stop_at = nvt_mono_ns();
		}
		if (stop_at && nvt_mono_ns() - stop_at > SHM_STOP_GRACE_NS)
			return 0; /* it did not close in time: what it committed is kept */
		if (!ended && peer_gone(s)) {
			rc = follow(s, err); /* its last commits */
			if (rc < 0)
				return rc;
			if (atomic_load(&c->ended) == NVT_SHM_CLOSED)
				continue;
			if (!s->stopping)
				unlogged_drops(s);
			nvt_err_set(err, EPIPE,
				    "shm %s: the producer (pid %d) went away without closing the "
				    "stream: the recording keeps the %llu bytes it committed",
				    s->addr.sun_path, (int)s->pid, (unsigned long long)s->cons);
			return -EPIPE;
		}
		if (take_producer(s, err) < 0) /* a second one is told "busy" */
			return -EIO;
		sleep_a_while(s, pos, head);
	}
}

static int shm_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		   struct nvt_source_report *rep, struct nvt_err *err)
{
	struct shmsrc s = {
		.r = r, .ctl_fd = -1, .lsock = -1, .sock = -1, .wake_prod = -1, .wake_me = -1};
	int rc;

	(void)rep;
	nvt_recorder_ring_view(r, &s.v);
	if (s.v.mem_fd < 0) {
		nvt_err_set(err, EINVAL,
			    "the shm source needs the ring in shared memory (nvt_record_opts."
			    "shared_ring)");
		return -EINVAL;
	}
	rc = make_ctl(&s, err);
	if (!rc)
		rc = listen_on(&s, a->arg, err);
	if (!rc) {
		nvt_recorder_say(r,
				 "waiting for a producer on %s (include/nvtape/producer.h, "
				 "python/nvtape_producer.py)",
				 s.addr.sun_path);
		rc = shm_loop(&s, err);
	}
	if (s.ctl) /* a producer still there learns that the recording is over, whatever ended it */
		tell_stop(&s);
	if (s.bound)
		unlink(s.addr.sun_path);
	if (s.ctl)
		munmap(s.ctl, sizeof(*s.ctl));
	int *fds[] = {&s.ctl_fd, &s.lsock, &s.sock, &s.wake_prod, &s.wake_me};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	return rc;
}

static int shm_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	struct sockaddr_un addr;

	if (nvt_shm_address(a->arg, &addr)) {
		nvt_err_param(err,
			      "shm:%s: not a usable name (a word for $XDG_RUNTIME_DIR/"
			      "nvtape-NAME.sock, or a socket path of at most %zu characters)",
			      a->arg, sizeof(addr.sun_path) - 1);
		return -EINVAL;
	}
	return 0;
}

const struct nvt_source_ops nvt_source_shm = {
	.name = "shm",
	.help = "a producer in another process writing into the ring itself (shm:NAME; "
		"include/nvtape/producer.h, python/nvtape_producer.py): no copy; its drops are "
		"counted and indexed, a producer that dies ends the recording with what it "
		"committed",
	.kind = NVT_SRC_SHM,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_SHARED_RING,
	.check = shm_check,
	.run = shm_run,
};
