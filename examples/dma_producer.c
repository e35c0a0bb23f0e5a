/* SPDX-License-Identifier: MIT */
/* A stand-in for an FPGA DMA loop feeding nvtape through the push API: a thread that fills ring
 * chunks in place at a programmed rate with {seq, ~seq} beats (the memory it writes is what the
 * drive then DMAs) and, like hardware with a small FIFO, reports the beats it could not place
 * with nvt_recorder_drop(). Every PERIOD-th interval it also "overflows" on purpose so the
 * recording shows drops at known places; `nvtape verify` reports them at their positions.
 *
 *   dma_producer FILE RATE_MB_PER_S SECONDS [OVERFLOW_EVERY_MS]
 *
 * Build against the installed library: cc dma_producer.c $(pkg-config --cflags --libs nvtape) */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtape/recorder.h>

static struct nvt_recorder *rec;

static void on_signal(int sig)
{
	(void)sig;
	nvt_recorder_stop(rec); /* async-signal-safe */
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The "DMA": write n beats starting at seq into dst. */
static void dma_fill(void *dst, uint64_t seq, uint64_t n)
{
	uint64_t *w = dst;
	for (uint64_t i = 0; i < n; i++) {
		w[2 * i] = seq + i;
		w[2 * i + 1] = ~(seq + i);
	}
}

int main(int argc, char **argv)
{
	struct nvt_record_opts o;
	struct nvt_record_result res;
	struct nvt_err err = {0};
	uint64_t rate, seconds, overflow_ms = 0, seq = 0, placed = 0, lost = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s FILE RATE_MB_PER_S SECONDS [OVERFLOW_EVERY_MS]\n",
			argv[0]);
		return 64;
	}
	rate = strtoull(argv[2], NULL, 10) * 1000000u;
	seconds = strtoull(argv[3], NULL, 10);
	if (argc > 4)
		overflow_ms = strtoull(argv[4], NULL, 10);
	nvt_record_opts_init(&o);
	o.path = argv[1];
	o.unit_bytes = 16;           /* one beat: drops are counted in beats */
	o.source_kind = NVT_SRC_TPG; /* the data is the test pattern: verify checks every beat */
	o.source_name = "dma_producer";
	o.rate_bps = rate;
	o.duration_ns = seconds * 1000000000u;
	o.chunk_bytes = 1u << 20;
	o.chunks = 16;
	if (nvt_recorder_open(&o, &rec, &err) < 0) {
		fprintf(stderr, "dma_producer: %s\n", err.msg);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	const uint64_t step_ns = 50000; /* the DMA delivers a burst every 50 us */
	uint64_t t0 = now_ns(), next_overflow = overflow_ms * 1000000u;
	for (uint64_t k = 1;; k++) {
		uint64_t due = (uint64_t)((unsigned __int128)rate * step_ns * k / 1000000000u / 16);
		uint64_t n = due - (placed + lost);
		if (overflow_ms && now_ns() - t0 >= next_overflow) {
			/* the FIFO overflowed upstream: these beats never reach memory */
			nvt_recorder_drop(rec, n);
			seq += n;
			lost += n;
			next_overflow += overflow_ms * 1000000u;
			n = 0;
		}
		while (n) {
			size_t room;
			void *p = nvt_recorder_acquire(rec, &room, NVT_ACQUIRE_NOWAIT);
			if (!p && errno == EAGAIN) { /* no free chunk: the hardware drops */
				nvt_recorder_drop(rec, n);
				seq += n;
				lost += n;
				break;
			}
			if (!p)
				goto done; /* duration reached, stop(), or storage failed */
			uint64_t k2 = room / 16 < n ? room / 16 : n;
			dma_fill(p, seq, k2);
			nvt_recorder_commit(rec, k2 * 16);
			seq += k2;
			placed += k2;
			n -= k2;
		}
		if (nvt_recorder_stopping(rec))
			break;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step_ns};
		uint64_t wake = t0 + step_ns * (k + 1), now = now_ns();
		if (wake > now) {
			ts.tv_nsec = (long)(wake - now);
			nanosleep(&ts, NULL);
		}
	}
done:
	if (nvt_recorder_close(rec, &res) < 0)
		fprintf(stderr, "dma_producer: %s\n", res.err.msg);
	printf("RESULT bytes=%" PRIu64 " placed_beats=%" PRIu64 " lost_beats=%" PRIu64
	       " drops=%" PRIu64 " drop_events=%" PRIu64 " reason=%s\n",
	       res.rec.data_bytes, placed, lost, res.rec.drop_count, res.rec.drop_events,
	       nvt_stop_reason_name(res.reason));
	return res.err.code ? 1 : res.rec.drop_count ? 2 : 0;
}
