/* SPDX-License-Identifier: MIT */
/* The checker sink: a DAC model that checks every beat of a test-pattern recording as it is
 * played, or the counter every record of other data carries, restarting the sequence at every
 * loop pass. */
#include <errno.h>
#include <stdlib.h>

#include "nvtape/counter.h"
#include "nvtape/format.h"
#include "nvtape/sink.h"

struct checker_sink {
	struct nvt_checker chk;
	bool counting; /* cc instead of chk */
	struct nvt_counter_check cc;
	uint64_t first_seq;
	void (*on_event)(const struct nvt_check_event *ev, void *arg);
	void *arg;
};

static void forward_event(void *arg, const struct nvt_check_event *ev)
{
	struct checker_sink *c = arg;

	if (c->on_event)
		c->on_event(ev, c->arg);
}

static int checker_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	struct checker_sink *c = calloc(1, sizeof(*c));

	if (!c) {
		nvt_err_set(err, ENOMEM, "out of memory");
		return -ENOMEM;
	}
	nvt_checker_init(&c->chk, a->first_seq);
	c->first_seq = a->first_seq;
	c->on_event = a->on_event;
	c->arg = a->event_arg;
	c->chk.on_event = c->cc.counts.on_event = forward_event;
	c->chk.arg = c->cc.counts.arg = c;
	c->counting = a->counter != NULL;
	if (c->counting)
		nvt_counter_check_init(&c->cc, a->counter);
	*state = c;
	return 0;
}

static int checker_consume(void *state, const uint8_t *buf, uint64_t bytes, uint64_t off,
			   struct nvt_err *err)
{
	struct checker_sink *c = state;

	(void)err;
	if (c->counting)
		nvt_counter_check_feed(&c->cc, buf, bytes, NVT_HEADER_SIZE + off);
	else
		nvt_checker_feed(&c->chk, buf, bytes, NVT_HEADER_SIZE + off);
	return 0;
}

static void checker_pass_start(void *state)
{
	struct checker_sink *c = state;

	c->chk.expected = c->first_seq; /* every pass starts the sequence again */
	c->cc.pos = c->cc.next = 0;     /* and the records, from whatever value they start at */
	c->cc.have = 0;
	c->cc.counts.seen_good = false;
}

static const struct nvt_checker *checker_counts(void *state)
{
	const struct checker_sink *c = state;
	return c->counting ? &c->cc.counts : &c->chk;
}

const struct nvt_sink_ops nvt_sink_checker = {
	.name = "checker",
	.help = "checks every beat of a test-pattern recording, or the counter of other data "
		"(--check), at the programmed rate (a DAC)",
	.caps = NVT_SINK_NEEDS_PATTERN,
	.open = checker_open,
	.consume = checker_consume,
	.pass_start = checker_pass_start,
	.checker = checker_counts,
	.close = free,
};
