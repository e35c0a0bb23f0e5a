/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the shm source's protocol, nvtape's side (stream/source_shm.c), over its real
 * socket and shared memory. nvt_record runs the shm source on a thread; the harness is its
 * producer, driven by the input: 4 bytes of set-up (ring chunks, a size or none, how the first
 * message goes, how the stream ends), then 4-byte steps. Steps that follow
 * include/nvtape/producer.h: commit data, log drops, pause. Steps that do not: a position that
 * goes back or past the limit, a drop log entry anywhere with any count, the log head jumped,
 * nvtape's own fields of the page overwritten, the dropped counter set, bytes on the socket,
 * a second producer, a stray client. The stream ends closed, with the producer dying, or with
 * a stop (Ctrl-C). Whatever the steps: the hello and the control page are what producer.h
 * says; a second producer is told "busy"; the recording ends (a message when it fails) complete
 * and consistent (drop events in order inside the data, summing to the drop count); it holds
 * the producer's bytes and never a byte it did not commit; and when the producer kept to the
 * protocol, it holds every byte committed and every unit dropped, and a stream the producer
 * closed ends without an error. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "format/index.h"
#include "fuzz.h"
#include "nvtape/producer.h"
#include "nvtape/record.h"

#define SETUP     4
#define MAX_STEPS 512
#define CHUNK     4096u
#define WAIT_MS   3000 /* the longest the harness waits for nvtape: far longer than it needs */

/* the recording, on its thread */
struct rec_run {
	struct nvt_record_opts o;
	struct nvt_record_result res;
	int rc;
	atomic_bool done;
};

static volatile sig_atomic_t stop_flag;

static void *record_thread(void *arg)
{
	struct rec_run *r = arg;

	r->rc = nvt_record(&r->o, &r->res);
	atomic_store(&r->done, true);
	return NULL;
}

static void quiet(const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
}

static uint8_t byte_at(uint64_t p, uint8_t seed)
{
	return (uint8_t)(p * 131 + (p >> 9) * 7 + seed);
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* the producer */
struct prod {
	const char *sock_path;
	int sock, wake_me, wake_nv;
	struct nvt_shm_ctl *ctl;
	uint8_t *ring;
	uint64_t map_bytes, ring_bytes, end_bytes;
	uint64_t cursor; /* bytes written and published */
	uint64_t limit;  /* the highest limit nvtape published (the page's may be one of ours) */
	uint64_t units;  /* dropped, as the producer counts them */
	uint8_t seed;
	/* what the steps did that producer.h does not */
	bool bad_pos, bad_drops, bad_end;
	bool said; /* bytes on the socket after the attach: nvtape may end the stream for them */
	struct rec_run *rec;
};

static int connect_to(const char *path, struct rec_run *rec)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	uint64_t t0 = now_ms();

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		FUZZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		close(fd);
		if (atomic_load(&rec->done) || now_ms() - t0 > WAIT_MS)
			return -1;
		usleep(1000);
	}
}

/* nvtape's answer to a first message: 1 attached (descriptors taken), 0 not. */
static int answer(struct prod *p, int fd)
{
	char msg[64] = {0};
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {msg, sizeof(msg) - 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	struct cmsghdr *c;
	int fds[8], nfd = 0;
	ssize_t n;

	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	if (poll(&pf, 1, WAIT_MS) <= 0)
		return 0;
	n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return 0;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
		nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(fds, CMSG_DATA(c), (size_t)nfd * sizeof(int));
	}
	if (!nfd) {
		FUZZ_CHECK(strcmp(msg, NVT_SHM_HELLO), "a hello without its descriptors");
		return 0;
	}
	FUZZ_CHECK(!strcmp(msg, NVT_SHM_HELLO) && n == sizeof(NVT_SHM_HELLO) && nfd == 4 &&
			   !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)),
		   "descriptors with the answer \"%.20s\" (%d of them)", msg, nfd);
	p->ctl = mmap(NULL, sizeof(*p->ctl), PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	FUZZ_CHECK(p->ctl != MAP_FAILED, "the control page does not map: %s", strerror(errno));
	FUZZ_CHECK(p->ctl->magic == NVT_SHM_MAGIC && p->ctl->version == NVT_SHM_VERSION &&
			   p->ctl->unit_bytes == 1 && p->ctl->chunk_bytes == CHUNK &&
			   p->ctl->nchunks == p->rec->o.chunks &&
			   p->ctl->ring_bytes == (uint64_t)CHUNK * p->ctl->nchunks &&
			   p->ctl->map_bytes >= p->ctl->ring_bytes &&
			   p->ctl->end_bytes == p->rec->o.size_bytes,
		   "the control page is not what producer.h says");
	p->limit = atomic_load_explicit(&p->ctl->limit, memory_order_acquire);
	p->ring_bytes = p->ctl->ring_bytes;
	p->map_bytes = p->ctl->map_bytes;
	p->end_bytes = p->ctl->end_bytes;
	p->ring = mmap(NULL, p->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	FUZZ_CHECK(p->ring != MAP_FAILED, "the ring does not map: %s", strerror(errno));
	close(fds[0]);
	close(fds[1]);
	p->wake_me = fds[2];
	p->wake_nv = fds[3];
	p->sock = fd;
	return 1;
}

static void wake_nvtape(struct prod *p)
{
	eventfd_write(p->wake_nv, 1);
}

static bool nvtape_gone(struct prod *p)
{
	struct pollfd pf = {.fd = p->sock, .events = POLLIN};
	return atomic_load(&p->rec->done) ||
	       atomic_load_explicit(&p->ctl->state, memory_order_acquire) != NVT_SHM_RUN ||
	       (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR)));
}

/* How far the producer may write, waiting (bounded) for nvtape to free room when it has
 * none; 0 when nvtape is stopping or gone. */
static uint64_t room(struct prod *p)
{
	uint64_t t0 = now_ms();

	for (;;) {
		uint64_t limit = atomic_load_explicit(&p->ctl->limit, memory_order_acquire);
		if (limit > p->limit)
			p->limit = limit; /* ours are lower */
		if (p->end_bytes && p->cursor >= p->end_bytes)
			return 0;
		if (p->limit > p->cursor)
			return p->limit - p->cursor;
		if (nvtape_gone(p) || now_ms() - t0 > WAIT_MS)
			return 0;
		atomic_store(&p->ctl->prod_sleep, 1);
		if (atomic_load(&p->ctl->limit) == limit) { /* nvtape wakes it when that moves */
			struct pollfd pf = {.fd = p->wake_me, .events = POLLIN};
			eventfd_t v;
			if (poll(&pf, 1, 20) > 0)
				eventfd_read(p->wake_me, &v);
		}
		atomic_store(&p->ctl->prod_sleep, 0);
	}
}

static void commit(struct prod *p, uint64_t n)
{
	uint64_t r = room(p);

	if (n > r)
		n = r;
	for (uint64_t i = 0; i < n; i++)
		p->ring[(p->cursor + i) % p->ring_bytes] = byte_at(p->cursor + i, p->seed);
	p->cursor += n;
	atomic_store_explicit(&p->ctl->pos, p->cursor, memory_order_release);
	wake_nvtape(p);
}

static void log_drop(struct prod *p, uint64_t pos, uint64_t units)
{
	uint64_t head = atomic_load_explicit(&p->ctl->drop_head, memory_order_relaxed);

	p->ctl->drops[head % NVT_SHM_DROPS].pos = pos;
	p->ctl->drops[head % NVT_SHM_DROPS].units = units;
	atomic_store_explicit(&p->ctl->drop_head, head + 1, memory_order_release);
	wake_nvtape(p);
}

/* units lost at the position reached, as producer.h counts them: in the log when it has room,
 * in the dropped counter always */
static void drop(struct prod *p, uint64_t units)
{
	uint64_t head = atomic_load_explicit(&p->ctl->drop_head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&p->ctl->drop_tail, memory_order_acquire);

	p->units += units;
	atomic_fetch_add_explicit(&p->ctl->dropped, units, memory_order_relaxed);
	if (head - tail < NVT_SHM_DROPS)
		log_drop(p, p->cursor, units);
}

static uint64_t u64_of(const uint8_t *s)
{
	return (uint64_t)s[1] << 56 | (uint64_t)s[2] << 40 | (uint64_t)s[3] << 3;
}

/* Another connection: a second producer (told "busy"), or a stray client with bytes. */
static void other_client(struct prod *p, const uint8_t *s)
{
	int fd = connect_to(p->sock_path, p->rec);

	if (fd < 0)
		return;
	if (s[1] & 1) {
		char junk[3] = {(char)s[1], (char)s[2], (char)s[3]};
		ssize_t k = send(fd, junk, 1 + s[2] % 3, MSG_NOSIGNAL);
		(void)k;
	} else {
		char msg[16] = {0};
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t k = send(fd, NVT_SHM_ATTACH, sizeof(NVT_SHM_ATTACH), MSG_NOSIGNAL);
		(void)k;
		if (!nvtape_gone(p) && poll(&pf, 1, WAIT_MS) > 0 &&
		    recv(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT) > 0)
			FUZZ_CHECK(!strcmp(msg, "busy"), "a second producer is told \"%s\"", msg);
	}
	close(fd);
}

static void step(struct prod *p, const uint8_t *s)
{
	uint64_t head, v;

	switch (s[0] % 16) {
	case 0:
	case 1:
	case 2:
	case 3: /* data */
		commit(p, ((uint64_t)s[1] | (uint64_t)(s[2] & 0x3f) << 8) + (s[0] >> 4));
		break;
	case 4:
	case 5: /* units lost */
		drop(p, (uint64_t)s[1] + 1 + ((uint64_t)s[2] << 8));
		break;
	case 6: /* a pause: nvtape catches up */
		usleep(s[1] % 4 * 500);
		break;
	case 7: /* a position that goes back, or past any limit nvtape can have published */
		v = s[1] & 1 ? p->cursor - 1 - s[2] % (p->cursor ? p->cursor : 1)
			     : p->limit + p->ring_bytes + 1 + s[2];
		if (s[1] & 1 && !p->cursor)
			break;
		p->bad_pos = true;
		atomic_store_explicit(&p->ctl->pos, v, memory_order_release);
		wake_nvtape(p);
		if (s[3] & 1) { /* and back to the truth */
			usleep(s[3] * 10u);
			atomic_store_explicit(&p->ctl->pos, p->cursor, memory_order_release);
		}
		break;
	case 8: /* a log entry anywhere, of any count */
		p->bad_drops = true;
		log_drop(p, s[1] & 1 ? u64_of(s) : p->cursor + s[2] - 128, u64_of(s) | s[3]);
		break;
	case 9: /* the log head jumped past what the log holds */
		p->bad_drops = true;
		head = atomic_load(&p->ctl->drop_head);
		atomic_store_explicit(&p->ctl->drop_head, head + NVT_SHM_DROPS + 1 + s[1],
				      memory_order_release);
		wake_nvtape(p);
		break;
	case 10: /* nvtape's own fields: the limit lower (the harness's view stays safe), the
		  * log tail, the state */
		if (s[1] % 3 == 0)
			atomic_store(&p->ctl->limit, p->cursor - p->cursor % (s[2] + 1u));
		else if (s[1] % 3 == 1) {
			p->bad_drops = true; /* the harness's own log keeping reads the tail */
			atomic_store(&p->ctl->drop_tail, u64_of(s));
		} else {
			atomic_store(&p->ctl->state, (uint32_t)s[2] << 1);
		}
		break;
	case 11: /* the dropped counter set to anything */
		p->bad_drops = true;
		atomic_store(&p->ctl->dropped, u64_of(s));
		break;
	case 12: { /* bytes on the socket */
		char b[3] = {(char)s[1], (char)s[2], (char)s[3]};
		p->said |= send(p->sock, b, 1 + s[1] % 3, MSG_NOSIGNAL | MSG_DONTWAIT) > 0;
		break;
	}
	case 13:
		other_client(p, s);
		break;
	case 14: /* the stream closed, and then written on */
		p->bad_end = true;
		atomic_store_explicit(&p->ctl->ended, s[1] & 1 ? NVT_SHM_CLOSED : s[2],
				      memory_order_release);
		wake_nvtape(p);
		break;
	default: /* a spurious wake-up */
		wake_nvtape(p);
	}
}

/* The first connection's first message (nothing, bytes of the input, or the attach), until
 * one is attached. 0, or -1 when nvtape took none. */
static int attach(struct prod *p, const uint8_t *first, size_t n, unsigned how)
{
	for (int tries = 0; tries < 3; tries++, how = 0) {
		int fd = connect_to(p->sock_path, p->rec);
		ssize_t k = 0;
		if (fd < 0)
			return -1;
		if (how == 1)
			k = send(fd, first, n, MSG_NOSIGNAL);
		else if (how == 0)
			k = send(fd, NVT_SHM_ATTACH, sizeof(NVT_SHM_ATTACH), MSG_NOSIGNAL);
		(void)k;
		if (how != 2 && answer(p, fd))
			return 0;
		close(fd);
	}
	return -1;
}

static void check(const char *path, const struct prod *p, unsigned end, bool attached)
{
	const struct nvt_record_result *res = &p->rec->res;
	struct nvt_layout l;
	struct nvt_recording rec;
	struct nvt_index ix;
	struct nvt_err err = {0};
	uint64_t sum;
	size_t n;
	uint8_t *file = fuzz_read_file(path, &n);
	bool kept_to_it = !p->bad_pos && !p->bad_drops && !p->bad_end && !p->said;

	if (p->rec->rc)
		FUZZ_CHECK(p->rec->rc < 0 && res->err.code && res->err.msg[0],
			   "a failed recording says why");
	if (!file) { /* refused before it began, or failed before its first byte (no file left) */
		FUZZ_CHECK(p->rec->rc && (!attached || !kept_to_it || !p->cursor),
			   "no recording, of a producer that attached and committed %llu bytes",
			   (unsigned long long)p->cursor);
		return;
	}
	nvt_layout_single(&l, path);
	FUZZ_CHECK(nvt_recording_open(&l, &rec, &err) == 0, "the recording does not open: %s",
		   err.msg);
	fuzz_check_open(&rec, n);
	FUZZ_CHECK(rec.complete, "the recording is incomplete (%s)", res->err.msg);
	FUZZ_CHECK(rec.data_bytes <= p->cursor,
		   "%llu bytes recorded, the producer committed %llu (%s)",
		   (unsigned long long)rec.data_bytes, (unsigned long long)p->cursor, res->err.msg);
	for (uint64_t i = 0; i < rec.data_bytes; i++)
		FUZZ_CHECK(file[rec.data_offset + i] == byte_at(i, p->seed),
			   "byte %llu of the recording is not the producer's",
			   (unsigned long long)i);
	FUZZ_CHECK(nvt_recording_read_index_all(&l, &rec, &ix, &err) == 0,
		   "the index does not read: %s", err.msg);
	sum = fuzz_drop_events_sum(&ix, rec.data_bytes);
	FUZZ_CHECK(sum == rec.drop_count, "%llu units in the drop events, %llu in the header",
		   (unsigned long long)sum, (unsigned long long)rec.drop_count);
	nvt_index_clear(&ix);
	if (!p->bad_drops)
		FUZZ_CHECK(rec.drop_count <= p->units, "%llu units dropped, the producer lost %llu",
			   (unsigned long long)rec.drop_count, (unsigned long long)p->units);
	if (attached && end != 1) /* whatever it did, the producer never went away */
		FUZZ_CHECK(p->rec->rc != -EPIPE, "a producer still there is said to be gone: %s",
			   res->err.msg);
	if (attached && kept_to_it) { /* every byte committed; closed or died: every unit */
		uint64_t want = p->end_bytes && p->cursor > p->end_bytes ? p->end_bytes : p->cursor;
		bool at_end = p->end_bytes && p->cursor >= p->end_bytes;
		FUZZ_CHECK(rec.data_bytes == want,
			   "%llu bytes recorded of the %llu the producer committed (%s)",
			   (unsigned long long)rec.data_bytes, (unsigned long long)want,
			   res->err.msg);
		if (!at_end && end != 2) /* lost after a stop is not the recording's */
			FUZZ_CHECK(rec.drop_count == p->units,
				   "%llu units dropped, the producer lost %llu (%s)",
				   (unsigned long long)rec.drop_count, (unsigned long long)p->units,
				   res->err.msg);
		if (end != 1)
			FUZZ_CHECK(p->rec->rc == 0,
				   "a stream the producer closed ended with an error: %s",
				   res->err.msg);
		else if (!at_end)
			FUZZ_CHECK(p->rec->rc != 0, "a producer that died is not reported");
	}
	free(file);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_run *rec = calloc(1, sizeof(*rec));
	struct prod p = {.sock = -1, .wake_me = -1, .wake_nv = -1, .rec = rec};
	const char *out = fuzz_path("shm.nvt");
	char source[700];
	unsigned end;
	uint64_t most = 0;
	bool attached;
	pthread_t th;

	FUZZ_CHECK(rec, "out of memory");
	if (size < SETUP || (size - SETUP) / 4 > MAX_STEPS) {
		free(rec);
		return -1;
	}
	p.sock_path = fuzz_path("shm.sock");
	p.seed = data[3];
	end = data[1] % 3; /* closed, died, stopped */
	for (size_t at = SETUP; at + 4 <= size; at += 4)
		most += (uint64_t)data[at + 1] + ((uint64_t)(data[at + 2] & 0x3f) << 8) + 15;
	unlink(out);
	snprintf(source, sizeof(source), "shm:%s", p.sock_path);
	nvt_record_opts_init(&rec->o);
	rec->o.path = out;
	rec->o.source = source;
	rec->o.chunk_bytes = CHUNK;
	rec->o.chunks = 2 + data[0] % 7;
	rec->o.qd = 2;
	rec->o.stats_ns = 0;
	rec->o.notice = quiet;
	/* a size the stream may reach, or one it never does (an open-ended recording would
	 * reserve a GiB ahead, in memory on tmpfs) */
	rec->o.size_bytes = data[0] & 0x80 ? (uint64_t)data[2] * 64 + 1 : most + 4096;
	rec->o.interrupt = &stop_flag;
	stop_flag = 0;
	FUZZ_CHECK(pthread_create(&th, NULL, record_thread, rec) == 0, "no thread");
	attached = attach(&p, data + SETUP, size - SETUP < 24 ? size - SETUP : 24,
			  data[1] / 3 % 3) == 0;
	if (attached) {
		for (size_t at = SETUP; at + 4 <= size && !nvtape_gone(&p); at += 4)
			step(&p, data + at);
		if (end == 2) { /* Ctrl-C: the producer is told to stop, and closes */
			uint64_t t0 = now_ms();
			__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
			while (atomic_load(&p.ctl->state) == NVT_SHM_RUN &&
			       !atomic_load(&rec->done) && now_ms() - t0 < WAIT_MS)
				usleep(1000);
		}
		if (end != 1) {
			atomic_store_explicit(&p.ctl->ended, NVT_SHM_CLOSED, memory_order_release);
			wake_nvtape(&p);
		}
		close(p.sock);
		munmap(p.ring, p.map_bytes);
		munmap(p.ctl, sizeof(*p.ctl));
		close(p.wake_me);
		close(p.wake_nv);
	} else {
		__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	}
	pthread_join(th, NULL);
	check(out, &p, end, attached);
	free(rec);
	return 0;
}
