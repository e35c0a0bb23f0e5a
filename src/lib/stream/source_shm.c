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
 * until it does, for at most SHM_STOP_GRACE_NS. Once the recording is final the producer is
 * told how it ended (NVT_SHM_END: complete, or its failure).
 *
 * Whom it serves: a name's socket lives in a directory only its owner can write (checked, or
 * made 0700); only the recording's own user or root gets the ring. Connections say their hello
 * without holding anyone up (each waits in a table polled with the rest, at most
 * SHM_HELLO_NS); a wrong one is answered with the reason. At the producer's first commit both
 * memfds are sealed against holes (F_SEAL_FUTURE_WRITE): the memory the drive is handed stays
 * the memory the producer fills. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
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
#define SHM_HELLO_NS      1000000000ull /* a connection's time to say the producer's hello */
#define SHM_PENDING       16u           /* connections waiting for their hello at once */
#define SHM_NOTES         10u           /* connections turned away with a note */

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
	bool gone;   /* the producer's socket closed */
	bool sealed; /* seal_memory() done */
	struct {
		int fd;
		uint64_t since;
	} pend[SHM_PENDING]; /* connections that have not said their hello yet */
	unsigned npend;
	unsigned notes;  /* connections turned away with a note */
	unsigned silent; /* connections closed for saying nothing */
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
	    fcntl(s->ctl_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		return sys_err(err, errno, "control page memfd", s);
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, s->ctl_fd, 0);
	if (c == MAP_FAILED)
		return sys_err(err, errno, "control page mmap", s);
	s->ctl = c;
	c->magic = NVT_SHM_MAGIC;
	c->version = NVT_SHM_VERSION;
	c->features = NVT_SHM_F_END;
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

/* The directory of a name's socket (nvt_shm_dir) exists and only its owner can write it: made
 * when missing (0700), refused when it is a symlink, another user's, or writable by others. A
 * socket path the user gives is taken as it is. */
static int check_dir(const char *name, struct nvt_err *err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *x = getenv("XDG_RUNTIME_DIR");
	bool xdg = geteuid() != 0 && x && x[0] == '/';
	struct stat st;

	if (strchr(name, '/'))
		return 0;
	if (nvt_shm_dir(dir, sizeof(dir))) {
		nvt_err_set(err, ENAMETOOLONG,
			    "shm:%s: the socket directory (XDG_RUNTIME_DIR) is too long for a "
			    "socket path: give a short socket path (shm:/DIR/NAME.sock)",
			    name);
		return -ENAMETOOLONG;
	}
	if (!xdg && !mkdir(dir, 0700))
		chmod(dir, 0700); /* whatever the umask */
	else if (!xdg && errno != EEXIST) {
		int e = errno;
		nvt_err_set(err, e,
			    "shm:%s: cannot create the socket directory %s: %s: give a socket "
			    "path (shm:/DIR/NAME.sock) in a directory only you can write",
			    name, dir, strerror(e));
		return -e;
	}
	if (lstat(dir, &st)) {
		int e = errno;
		nvt_err_set(err, e,
			    "shm:%s: the socket directory %s: %s: %s, or give a socket path "
			    "(shm:/DIR/NAME.sock)",
			    name, dir, strerror(e),
			    xdg ? "set XDG_RUNTIME_DIR to your runtime directory or unset it"
				: "create it");
		return -e;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (xdg || !geteuid() ? (st.st_mode & 022) != 0 : (st.st_mode & 07777) != 0700)) {
		const char *what = xdg || !geteuid() ? "writable by others" : "not mode 0700",
			   *fix = "chmod 700 it";
		if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
			what = S_ISLNK(st.st_mode)    ? "a symbolic link"
			       : !S_ISDIR(st.st_mode) ? "not a directory"
						      : "another user's";
			fix = "remove it (as root), or give a socket path (shm:/DIR/NAME.sock) in "
			      "a directory of yours";
		}
		if (xdg)
			fix = "fix XDG_RUNTIME_DIR (your own directory, mode 0700) or unset it";
		nvt_err_set(err, EPERM,
			    "shm:%s: the socket directory %s is %s (owner uid %u, mode %04o), not "
			    "a directory of uid %u that only it can write: another user could "
			    "take the name and receive your producers; %s",
			    name, dir, what, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			    (unsigned)geteuid(), fix);
		return -EPERM;
	}
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
	rc = check_dir(name, err);
	if (rc)
		return rc;
	s->lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lsock < 0)
		return sys_err(err, errno, "socket", s);
	if (bind(s->lsock, (struct sockaddr *)&s->addr, sizeof(s->addr))) {
		struct ucred who = {0, 0, 0};
		socklen_t len = sizeof(who);
		struct stat st;
		int probe;
		bool live;

		if (errno != EADDRINUSE)
			return sys_err(err, errno, "bind", s);
		probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		live = probe >= 0 && !connect(probe, (struct sockaddr *)&s->addr, sizeof(s->addr));
		if (live && getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &who, &len))
			who.pid = 0;
		if (probe >= 0)
			close(probe);
		if (live) {
			nvt_err_set(err, EADDRINUSE,
				    "shm %s: another recording listens on this name (uid %u, pid "
				    "%d): give another name, or stop that one",
				    s->addr.sun_path, (unsigned)who.uid, (int)who.pid);
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
	if (chmod(s->addr.sun_path, 0600) || listen(s->lsock, 16))
		return sys_err(err, errno, "listen", s);
	return 0;
}

/* A note on nvtape's side about a connection turned away, the first SHM_NOTES of them. */
static void note(struct shmsrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct shmsrc *s, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (s->notes > SHM_NOTES)
		return;
	if (s->notes++ == SHM_NOTES) {
		nvt_recorder_say(s->r, "shm %s: further connections turned away are not noted",
				 s->addr.sun_path);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	nvt_recorder_say(s->r, "shm %s: %s", s->addr.sun_path, msg);
}

/* Answer a connection that does not get the ring ("busy", "refused", "error": the word, a
 * zero, the reason) and close it. Its message was read: the answer reaches it (closing on an
 * unread message would reset the connection instead). */
static void turn_away(int fd, const char *word, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void turn_away(int fd, const char *word, const char *fmt, ...)
{
	char msg[512];
	size_t w = strlen(word) + 1;
	int n;
	va_list ap;

	memcpy(msg, word, w);
	va_start(ap, fmt);
	n = vsnprintf(msg + w, sizeof(msg) - w, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(msg) - w)
		n = (int)(sizeof(msg) - w - 1);
	ssize_t k = send(fd, msg, w + (size_t)n + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)k;
	close(fd);
}

/* n bytes a client sent, for a message: printable, the rest as \xNN, at most 24 bytes. */
static const char *shown(const uint8_t *b, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && i < 24 && o + 5 < len; i++)
		o += (size_t)snprintf(out + o, len - o,
				      b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' ? "%c" : "\\x%02x",
				      b[i]);
	if (n > 24 && o + 4 < len)
		o += (size_t)snprintf(out + o, len - o, "...");
	out[o] = 0;
	return out;
}

static void peer_of(int fd, struct ucred *c)
{
	socklen_t len = sizeof(*c);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, c, &len)) {
		c->pid = 0;
		c->uid = (uid_t)-1;
	}
}

/* A connection said the producer's hello: the recording's own user (or root) gets the
 * descriptors, unless a producer is attached already. */
static void hello_from(struct shmsrc *s, int fd)
{
	struct ucred cred;
	const char hello[] = NVT_SHM_HELLO;
	int fds[4] = {s->ctl_fd, s->v.mem_fd, s->wake_prod, s->wake_me};
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {(void *)hello, sizeof(hello)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *c;

	peer_of(fd, &cred);
	if (s->sock >= 0) {
		note(s, "turned away a second producer (pid %d): busy", (int)cred.pid);
		turn_away(fd, NVT_SHM_BUSY,
			  "shm %s: busy: another producer (pid %d) is attached to this recording: "
			  "one "
			  "producer per recording; record a second stream under another name",
			  s->addr.sun_path, (int)s->pid);
		return;
	}
	if (cred.uid != geteuid() && cred.uid != 0) {
		note(s, "refused a producer of uid %u (pid %d): only uid %u or root may attach",
		     (unsigned)cred.uid, (int)cred.pid, (unsigned)geteuid());
		turn_away(fd, NVT_SHM_REFUSED,
			  "shm %s: this recording (uid %u) takes producers of its own user or "
			  "root, not uid %u: run the producer as uid %u or root",
			  s->addr.sun_path, (unsigned)geteuid(), (unsigned)cred.uid,
			  (unsigned)geteuid());
		return;
	}
	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(hello)) {
		close(fd); /* it went away: wait for the next one */
		return;
	}
	s->sock = fd;
	s->pid = cred.pid;
}

/* What a waiting connection said, if anything yet: the hello, another message (answered with
 * an error), nothing for SHM_HELLO_NS (the same), or a close (another nvtape probing whether
 * the name is taken: let go without a word). true when it is done with. */
static bool serve(struct shmsrc *s, int fd, uint64_t since, uint64_t now)
{
	uint8_t msg[64];
	char txt[128];
	struct ucred cred;
	ssize_t n = recv(fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		if (now - since < SHM_HELLO_NS)
			return false;
		peer_of(fd, &cred);
		if (!s->silent++)
			nvt_recorder_say(
				s->r,
				"shm %s: a connection (pid %d, uid %u) said nothing within "
				"1 s: closed (others that do are closed without a note)",
				s->addr.sun_path, (int)cred.pid, (unsigned)cred.uid);
		turn_away(fd, NVT_SHM_ERROR,
			  "shm %s: no hello within 1 s: a producer sends \"%s\" at once "
			  "(include/nvtape/producer.h, docs/shm.md)",
			  s->addr.sun_path, NVT_SHM_ATTACH);
		return true;
	}
	if (n <= 0) {
		close(fd);
		return true;
	}
	if (n == (ssize_t)sizeof(NVT_SHM_ATTACH) && !memcmp(msg, NVT_SHM_ATTACH, (size_t)n)) {
		hello_from(s, fd);
		return true;
	}
	peer_of(fd, &cred);
	shown(msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg), txt, sizeof(txt));
	note(s,
	     "a connection (pid %d, uid %u) sent %zd bytes \"%s\", not a producer's hello: "
	     "told so and closed",
	     (int)cred.pid, (unsigned)cred.uid, n, txt);
	turn_away(fd, NVT_SHM_ERROR,
		  "shm %s: expected the hello \"%s\" and its zero (protocol %u, "
		  "include/nvtape/producer.h, docs/shm.md), got %zd bytes \"%s\": a producer "
		  "of another version, or not a producer",
		  s->addr.sun_path, NVT_SHM_ATTACH, NVT_SHM_VERSION, n, txt);
	return true;
}

/* Take new connections and what the waiting ones said; nothing here waits. A connection
 * that sends nothing holds only its own slot for at most SHM_HELLO_NS; when all SHM_PENDING
 * slots are taken the one waiting longest is turned away. */
static void serve_clients(struct shmsrc *s)
{
	uint64_t now = nvt_mono_ns();
	int fd;

	while ((fd = accept4(s->lsock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		if (s->npend == SHM_PENDING) {
			turn_away(s->pend[0].fd, NVT_SHM_ERROR,
				  "shm %s: %u connections wait for their hello: this one waited "
				  "longest and is closed",
				  s->addr.sun_path, SHM_PENDING);
			memmove(s->pend, s->pend + 1, sizeof(s->pend[0]) * (SHM_PENDING - 1));
			s->npend--;
		}
		s->pend[s->npend].fd = fd;
		s->pend[s->npend].since = now;
		s->npend++;
	}
	for (unsigned i = 0; i < s->npend;) {
		if (serve(s, s->pend[i].fd, s->pend[i].since, now)) {
			memmove(s->pend + i, s->pend + i + 1,
				sizeof(s->pend[0]) * (s->npend - i - 1));
			s->npend--;
		} else {
			i++;
		}
	}
}

/* The descriptors a wait watches: the listening socket and the waiting connections after
 * the first `first` entries of w. Returns the count. */
static nfds_t watch_clients(struct shmsrc *s, struct pollfd *w, nfds_t first)
{
	w[first].fd = s->lsock;
	w[first].events = POLLIN;
	for (unsigned i = 0; i < s->npend; i++) {
		w[first + 1 + i].fd = s->pend[i].fd;
		w[first + 1 + i].events = POLLIN;
	}
	return first + 1 + s->npend;
}

static int follow(struct shmsrc *s, struct nvt_err *err);

/* The producer's end of the socket: it says nothing after its hello. 0 while quiet, 1 when it
 * closed, -EPROTO (err set) when it sent something (what it committed before is taken). */
static int producer_socket(struct shmsrc *s, struct nvt_err *err)
{
	struct pollfd p = {.fd = s->sock, .events = POLLIN | POLLRDHUP};
	uint8_t msg[64];
	char txt[128];
	ssize_t n;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	n = recv(s->sock, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return p.revents & (POLLHUP | POLLRDHUP | POLLERR) ? 1 : 0;
	if (n <= 0)
		return 1;
	int rc = follow(s, err); /* what it committed before */
	if (rc < 0)
		return rc;
	nvt_err_set(err, EPROTO,
		    "shm %s: the producer (pid %d) sent %zd bytes on the socket (\"%s\") after "
		    "its hello, where the protocol has no message (docs/shm.md): a producer "
		    "that does not follow include/nvtape/producer.h; the recording keeps the "
		    "%llu bytes it committed",
		    s->addr.sun_path, (int)s->pid, n,
		    shown(msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg), txt, sizeof(txt)),
		    (unsigned long long)s->cons);
	return -EPROTO;
}

/* The producer can no longer take the memory from under the recording: no hole punched
 * (fallocate PUNCH_HOLE, madvise MADV_REMOVE) and no new writable mapping once it has its
 * own, F_SEAL_FUTURE_WRITE on both memfds (its mapping keeps writing). Done at its first
 * commit, before the recording takes any byte. A hole punched before that left nvtape's own
 * mapping without the page (the I/O would write the page the kernel pinned, not the one the
 * producer fills): with the ring in hugepages or locked memory every page stays mapped, so a
 * page no longer there was taken, and the producer is refused. */
static int seal_memory(struct shmsrc *s, struct nvt_err *err)
{
	int fds[2] = {s->ctl_fd, s->v.mem_fd};
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages, gone = 0;
	int pm;

	s->sealed = true;
	for (int i = 0; i < 2; i++) {
		if (fcntl(fds[i], F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)) {
			int e = errno, seals = fcntl(fds[i], F_GET_SEALS);
			if (seals >= 0 && (seals & F_SEAL_FUTURE_WRITE))
				continue; /* it sealed them itself */
			nvt_err_set(
				err, e == EINVAL ? EINVAL : EPROTO,
				"shm %s: cannot seal the %s against holes (F_SEAL_FUTURE_WRITE): "
				"%s%s",
				s->addr.sun_path, i ? "ring" : "control page", strerror(e),
				e == EINVAL ? " (Linux 5.1 or later has it)"
					    : ": the producer sealed it first; a producer that "
					      "does not follow include/nvtape/producer.h");
			return e == EINVAL ? -EINVAL : -EPROTO;
		}
	}
	if (!s->v.hugetlb && !s->v.locked)
		return 0; /* the kernel may swap such pages out: no telling */
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || page <= 0)
		return pm < 0 ? 0 : (close(pm), 0);
	pages = s->ring_bytes / (uint64_t)page;
	for (uint64_t k = 0; k < pages;) {
		uint64_t e[512];
		size_t n = pages - k < 512 ? (size_t)(pages - k) : 512;
		off_t at = (off_t)(((uintptr_t)s->v.mem / (uint64_t)page + k) * sizeof(e[0]));
		ssize_t got = pread(pm, e, n * sizeof(e[0]), at);

		if (got <= 0)
			break;
		n = (size_t)got / sizeof(e[0]);
		for (size_t i = 0; i < n; i++)
			gone += !(e[i] >> 62); /* neither present nor moving (a migration entry) */
		k += n;
	}
	close(pm);
	if (!gone)
		return 0;
	nvt_err_set(err, EPROTO,
		    "shm %s: the producer (pid %d) released %llu of the ring's %llu pages before "
		    "its first commit (fallocate PUNCH_HOLE or madvise MADV_REMOVE): the drive "
		    "would be handed other pages than those it fills; a producer that does not "
		    "follow include/nvtape/producer.h",
		    s->addr.sun_path, (int)s->pid, (unsigned long long)gone,
		    (unsigned long long)pages);
	return -EPROTO;
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
	if (pos > s->cons && !s->sealed) {
		rc = seal_memory(s, err);
		if (rc)
			return rc;
	}
	for (; tail != head; tail++) {
		struct nvt_shm_drop d = c->drops[tail % NVT_SHM_DROPS];
		/* a loss logged late (the log was full) counts where the data is now */
		rc = commit_to(s, d.pos > s->cons && d.pos <= pos ? d.pos : s->cons, err);
		if (rc)
			return rc;
		if (s->logged > UINT64_MAX - d.units || nvt_recorder_drop(s->r, d.units)) {
			nvt_err_set(
				err, EPROTO,
				"shm %s: the producer (pid %d) logged a drop of %llu units, "
				"which takes the drop count past 2^64: a producer that does not "
				"follow include/nvtape/producer.h; the recording keeps what came "
				"before",
				s->addr.sun_path, (int)s->pid, (unsigned long long)d.units);
			return -EPROTO;
		}
		s->logged += d.units;
		s->tail = tail + 1;
		atomic_store_explicit(&c->drop_tail, s->tail, memory_order_release);
	}
	return commit_to(s, pos, err);
}

/* Sleep until the producer or the drive moves, a socket says something, or SHM_WAIT_MS. */
static void sleep_a_while(struct shmsrc *s, uint64_t pos, uint64_t head)
{
	struct nvt_shm_ctl *c = s->ctl;
	struct pollfd w[3 + SHM_PENDING] = {{.fd = s->wake_me, .events = POLLIN},
					    {.fd = s->sock, .events = POLLIN | POLLRDHUP}};
	nfds_t n = watch_clients(s, w, 2);
	eventfd_t v;

	atomic_store(&c->cons_sleep, 1);
	if (atomic_load(&c->pos) == pos && atomic_load(&c->drop_head) == head &&
	    atomic_load(&c->ended) == NVT_SHM_OPEN && poll(w, n, SHM_WAIT_MS) > 0 &&
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

static int shm_loop(struct shmsrc *s, struct nvt_err *err)
{
	struct nvt_shm_ctl *c = s->ctl;
	uint64_t stop_at = 0;
	int rc;

	/* the producer may fill the whole ring from the start */
	move_limit(s);
	while (s->sock < 0) {
		struct pollfd w[1 + SHM_PENDING];
		if (nvt_recorder_stopping(s->r))
			return 0; /* stopped before a producer came: an empty recording */
		poll(w, watch_clients(s, w, 0), 100);
		serve_clients(s);
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
			/* the producer closed the stream and all of it is in (and said nothing) */
			if ((rc = producer_socket(s, err)) < 0)
				return rc;
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
		if ((rc = producer_socket(s, err)) < 0)
			return rc;
		if (!ended && rc) {
			s->gone = true;
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
		serve_clients(s); /* a second one is told "busy" */
		sleep_a_while(s, pos, head);
	}
}

/* The producer's socket after the source ended: the recording's outcome goes to the producer
 * once it is final (NVT_SHM_END), from nvt_recorder_close(). */
struct farewell {
	int sock;
};

static void tell_outcome(void *arg, int rc, const struct nvt_record_result *res)
{
	struct farewell *f = arg;
	char msg[64 + sizeof(res->err.msg)];
	int n = snprintf(msg, sizeof(msg), "%s %d %llu", NVT_SHM_END, rc < 0 ? -rc : 0,
			 (unsigned long long)res->rec.data_bytes);
	size_t len = (size_t)n + 1;

	len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s", rc < 0 ? res->err.msg : "");
	if (len >= sizeof(msg))
		len = sizeof(msg) - 1;
	ssize_t k = send(f->sock, msg, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)k;
	close(f->sock);
	free(f);
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
	if (s.sock >= 0 && !s.gone) { /* and how it ended, once that is known */
		struct farewell *f = malloc(sizeof(*f));
		if (f) {
			f->sock = s.sock;
			s.sock = -1;
			nvt_recorder_at_close(r, tell_outcome, f);
		}
	}
	for (unsigned i = 0; i < s.npend; i++)
		turn_away(s.pend[i].fd, NVT_SHM_ERROR, "shm %s: the recording ended",
			  s.addr.sun_path);
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
			      "shm:%s: not a usable name (a word: its socket is nvtape-NAME.sock "
			      "in /run/nvtape for root, else in $XDG_RUNTIME_DIR or /tmp/"
			      "nvtape-UID; or a socket path of at most %zu characters)",
			      a->arg, sizeof(addr.sun_path) - 1);
		return -EINVAL;
	}
	return check_dir(a->arg, err); /* before the recording's file is made */
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
