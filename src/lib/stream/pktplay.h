/* SPDX-License-Identifier: MIT */
/* The packet sinks' schedule: the pcapng data of a packet recording taken in pieces, each
 * packet handed to the sink's send function at its deadline. Deadlines are absolute, from one
 * start time (an error never accumulates): the capture time relative to the first packet's
 * divided by the speed, or n / pps, or bytes / rate. The sink thread sleeps until shortly
 * before a deadline (timer slack 1 ns) and spins the rest. A loop's next pass follows the
 * last packet by the mean gap between packets. */
#ifndef NVT_STREAM_PKTPLAY_H
#define NVT_STREAM_PKTPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "format/pcapng.h"
#include "nvtape/sink.h"

#define NVT_PKTPLAY_BATCH 64 /* packets handed to the sink at once when there are no deadlines */

/* A sink's send: the n packets b[0..n-1] (one when each has its deadline, up to
 * NVT_PKTPLAY_BATCH as fast as it goes); *skipped gets those not sendable through it. 0 or
 * -errno with err set. */
typedef int (*nvt_pktplay_send_fn)(void *ctx, const struct nvt_pcapng_block *b, unsigned n,
				   unsigned *skipped, struct nvt_err *err);

struct nvt_pktplay {
	int fd; /* the sink's socket (nvt_pktplay_close closes it), -1 none */
	struct nvt_pcapng_reader rd;
	nvt_pktplay_send_fn send;
	void *ctx;
	unsigned timing;
	double speed;
	uint64_t rate_bps, pps, late_ns;
	bool started, rebase, was_late;
	uint64_t base_mono, base_ts; /* a packet captured at base_ts is due at base_mono */
	uint64_t pass_first_ts, last_ts, last_due, pass_packets;
	uint64_t n, bytes; /* FAST: packets and bytes scheduled so far in this pass */
	uint32_t last_len;
	struct nvt_sink_report rep;
	struct nvt_err *err;
	struct nvt_pcapng_block batch[NVT_PKTPLAY_BATCH]; /* packets without deadlines, to send */
	unsigned nbatch;
};

void nvt_pktplay_init(struct nvt_pktplay *p, const struct nvt_sink_args *a, int fd,
		      nvt_pktplay_send_fn send, void *ctx);
void nvt_pktplay_free(struct nvt_pktplay *p);
/* The next bytes of the data: 0 or -errno with err set. */
int nvt_pktplay_feed(struct nvt_pktplay *p, const uint8_t *buf, uint64_t len, struct nvt_err *err);

/* nvt_sink_ops functions for a packet sink whose state begins with its struct nvt_pktplay. */
int nvt_pktplay_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t offset,
			struct nvt_err *err);
void nvt_pktplay_pass_start(void *state); /* the recording starts again (a loop) */
void nvt_pktplay_report(void *state, struct nvt_sink_report *rep);
void nvt_pktplay_close(void *state); /* frees the state (malloc'ed) and closes fd */

/* m[0..k-1] through sendmmsg on fd, again after EINTR, ENOBUFS or ECONNREFUSED (a UDP
 * receiver's port closed for a moment); with skip_too_long a message longer than the MTU
 * (EMSGSIZE) is skipped and counted in *skipped. 0 or -errno. */
int nvt_pktplay_sendmmsg(int fd, struct mmsghdr *m, unsigned k, bool skip_too_long,
			 unsigned *skipped);

#endif
