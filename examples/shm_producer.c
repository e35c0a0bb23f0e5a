/* SPDX-License-Identifier: MIT */
/* One producer loop, three ways into nvtape: through shared memory into the ring of another
 * process (`nvtape record --source shm:NAME`, include/nvtape/producer.h, header only: this mode
 * needs no library), in-process through the push API (nvtape/recorder.h), or as a byte stream
 * on stdout for `nvtape record --source stdin`. The data is {seq, ~seq} 16-byte beats; a beat
 * the producer skips (-d) or cannot place (-r: a paced producer never waits, a full ring is a
 * loss) is reported as dropped, in bytes (the shm and stdin sources count bytes), so
 * `nvtape verify --check counter:u64le@0/16` finds each gap at its indexed position.
 *
 *   shm_producer [-m shm|api|pipe] [-r MB_PER_S] [-d EVERY_MB] [-k AFTER_BYTES]
 *                [-e ENGINE] TARGET BYTES
 *
 * TARGET: the shm name (shm), the recording's path (api), ignored (pipe: "-"). -d skips 4096
 * beats every EVERY_MB of data; -k exits without closing the stream after AFTER_BYTES (a
 * producer that dies); -e the api mode's storage engine ("file", "null").
 * Prints RESULT bytes= dropped_bytes= drop_events= seconds= cpu_s= */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <nvtape/producer.h>
#include <nvtape/recorder.h>

#define BEAT     16u
#define SKIP     4096u /* beats skipped at each -d */
#define PIPE_BUF (1u << 20)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_s(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec +
	       u.ru_stime.tv_usec / 1e6;
}

static void fill(void *dst, uint64_t seq, uint64_t beats)
{
	uint64_t *w = dst;
	for (uint64_t i = 0; i < beats; i++) {
		w[2 * i] = seq + i;
		w[2 * i + 1] = ~(seq + i);
	}
}

/* The three ways in, behind one acquire / commit / drop. */
struct way {
	char mode;
	struct nvt_producer p;
	struct nvt_recorder *r;
	uint8_t *buf;
};

static void *acquire(struct way *w, size_t *room, int nowait)
{
	if (w->mode == 's')
		return nvt_producer_acquire(&w->p, room, nowait ? NVT_PRODUCER_NOWAIT : 0);
	if (w->mode == 'a')
		return nvt_recorder_acquire(w->r, room, nowait ? NVT_ACQUIRE_NOWAIT : 0);
	*room = PIPE_BUF;
	return w->buf;
}

static int commit(struct way *w, size_t n)
{
	if (w->mode == 's')
		return nvt_producer_commit(&w->p, n);
	if (w->mode == 'a')
		return nvt_recorder_commit(w->r, n);
	for (size_t off = 0; off < n;) {
		ssize_t k = write(1, w->buf + off, n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -EPIPE;
		off += (size_t)k;
	}
	return 0;
}

static void drop(struct way *w, uint64_t bytes)
{
	if (w->mode == 's')
		nvt_producer_drop(&w->p, bytes);
	else if (w->mode == 'a')
		nvt_recorder_drop(w->r, bytes);
	/* a pipe carries no drops: the gap stays in the data for the counter check */
}

static int usage(void)
{
	fprintf(stderr, "usage: shm_producer [-m shm|api|pipe] [-r MB_PER_S] [-d EVERY_MB] "
			"[-k AFTER_BYTES] [-e ENGINE] TARGET BYTES\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct way w = {.mode = 's'};
	const char *engine = "file";
	uint64_t rate = 0, drop_every = 0, kill_after = 0, total, seq = 0, done = 0;
	uint64_t dropped = 0, events = 0, next_drop, t0;
	double c0;
	int opt, rc = 0, losing = 0;

	while ((opt = getopt(argc, argv, "m:r:d:k:e:")) != -1) {
		switch (opt) {
		case 'm':
			w.mode = optarg[0];
			if (strcmp(optarg, "shm") && strcmp(optarg, "api") &&
			    strcmp(optarg, "pipe"))
				return usage();
			break;
		case 'r':
			rate = strtoull(optarg, NULL, 10) * 1000000u;
			break;
		case 'd':
			drop_every = strtoull(optarg, NULL, 10) << 20;
			break;
		case 'k':
			kill_after = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			engine = optarg;
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 2)
		return usage();
	total = strtoull(argv[optind + 1], NULL, 10) / BEAT * BEAT;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if (w.mode == 's') {
		rc = nvt_producer_connect(&w.p, argv[optind]);
		if (rc) {
			fprintf(stderr, "shm_producer: cannot attach to nvtape at %s: %s\n",
				argv[optind], w.p.error);
			return 1;
		}
	} else if (w.mode == 'a') {
		struct nvt_record_opts o;
		struct nvt_err err = {0};
		nvt_record_opts_init(&o);
		o.path = argv[optind];
		o.engine = engine;
		o.source_name = "shm_producer";
		o.force = 1;
		if (nvt_recorder_open(&o, &w.r, &err) < 0) {
			fprintf(stderr, "shm_producer: %s\n", err.msg);
			return 1;
		}
	} else {
		w.buf = aligned_alloc(4096, PIPE_BUF);
		if (!w.buf)
			return 1;
	}
	next_drop = drop_every;
	t0 = now_ns();
	c0 = cpu_s();
	while (done < total && !stop) {
		size_t room;
		uint64_t n, lost, avail = UINT64_MAX;
		void *p;

		if (drop_every && done >= next_drop) { /* a loss upstream, on purpose */
			drop(&w, SKIP * BEAT);
			seq += SKIP;
			dropped += SKIP * BEAT;
			events++;
			next_drop += drop_every;
		}
		if (rate) { /* paced: wait for what is due */
			uint64_t due =
				(uint64_t)((unsigned __int128)rate * (now_ns() - t0) / 1000000000u);
			if (due < done + dropped + BEAT) {
				struct timespec ts = {0, 50000};
				nanosleep(&ts, NULL);
				continue;
			}
			avail = due - done - dropped;
		}
		p = acquire(&w, &room, rate != 0);
		if (!p && errno == EAGAIN) { /* the ring is full: a paced producer loses */
			struct timespec ts = {0, 50000};
			lost = avail != UINT64_MAX ? avail / BEAT * BEAT : 0;
			if (lost) {
				drop(&w, lost);
				seq += lost / BEAT;
				dropped += lost;
				events += !losing; /* one event per run of losses */
				losing = 1;
			}
			nanosleep(&ts, NULL);
			continue;
		}
		if (!p)
			break; /* nvtape is stopping */
		n = (room < avail ? room : avail) / BEAT * BEAT;
		if (n > total - done)
			n = total - done;
		if (drop_every && n > next_drop - done)
			n = next_drop - done;
		if (kill_after && n > kill_after - done)
			n = kill_after - done;
		fill(p, seq, n / BEAT);
		if (commit(&w, (size_t)n)) {
			fprintf(stderr, "shm_producer: commit failed\n");
			rc = 1;
			break;
		}
		seq += n / BEAT;
		done += n;
		losing = 0;
		if (kill_after && done >= kill_after)
			_exit(3); /* dies: no close, nvtape sees the socket go */
	}
	if (w.mode == 's') {
		if (nvt_producer_close(&w.p) < 0) {
			fprintf(stderr, "shm_producer: %s\n", w.p.error);
			rc = 1;
		}
	} else if (w.mode == 'a') {
		struct nvt_record_result res;
		if (nvt_recorder_close(w.r, &res) < 0) {
			fprintf(stderr, "shm_producer: %s\n", res.err.msg);
			rc = 1;
		}
	}
	fprintf(w.mode == 'p' ? stderr : stdout,
		"RESULT bytes=%" PRIu64 " dropped_bytes=%" PRIu64 " drop_events=%" PRIu64
		" seconds=%.3f cpu_s=%.4f\n",
		done, dropped, events, (now_ns() - t0) / 1e9, cpu_s() - c0);
	return rc;
}
