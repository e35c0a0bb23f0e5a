/* SPDX-License-Identifier: MIT */
/* Packet sequence checks: each packet's counter is fed to the counter check (counter.c) as one
 * record, so gaps, backward jumps and bad values mean what they mean for byte streams. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/pktcheck.h"

int nvt_pktcheck_parse(const char *text, struct nvt_pktcheck *c, struct nvt_err *err)
{
	struct nvt_counter_spec s = {.width = 8, .stride = 8, .inc = 1, .wrap = 0};

	memset(c, 0, sizeof(*c));
	if (!strcmp(text, "vita49")) {
		c->kind = NVT_PKTCHECK_VITA49;
		s = (struct nvt_counter_spec){.width = 1, .stride = 1, .inc = 1, .wrap = 16};
	} else if (!strncmp(text, "vdif", 4) && (!text[4] || text[4] == ':')) {
		c->kind = NVT_PKTCHECK_VDIF;
		if (text[4]) {
			char *end;
			errno = 0;
			unsigned long long f = strtoull(text + 5, &end, 10);
			if (errno || *end || !f || f > (1ull << 24) || text[5] == '-') {
				nvt_err_param(
					err,
					"--check %s: vdif:FPS takes the data frames a second, "
					"1 to 16777216 (VDIF's frame number has 24 bits)",
					text);
				return -EINVAL;
			}
			c->fps = f;
		}
	} else if (!strncmp(text, "counter:", 8)) {
		if (nvt_counter_parse(text, &s, err))
			return -EINVAL;
		c->offset = s.offset;
		s.offset = 0;
		s.stride = s.width;
	} else {
		nvt_err_param(err,
			      "--check %s: a packet stream is checked with counter:TYPE[@OFFSET]"
			      "[+INC][%%WRAP] (OFFSET in the UDP payload), vita49 or vdif[:FPS]",
			      text);
		return -EINVAL;
	}
	c->width = s.width;
	nvt_counter_check_init(&c->cc, &s);
	return 0;
}

static uint64_t feed(struct nvt_pktcheck *c, const void *v)
{
	uint64_t before = c->cc.counts.gap_beats;

	nvt_counter_check_feed(&c->cc, v, c->width, c->cc.pos);
	return c->cc.counts.gap_beats - before;
}

static uint64_t vdif(struct nvt_pktcheck *c, const uint8_t *p, uint32_t len)
{
	uint32_t w0, w1;
	uint64_t sec, frame, seq;

	if (len < 16) {
		c->short_packets++;
		return 0;
	}
	memcpy(&w0, p, 4);
	memcpy(&w1, p + 4, 4);
	sec = le32toh(w0) & 0x3fffffffu;
	frame = le32toh(w1) & 0xffffffu;
	if (!c->fps) {
		/* frames a second not known yet: counted within the second until it first
		 * changes; then the rate is the highest frame number seen + 1 */
		if (!c->have_sec || sec == c->last_sec) {
			if (!c->have_sec || frame > c->max_frame)
				c->max_frame = frame;
			c->have_sec = true;
			c->last_sec = sec;
			c->last_frame = frame;
			seq = htole64(frame);
			return feed(c, &seq);
		}
		c->fps = c->max_frame + 1;
		c->fps_learned = true;
		c->cc.counts.expected = c->last_sec * c->fps + c->last_frame + 1;
	}
	if (frame >= c->fps) {
		if (!c->fps_learned) {
			c->cc.counts.corrupt++;
			return 0;
		}
		/* the second it was learned from lost its last frames: the count goes on from
		 * the last frame seen, at the corrected rate */
		c->fps = frame + 1;
		c->cc.counts.expected = c->last_sec * c->fps + c->last_frame + 1;
	}
	c->last_sec = sec;
	c->last_frame = frame;
	seq = htole64(sec * c->fps + frame);
	return feed(c, &seq);
}

uint64_t nvt_pktcheck_packet(struct nvt_pktcheck *c, const uint8_t *p, uint32_t len)
{
	uint8_t v;

	switch (c->kind) {
	case NVT_PKTCHECK_VITA49:
		if (len < 4) {
			c->short_packets++;
			return 0;
		}
		if (p[0] >> 4 > 3) { /* context, extension context, command packets */
			c->other_packets++;
			return 0;
		}
		v = p[1] & 0x0f;
		return feed(c, &v);
	case NVT_PKTCHECK_VDIF:
		return vdif(c, p, len);
	default:
		if (len < c->offset || len - c->offset < c->width) {
			c->short_packets++;
			return 0;
		}
		return feed(c, p + c->offset);
	}
}
