/* SPDX-License-Identifier: MIT */
/* Packet replay on absolute deadlines (see pktplay.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "stream/pktplay.h"
#include "stream/sink_frame.h"
#include "util/sysutil.h"

/* Spun before a deadline rather than slept: the wake-up latency of a sleep seen on these
 * machines is 45-100 us. */
#define SPIN_NS 150000ull

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ volatile("yield");
#endif
}

void nvt_pktplay_init(struct nvt_pktplay *p, const struct nvt_sink_args *a, int fd,
		      nvt_pktplay_send_fn send, void *ctx)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	nvt_pcapng_reader_init(&p->rd);
	p->send = send;
	p->ctx = ctx;
	/* a rate or a packet rate is the fast timing's: either implies it */
	p->timing = a->pps || a->rate_bps ? NVT_TIMING_FAST : a->timing;
	p->speed = a->speed > 0 ? a->speed : 1;
	p->rate_bps = a->rate_bps;
	p->pps = a->pps;
	p->late_ns = a->late_ns;
}

void nvt_pktplay_free(struct nvt_pktplay *p)
{
	nvt_pcapng_reader_free(&p->rd);
}

void nvt_pktplay_pass_start(void *state)
{
	struct nvt_pktplay *p = state;

	if (p->started)
		p->rebase = true;
	/* each pass is a stream of its own (a partial block at the end of one, the data cut
	 * short, is not joined to the next one's section header) */
	nvt_pcapng_reader_free(&p->rd);
	nvt_pcapng_reader_init(&p->rd);
}

static void wait_until(uint64_t due)
{
	uint64_t now = nvt_mono_ns();

	if (due > now + SPIN_NS) {
		struct timespec t = {.tv_sec = (time_t)((due - SPIN_NS) / 1000000000u),
				     .tv_nsec = (long)((due - SPIN_NS) % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
	}
	while (nvt_mono_ns() < due)
		cpu_relax();
}

/* The packet's deadline on CLOCK_MONOTONIC, 0 = none (as fast as it goes). */
static uint64_t deadline(struct nvt_pktplay *p, const struct nvt_pcapng_block *b)
{
	uint64_t now = nvt_mono_ns();

	if (!p->started) {
		p->started = true;
		p->base_mono = now;
		p->base_ts = p->pass_first_ts = b->ts_ns;
	} else if (p->rebase) {
		/* the next pass follows the last packet by the mean gap of a pass */
		uint64_t gap = p->pass_packets > 1
				       ? (p->last_ts - p->pass_first_ts) / (p->pass_packets - 1)
				       : 0;
		p->rebase = false;
		if (p->timing == NVT_TIMING_FAST) /* the pace goes on: one packet's time */
			gap = p->pps        ? 1000000000u / p->pps
			      : p->rate_bps ? (uint64_t)((unsigned __int128)p->last_len *
							 1000000000u / p->rate_bps)
					    : 0;
		p->base_mono = p->last_due +
			       (p->timing == NVT_TIMING_FAST ? gap : (uint64_t)(gap / p->speed));
		p->base_ts = p->pass_first_ts = b->ts_ns;
		p->pass_packets = 0;
		p->n = p->bytes = 0;
	}
	p->pass_packets++;
	p->last_ts = b->ts_ns;
	if (p->timing == NVT_TIMING_ORIGINAL) {
		/* a capture's time may step back (merged files, a fanout's rings): such a packet
		 * is due at once after the one before, not late */
		uint64_t rel = b->ts_ns > p->base_ts ? b->ts_ns - p->base_ts : 0;
		uint64_t due = p->base_mono + (p->speed == 1 ? rel : (uint64_t)(rel / p->speed));
		return due > p->last_due ? due : p->last_due;
	}
	uint64_t due = 0;
	if (p->pps)
		due = p->base_mono + (uint64_t)((unsigned __int128)p->n * 1000000000u / p->pps);
	else if (p->rate_bps)
		due = p->base_mono +
		      (uint64_t)((unsigned __int128)p->bytes * 1000000000u / p->rate_bps);
	p->n++;
	p->bytes += b->caplen;
	p->last_len = b->caplen;
	return due;
}

/* The packets gathered without deadlines go to the sink. */
static int flush(struct nvt_pktplay *p)
{
	unsigned skipped = 0;
	int rc;

	if (!p->nbatch)
		return 0;
	rc = p->send(p->ctx, p->batch, p->nbatch, &skipped, p->err);
	if (rc < 0)
		return rc;
	p->rep.packets += p->nbatch - skipped;
	p->rep.skipped += skipped;
	p->nbatch = 0;
	return 0;
}

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct nvt_pktplay *p = arg;
	uint64_t due, late;
	unsigned skipped = 0;
	int rc;

	if (b->type != PCAPNG_EPB && b->type != PCAPNG_SPB)
		return 0;
	if (b->type == PCAPNG_SPB && p->timing == NVT_TIMING_ORIGINAL) {
		nvt_err_param(p->err, "a simple packet block has no time: replay it with --timing "
				      "fast");
		return -EINVAL;
	}
	due = deadline(p, b);
	if (!due) {
		/* as fast as it goes: in batches (a block gathered from two pieces lies in the
		 * reader's carry buffer, which the next such block reuses: sent at once) */
		p->batch[p->nbatch++] = *b;
		p->last_due = nvt_mono_ns();
		if (p->nbatch == NVT_PKTPLAY_BATCH ||
		    (b->p >= p->rd.carry && b->p < p->rd.carry + p->rd.cap))
			return flush(p);
		return 0;
	}
	if ((rc = flush(p)))
		return rc;
	wait_until(due);
	p->last_due = due;
	late = nvt_mono_ns() - due;
	rc = p->send(p->ctx, b, 1, &skipped, p->err);
	if (rc < 0)
		return rc;
	if (skipped) {
		p->rep.skipped++;
		if (p->timing == NVT_TIMING_FAST) { /* its pace slot goes to the next packet */
			p->n--;
			p->bytes -= b->caplen;
		}
		return 0;
	}
	p->rep.packets++;
	if (late > p->late_ns) {
		if (!p->was_late)
			p->rep.late_events++;
		p->rep.late++;
		if (due < nvt_sink_frame_data_came()) /* its data came after its deadline */
			p->rep.late_dry++;
		if (late > p->rep.late_max_ns)
			p->rep.late_max_ns = late;
	}
	p->was_late = late > p->late_ns;
	return 0;
}

int nvt_pktplay_feed(struct nvt_pktplay *p, const uint8_t *buf, uint64_t len, struct nvt_err *err)
{
	if (!p->started && !p->rd.pos)
		prctl(PR_SET_TIMERSLACK, 1UL); /* the sink thread's sleeps end on time */
	p->err = err;
	int rc = nvt_pcapng_feed(&p->rd, buf, len, on_block, p, err);
	return rc ? rc : flush(p); /* the batch points into buf */
}

int nvt_pktplay_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t offset,
			struct nvt_err *err)
{
	(void)offset;
	return nvt_pktplay_feed(state, buf, bytes, err);
}

void nvt_pktplay_report(void *state, struct nvt_sink_report *rep)
{
	const struct nvt_pktplay *p = state;
	*rep = p->rep;
}

void nvt_pktplay_close(void *state)
{
	struct nvt_pktplay *p = state;

	nvt_pktplay_free(p);
	if (p->fd >= 0)
		close(p->fd);
	free(state);
}

int nvt_pktplay_sendmmsg(int fd, struct mmsghdr *m, unsigned k, bool skip_too_long,
			 unsigned *skipped)
{
	for (unsigned done = 0; done < k;) {
		int r = sendmmsg(fd, m + done, k - done, 0);
		if (r > 0) {
			done += (unsigned)r;
			continue;
		}
		if (r < 0 && (errno == EINTR || errno == ENOBUFS || errno == ECONNREFUSED))
			continue;
		if (r < 0 && errno == EMSGSIZE && skip_too_long) {
			(*skipped)++;
			done++;
			continue;
		}
		return r < 0 ? -errno : -EIO;
	}
	return 0;
}
