/* SPDX-License-Identifier: MIT */
/* A user-space stand-in for the FPGA Drive Recorder's driver, for host tests of nvtape's fdrec
 * source (LD_PRELOAD): open() of $FDREC_STUB_DEV gives a device that answers the driver's
 * record ioctls (src/lib/stream/fdrec_uapi.h) with the semantics its docs/source/driver.md
 * documents: one opener (EBUSY), GET_INFO, REGISTER_BUFS (a pointer to the addresses; 2..64
 * buffers, 2 MiB aligned, a 2 MiB multiple up to 62 MiB), START (soft reset: counters
 * cleared, generator from seq 0, first_seq 0, pkt_len, start_time_ns returned), WAIT_FILLED
 * (fill order; the FIFO's drop counter at each completion), RELEASE, STOP (uncollected buffers
 * discarded), GET_STATS, SET_RATE (Q1.31 increments of the source clock, the programmed rate
 * returned), poll() (POLLIN with a filled buffer waiting); and playback: a PLAY set, PLAY_START
 * (FDREC_PLAY_CHECK resets the checker: its expected seq is the first beat's), PLAY_SUBMIT
 * (submission order; the buffer is read and checked at once: beats whose upper half is not
 * ~lower and backward jumps are errors, forward jumps gaps), PLAY_WAIT_DONE, PLAY_STOP and
 * GET_PLAY_STATS with the checker's counters. One opener across processes (a lock on the
 * $FDREC_STUB_DEV file). A thread plays the generator at the
 * programmed rate; with no buffer queued its beats are dropped and counted (a FIFO of depth 0).
 * Knobs: FDREC_STUB_RATE (the generator's rate before any SET_RATE, 50 MB/s), FDREC_STUB_API
 * (api_version reported), FDREC_STUB_CAPS, FDREC_STUB_HOLD=K:MS (after the K-th buffer no buffer is
 * queued for MS ms: a drop there), FDREC_STUB_CORRUPT=K (the 100th beat of the K-th buffer is
 * not the pattern), FDREC_STUB_SHORT=K (the K-th buffer is returned 16 bytes short, without
 * FDREC_FILLED_SHORT), FDREC_STUB_STOP_FAILS (PLAY_STOP answers EIO), FDREC_STUB_SKIP=K (11 beats
 * of the K-th buffer lost after the FIFO, uncounted). Where the driver's docs
 * leave the behaviour open, this guesses
 * the simplest (no FIFO, no DMA restart gap). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "../../src/lib/stream/fdrec_uapi.h"

#define CLK_HZ     250000000ull
#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

enum { B_FREE, B_QUEUED, B_READY, B_USER };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int fd;   /* the eventfd standing for the device, -1 closed */
	int lock; /* the open device's lock file */
	unsigned dir;
	bool playing, chk_on, chk_first;
	uint64_t blen[FDREC_MAX_BUFS];
	struct fdrec_chk_stats chk;
	bool running, quit, thread;
	uint64_t rate, seq, drops, beats_in, beats_out, fill_seq, bytes_filled;
	uint64_t buf_size;
	unsigned n, cur, pos; /* cur: buffer being filled (n: none), pos its beats */
	uint64_t addr[FDREC_MAX_BUFS];
	int state[FDREC_MAX_BUFS];
	unsigned q[FDREC_MAX_BUFS], qh, qn;  /* queued, fill order */
	unsigned rq[FDREC_MAX_BUFS], rh, rn; /* ready */
	uint64_t rdrop[FDREC_MAX_BUFS], rseq[FDREC_MAX_BUFS];
	uint64_t hold_after, hold_ns, hold_until;
	uint64_t corrupt_buf; /* FDREC_STUB_CORRUPT: this buffer's 100th beat is damaged */
	uint64_t short_buf; /* FDREC_STUB_SHORT: this buffer says it holds 16 bytes less, no flag */
	uint64_t
		skip_buf; /* FDREC_STUB_SKIP: 11 beats lost after the FIFO at this buffer's 100th */
	bool stop_fails;  /* FDREC_STUB_STOP_FAILS: PLAY_STOP answers EIO */
} D = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .fd = -1, .lock = -1};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void signal_ready(void)
{
	uint64_t one = 1;
	if (write(D.fd, &one, sizeof(one)) < 0)
		return;
}

/* one beat from the generator (mu held) */
static void beat(void)
{
	uint64_t s = D.seq++;
	D.beats_in++;
	if (D.cur == D.n) {
		if (!D.qn || (D.hold_until && now_ns(CLOCK_MONOTONIC) < D.hold_until)) {
			D.drops++;
			return;
		}
		D.cur = D.q[D.qh];
		D.qh = (D.qh + 1) % FDREC_MAX_BUFS;
		D.qn--;
		D.pos = 0;
	}
	uint64_t *p = (uint64_t *)(uintptr_t)(D.addr[D.cur] + (uint64_t)D.pos * 16);
	p[0] = s;
	p[1] = ~s;
	if (D.corrupt_buf && D.fill_seq + 1 == D.corrupt_buf && D.pos == 100)
		p[0] = s ^ 0x5a5a000000000000ull; /* not the pattern, and far "ahead" */
	if (D.skip_buf && D.fill_seq + 1 == D.skip_buf && D.pos == 100) {
		D.seq += 10; /* lost between the FIFO and the DMA: no drop counted */
		s = D.seq++;
		p[0] = s;
		p[1] = ~s;
	}
	D.beats_out++;
	if (++D.pos == D.buf_size / 16) {
		unsigned i = (D.rh + D.rn) % FDREC_MAX_BUFS;
		D.rq[i] = D.cur;
		D.rdrop[D.cur] = D.drops;
		D.rseq[D.cur] = D.fill_seq++;
		D.bytes_filled += D.buf_size;
		D.state[D.cur] = B_READY;
		D.rn++;
		D.cur = D.n;
		if (D.hold_after && D.fill_seq == D.hold_after)
			D.hold_until = now_ns(CLOCK_MONOTONIC) + D.hold_ns;
		signal_ready();
		pthread_cond_broadcast(&D.cv);
	}
}

static void *gen(void *arg)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), done = 0;
	(void)arg;
	pthread_mutex_lock(&D.mu);
	while (!D.quit) {
		uint64_t due = (uint64_t)((unsigned __int128)D.rate *
					  (now_ns(CLOCK_MONOTONIC) - t0) / 1000000000ull / 16);
		while (done < due && !D.quit) {
			beat();
			done++;
		}
		pthread_mutex_unlock(&D.mu);
		usleep(500);
		pthread_mutex_lock(&D.mu);
	}
	pthread_mutex_unlock(&D.mu);
	return NULL;
}

static void stop(void)
{
	if (D.thread) {
		D.quit = true;
		pthread_mutex_unlock(&D.mu);
		pthread_join(D.th, NULL);
		pthread_mutex_lock(&D.mu);
		D.thread = false;
	}
	D.running = false;
	for (unsigned i = 0; i < D.n; i++)
		if (D.state[i] != B_USER)
			D.state[i] = B_FREE;
	D.qn = D.rn = 0;
	D.cur = D.n;
	uint64_t v;
	if (read(D.fd, &v, sizeof(v)) < 0)
		v = 0;
	pthread_cond_broadcast(&D.cv);
}

static void stats(struct fdrec_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->drop_count = D.drops;
	st->beats_in = D.beats_in;
	st->beats_out = D.beats_out;
	st->seq_next = D.seq;
	st->fifo_depth = 4096;
	st->overflow = D.drops != 0;
	st->running = D.running;
	st->bufs_filled = D.fill_seq;
	st->bytes_filled = D.bytes_filled;
	for (unsigned i = 0; i < D.n; i++) {
		st->bufs_dma += D.state[i] == B_QUEUED;
		st->bufs_ready += D.state[i] == B_READY;
		st->bufs_user += D.state[i] == B_USER;
	}
}

/* the checker: one beat played */
static void check_beat(const uint64_t *b)
{
	struct fdrec_chk_stats *c = &D.chk;
	c->beats++;
	if (b[1] != ~b[0]) {
		c->errors++;
		return;
	}
	if (D.chk_first) {
		D.chk_first = false;
	} else if (b[0] > c->last_seq + 1) {
		c->gaps++;
		c->gap_beats += b[0] - c->last_seq - 1;
	} else if (b[0] <= c->last_seq) {
		c->errors++;
		return;
	}
	c->last_seq = b[0];
}

static void play_stats(struct fdrec_play_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->bufs_done = D.fill_seq;
	st->bytes_done = D.bytes_filled;
	st->running = D.playing;
	st->chk = D.chk;
	st->chk.rate_bps = CLK_HZ * 16;
	st->chk.enabled = D.chk_on;
	for (unsigned i = 0; i < D.n; i++)
		st->bufs_ready += D.state[i] == B_READY;
	st->egr_beats_in = D.chk.beats;
	st->egr_depth = 4096;
}

static int do_ioctl(unsigned long req, void *arg)
{
	switch (req) {
	case FDREC_IOC_GET_INFO: {
		struct fdrec_info *in = arg;
		const char *api = getenv("FDREC_STUB_API"), *caps = getenv("FDREC_STUB_CAPS");
		memset(in, 0, sizeof(*in));
		in->api_version = api ? (uint32_t)strtoul(api, NULL, 0) : FDREC_API_VERSION;
		in->hw_version = 0x00010001;
		in->src_clk_hz = CLK_HZ;
		in->dp_clk_hz = 300000000;
		in->beat_bytes = 16;
		in->fifo_depth = 4096;
		in->max_bufs = FDREC_MAX_BUFS;
		in->caps = caps ? (uint32_t)strtoul(caps, NULL, 0)
				: FDREC_CAP_TPG | FDREC_CAP_S2MM | FDREC_CAP_MM2S | FDREC_CAP_CHECK;
		in->buf_align = FDREC_BUF_ALIGN;
		in->max_buf_size = FDREC_MAX_BUF_SIZE;
		in->max_sg_len = 67108863;
		return 0;
	}
	case FDREC_IOC_REGISTER_BUFS: {
		const struct fdrec_bufs *b = arg;
		const uint64_t *a = (const uint64_t *)(uintptr_t)b->addrs;
		if (b->flags & ~FDREC_BUFS_DIR_MASK)
			return -EINVAL;
		if (D.running || D.playing)
			return -EBUSY;
		for (unsigned i = 0; i < D.n; i++)
			if (D.dir == FDREC_DIR_RECORD && D.state[i] == B_USER)
				return -EBUSY;
		D.n = 0;
		if (!b->count)
			return 0;
		D.dir = b->flags;
		if (b->count < 2 || b->count > FDREC_MAX_BUFS || !b->buf_size ||
		    b->buf_size % FDREC_BUF_ALIGN || b->buf_size > FDREC_MAX_BUF_SIZE)
			return -EINVAL;
		for (unsigned i = 0; i < b->count; i++)
			if (a[i] % FDREC_BUF_ALIGN)
				return -EINVAL;
		for (unsigned i = 0; i < b->count; i++) {
			D.addr[i] = a[i];
			D.state[i] = B_FREE;
		}
		D.n = b->count;
		D.cur = D.n;
		D.buf_size = b->buf_size;
		return 0;
	}
	case FDREC_IOC_START: {
		struct fdrec_start *s = arg;
		if (s->flags & ~FDREC_START_TPG)
			return -EINVAL;
		if (D.running)
			return -EBUSY;
		if (D.n < 2)
			return -ENOBUFS;
		if (D.dir != FDREC_DIR_RECORD)
			return -EINVAL;
		for (unsigned i = 0; i < D.n; i++)
			if (D.state[i] != B_FREE)
				return -EBUSY;
		D.seq = D.drops = D.beats_in = D.beats_out = D.fill_seq = D.bytes_filled = 0;
		D.qh = D.rh = D.rn = 0;
		D.qn = D.n;
		for (unsigned i = 0; i < D.n; i++) {
			D.q[i] = i;
			D.state[i] = B_QUEUED;
		}
		D.cur = D.n;
		D.hold_until = 0;
		D.running = true;
		D.quit = false;
		s->pkt_len = (uint32_t)(D.buf_size / 16);
		s->first_seq = 0;
		s->start_time_ns = now_ns(CLOCK_REALTIME);
		memset(s->reserved, 0, sizeof(s->reserved));
		if (s->flags & FDREC_START_TPG && D.rate) {
			D.thread = pthread_create(&D.th, NULL, gen, NULL) == 0;
			if (!D.thread)
				return -ENOMEM;
		}
		return 0;
	}
	case FDREC_IOC_WAIT_FILLED: {
		struct fdrec_filled *f = arg;
		struct timespec dl;
		if (D.dir != FDREC_DIR_RECORD)
			return -EINVAL;
		uint64_t until = now_ns(CLOCK_REALTIME) +
				 (uint64_t)(f->timeout_ms > 0 ? f->timeout_ms : 0) * 1000000ull;
		dl.tv_sec = (time_t)(until / 1000000000ull);
		dl.tv_nsec = (long)(until % 1000000000ull);
		while (!D.rn) {
			if (!D.running)
				return -ENODATA;
			if (!f->timeout_ms)
				return -ETIMEDOUT;
			if (f->timeout_ms < 0)
				pthread_cond_wait(&D.cv, &D.mu);
			else if (pthread_cond_timedwait(&D.cv, &D.mu, &dl) == ETIMEDOUT && !D.rn)
				return -ETIMEDOUT;
		}
		unsigned i = D.rq[D.rh];
		D.rh = (D.rh + 1) % FDREC_MAX_BUFS;
		if (!--D.rn) {
			uint64_t v;
			if (read(D.fd, &v, sizeof(v)) < 0)
				v = 0;
		}
		D.state[i] = B_USER;
		f->index = i;
		f->bytes = D.buf_size - (D.short_buf && D.rseq[i] + 1 == D.short_buf ? 16 : 0);
		f->seq = D.rseq[i];
		f->drop_count = D.rdrop[i];
		f->flags = 0;
		f->reserved0 = 0;
		memset(f->reserved, 0, sizeof(f->reserved));
		return 0;
	}
	case FDREC_IOC_RELEASE: {
		const struct fdrec_release *r = arg;
		if (r->flags || r->index >= D.n || D.dir != FDREC_DIR_RECORD ||
		    D.state[r->index] != B_USER)
			return -EINVAL;
		if (D.running) {
			D.q[(D.qh + D.qn) % FDREC_MAX_BUFS] = r->index;
			D.qn++;
			D.state[r->index] = B_QUEUED;
		} else {
			D.state[r->index] = B_FREE;
		}
		return 0;
	}
	case FDREC_IOC_STOP:
		stats(arg);
		stop();
		((struct fdrec_stats *)arg)->running = 0;
		return 0;
	case FDREC_IOC_GET_STATS:
		stats(arg);
		return 0;
	case FDREC_IOC_SET_RATE: {
		struct fdrec_rate *r = arg;
		uint64_t max = CLK_HZ * 16, want = r->rate_bps < max ? r->rate_bps : max;
		uint64_t inc = (uint64_t)(((unsigned __int128)want << 31) / max);
		D.rate = (uint64_t)(((unsigned __int128)inc * max) >> 31);
		r->rate_bps = D.rate;
		return 0;
	}
	case FDREC_IOC_PLAY_START: {
		struct fdrec_play_start *ps = arg;
		if (ps->flags & ~FDREC_PLAY_CHECK)
			return -EINVAL;
		if (D.running || D.playing)
			return -EBUSY;
		if (D.n < 2)
			return -ENOBUFS;
		if (D.dir != FDREC_DIR_PLAY)
			return -EINVAL;
		if (ps->flags & FDREC_PLAY_CHECK) {
			memset(&D.chk, 0, sizeof(D.chk));
			D.chk_first = D.chk_on = true;
		}
		for (unsigned i = 0; i < D.n; i++)
			D.state[i] = B_FREE;
		D.fill_seq = D.bytes_filled = 0;
		D.rh = D.rn = 0;
		D.playing = true;
		ps->start_time_ns = now_ns(CLOCK_REALTIME);
		return 0;
	}
	case FDREC_IOC_PLAY_SUBMIT: {
		const struct fdrec_play_submit *ps = arg;
		if (D.dir != FDREC_DIR_PLAY || ps->flags || ps->index >= D.n)
			return -EINVAL;
		if (!ps->bytes || ps->bytes > D.buf_size || ps->bytes % 16)
			return -EINVAL;
		if (!D.playing)
			return -EPIPE;
		if (D.state[ps->index] != B_FREE && D.state[ps->index] != B_USER)
			return -EBUSY;
		const uint64_t *b = (const uint64_t *)(uintptr_t)D.addr[ps->index];
		if (D.chk_on)
			for (uint64_t k = 0; k < ps->bytes / 16; k++)
				check_beat(b + 2 * k);
		D.blen[ps->index] = ps->bytes;
		D.rseq[ps->index] = D.fill_seq++;
		D.bytes_filled += ps->bytes;
		D.state[ps->index] = B_READY;
		D.rq[(D.rh + D.rn) % FDREC_MAX_BUFS] = ps->index;
		D.rn++;
		return 0;
	}
	case FDREC_IOC_PLAY_WAIT_DONE: {
		struct fdrec_play_done *d = arg;
		if (D.dir != FDREC_DIR_PLAY)
			return -EINVAL;
		if (!D.rn)
			return D.playing ? -ETIMEDOUT : -ENODATA;
		unsigned i = D.rq[D.rh];
		D.rh = (D.rh + 1) % FDREC_MAX_BUFS;
		D.rn--;
		D.state[i] = B_USER;
		d->index = i;
		d->bytes = D.blen[i];
		d->seq = D.rseq[i];
		d->flags = 0;
		return 0;
	}
	case FDREC_IOC_PLAY_STOP:
		if (D.stop_fails)
			return -EIO;
		D.playing = false;
		D.chk_on = false;
		D.rn = 0;
		for (unsigned i = 0; i < D.n; i++)
			D.state[i] = B_FREE;
		play_stats(arg);
		return 0;
	case FDREC_IOC_GET_PLAY_STATS:
		play_stats(arg);
		return 0;
	default:
		return -ENOTTY;
	}
}

static bool is_dev(const char *path)
{
	const char *dev = getenv("FDREC_STUB_DEV");
	return dev && path && !strcmp(path, dev);
}

static int dev_open(void)
{
	const char *hold = getenv("FDREC_STUB_HOLD");
	int fd;

	pthread_mutex_lock(&D.mu);
	int lock = REAL(open)(getenv("FDREC_STUB_DEV"), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (D.fd >= 0 || lock < 0 || flock(lock, LOCK_EX | LOCK_NB)) {
		if (lock >= 0)
			REAL(close)(lock);
		pthread_mutex_unlock(&D.mu);
		errno = EBUSY;
		return -1;
	}
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	D.fd = fd;
	D.lock = lock;
	D.playing = false;
	D.n = 0;
	if (!D.rate) /* the generator's rate register outlives an opener */
		D.rate = getenv("FDREC_STUB_RATE") ? strtoull(getenv("FDREC_STUB_RATE"), NULL, 10)
						   : 50000000;
	D.corrupt_buf =
		getenv("FDREC_STUB_CORRUPT") ? strtoull(getenv("FDREC_STUB_CORRUPT"), NULL, 10) : 0;
	D.short_buf =
		getenv("FDREC_STUB_SHORT") ? strtoull(getenv("FDREC_STUB_SHORT"), NULL, 10) : 0;
	D.stop_fails = getenv("FDREC_STUB_STOP_FAILS") != NULL;
	D.skip_buf = getenv("FDREC_STUB_SKIP") ? strtoull(getenv("FDREC_STUB_SKIP"), NULL, 10) : 0;
	if (hold && strchr(hold, ':')) {
		D.hold_after = strtoull(hold, NULL, 10);
		D.hold_ns = strtoull(strchr(hold, ':') + 1, NULL, 10) * 1000000ull;
	}
	pthread_mutex_unlock(&D.mu);
	return fd;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return is_dev(path) ? dev_open() : REAL(open)(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return is_dev(path) ? dev_open() : REAL(open64)(path, flags, mode);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd != D.fd)
		return REAL(ioctl)(fd, req, arg);
	pthread_mutex_lock(&D.mu);
	int rc = do_ioctl(req, arg);
	pthread_mutex_unlock(&D.mu);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

int close(int fd)
{
	if (fd >= 0 && fd == D.fd) {
		pthread_mutex_lock(&D.mu);
		stop();
		D.playing = false;
		D.n = 0;
		D.fd = -1;
		REAL(close)(D.lock);
		D.lock = -1;
		pthread_mutex_unlock(&D.mu);
	}
	return REAL(close)(fd);
}
