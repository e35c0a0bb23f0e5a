/* SPDX-License-Identifier: MIT */
/* pcap source: a capture made elsewhere (tcpdump, dumpcap, Wireshark: pcap with microsecond or
 * nanosecond timestamps in either byte order, or pcapng) imported as a packet recording, so
 * that it can be replayed (play --sink udp:... --timing original), checked and exported like
 * one nvtape captured. The packets keep their times, lengths and link type, and the losses a
 * pcapng file places (epb_dropcount, as nvtape's own export writes them) become drop events at
 * their positions. A file is read at the storage's pace (the source waits for free chunks:
 * nothing is dropped), and ends with it.
 *
 * The input is opened once, by the run: a FIFO or a pipe (pcap:<(cmd)) is read only there, so
 * no byte is taken twice, and waited on in short polls, so that a stop (Ctrl-C, the recording
 * failing) ends a wait for a writer that never comes. The check looks at regular files only. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "stream/pktwriter.h"

#define PIECE       (1u << 20)
#define PCAP_MAX_PK (256u << 10) /* a classic pcap record larger than this is damage */
#define WAIT_MS     100          /* a FIFO's poll: how soon a stop is seen */

/* The capture's bytes, read in pieces. */
struct input {
	int fd;
	bool fifo;   /* a FIFO or pipe: polled, and a read of 0 before a writer came is no end */
	bool writer; /* a writer has been there (data, or a read that would block) */
	struct nvt_recorder *r;
	uint8_t *buf;
	size_t at, len; /* buffered: buf[at..len) */
};

struct imp {
	struct nvt_pktw w;
	const struct nvt_source_args *a;
	bool started, stop;
	int linktype;
	uint32_t snaplen;
	uint64_t drops; /* epb_dropcount imported */
	struct nvt_err *err;
};

/* More bytes into the buffer: their count, 0 at the end of the input, -ECANCELED when the
 * recording stopped during a wait, or -errno. */
static ssize_t in_fill(struct input *in)
{
	for (;;) {
		ssize_t n = read(in->fd, in->buf, PIECE);
		if (n > 0 || (n == 0 && (!in->fifo || in->writer))) {
			in->at = 0;
			in->len = (size_t)n;
			in->writer = true;
			return n;
		}
		if (n < 0 && errno == EAGAIN)
			in->writer = true; /* a writer is there, with nothing to say yet */
		else if (n < 0 && errno != EINTR)
			return -errno;
		if (nvt_recorder_stopping(in->r))
			return -ECANCELED;
		struct pollfd p = {.fd = in->fd, .events = POLLIN};
		int k = poll(&p, 1, WAIT_MS);
		if (k < 0 && errno != EINTR)
			return -errno;
		if (k > 0 && (p.revents & POLLHUP))
			in->writer = true; /* a writer came and went: a read of 0 is the end */
	}
}

/* Up to n bytes into dst (fewer only at the end): their count, or as in_fill. */
static ssize_t in_read(struct input *in, void *dst, size_t n)
{
	size_t got = 0;

	while (got < n) {
		if (in->at == in->len) {
			ssize_t k = in_fill(in);
			if (k <= 0)
				return k < 0 ? k : (ssize_t)got;
		}
		size_t take = in->len - in->at < n - got ? in->len - in->at : n - got;
		memcpy((uint8_t *)dst + got, in->buf + in->at, take);
		in->at += take;
		got += take;
	}
	return (ssize_t)got;
}

/* The error of a read that failed (not ECANCELED: a stop ends the import cleanly). */
static int in_error(const struct imp *x, ssize_t k, struct nvt_err *err)
{
	nvt_err_set(err, (int)-k, "pcap:%s: %s", x->a->arg, strerror((int)-k));
	return (int)k;
}

/* The section and interface blocks once the link type is known. */
static int begin(struct imp *x, uint16_t linktype, uint32_t snaplen)
{
	char name[80];

	snprintf(name, sizeof(name), "pcap:%.74s", x->a->arg);
	x->linktype = linktype;
	x->snaplen = snaplen;
	x->started = true;
	if (nvt_pktw_start(&x->w, linktype, snaplen, name,
			   "imported by nvtape from a capture file"))
		x->stop = true;
	return 0;
}

/* One packet into the recording: 0, or 1 when the recording stopped. */
static int packet(struct imp *x, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
		  uint32_t origlen)
{
	uint8_t *p;

	if (x->stop || nvt_pktw_reserve(&x->w, caplen, &p) != NVT_PKTW_OK) {
		x->stop = true;
		return 1;
	}
	memcpy(p, data, caplen);
	nvt_pktw_commit(&x->w, ts_ns, caplen, origlen < caplen ? caplen : origlen);
	return 0;
}

static int on_block(const struct nvt_pcapng_block *b, void *arg)
{
	struct imp *x = arg;

	switch (b->type) {
	case PCAPNG_IDB:
		if (x->linktype >= 0 && x->linktype != b->linktype) {
			nvt_err_param(
				x->err,
				"pcap:%s has interfaces of two link types (%d and %u): nvtape "
				"keeps one; split the file (editcap) and import each",
				x->a->arg, x->linktype, b->linktype);
			return -EINVAL;
		}
		if (x->linktype < 0)
			begin(x, b->linktype, b->snaplen ? b->snaplen : 262144);
		return 0;
	case PCAPNG_EPB:
	case PCAPNG_SPB:
		if (b->drops && !x->stop) { /* lost right before this packet */
			nvt_pktw_dropped(&x->w, b->drops);
			x->drops =
				x->drops > UINT64_MAX - b->drops ? UINT64_MAX : x->drops + b->drops;
		}
		return packet(x, b->ts_ns, b->data, b->caplen, b->origlen);
	default:
		return 0;
	}
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* Classic pcap: a 24-byte file header, then a 16-byte header before each packet. */
static int classic(struct imp *x, struct input *in, const uint8_t *hdr, struct nvt_err *err)
{
	uint32_t magic = rd32(hdr, false);
	bool swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	bool nano = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	uint8_t h[16], *buf = malloc(PCAP_MAX_PK);
	uint64_t at = 24;
	int rc = 0;

	if (!buf) {
		nvt_err_set(err, ENOMEM, "no memory to read pcap:%s", x->a->arg);
		return -ENOMEM;
	}
	begin(x, (uint16_t)rd32(hdr + 20, swap), rd32(hdr + 16, swap));
	while (!x->stop) {
		ssize_t n = in_read(in, h, 16);
		if (n == 0 || n == -ECANCELED)
			break;
		if (n < 0) {
			rc = in_error(x, n, err);
			break;
		}
		if (n != 16) {
			nvt_err_set(err, EPROTO,
				    "pcap:%s: the file ends inside a packet header at byte %llu "
				    "(cut short?): the packets before it were imported",
				    x->a->arg, (unsigned long long)at);
			rc = -EPROTO;
			break;
		}
		uint32_t sec = rd32(h, swap), frac = rd32(h + 4, swap), cap = rd32(h + 8, swap),
			 orig = rd32(h + 12, swap);
		if (cap > PCAP_MAX_PK || frac >= (nano ? 1000000000u : 1000000u)) {
			nvt_err_set(err, EPROTO,
				    "pcap:%s: a damaged packet header at byte %llu (%u bytes "
				    "captured, fraction %u)",
				    x->a->arg, (unsigned long long)at, cap, frac);
			rc = -EPROTO;
			break;
		}
		n = in_read(in, buf, cap);
		if (n == -ECANCELED)
			break;
		if (n < 0) {
			rc = in_error(x, n, err);
			break;
		}
		if ((size_t)n != cap) {
			nvt_err_set(err, EPROTO,
				    "pcap:%s: the file ends inside a packet at byte %llu",
				    x->a->arg, (unsigned long long)at);
			rc = -EPROTO;
			break;
		}
		at += 16 + (uint64_t)cap;
		packet(x, (uint64_t)sec * 1000000000u + (nano ? frac : frac * 1000ull), buf, cap,
		       orig);
	}
	free(buf);
	return rc;
}

static int pcapng(struct imp *x, struct input *in, const uint8_t *first, size_t n,
		  struct nvt_err *err)
{
	struct nvt_pcapng_reader rd;
	int rc;

	nvt_pcapng_reader_init(&rd);
	rc = nvt_pcapng_feed(&rd, first, n, on_block, x, err);
	while (!rc && !x->stop) {
		if (in->at == in->len) {
			ssize_t k = in_fill(in);
			if (k == 0 || k == -ECANCELED)
				break;
			if (k < 0) {
				rc = in_error(x, k, err);
				break;
			}
		}
		rc = nvt_pcapng_feed(&rd, in->buf + in->at, in->len - in->at, on_block, x, err);
		in->at = in->len;
	}
	if (rc == 1)
		rc = 0; /* the recording stopped */
	if (!rc && !x->stop && !nvt_recorder_stopping(x->w.r) && !nvt_pcapng_reader_clean(&rd)) {
		nvt_err_set(err, EPROTO,
			    "pcap:%s: the file ends inside a block (cut short?): the packets "
			    "before it were imported",
			    x->a->arg);
		rc = -EPROTO;
	}
	if (!rc && !x->started && !nvt_recorder_stopping(x->w.r)) {
		nvt_err_set(err, EPROTO,
			    "pcap:%s holds no interface description (a section header only?), so "
			    "no packets: nothing to import; give a capture with packets",
			    x->a->arg);
		rc = -EPROTO;
	}
	if (rc == -EPROTO && !strstr(err->msg, x->a->arg)) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "pcap:%.200s: %.300s", x->a->arg, err->msg);
		nvt_err_clear(err);
		nvt_err_set(err, EPROTO, "%s", m);
	}
	nvt_pcapng_reader_free(&rd);
	return rc;
}

static bool magic_ok(const uint8_t *hdr)
{
	uint32_t m;

	memcpy(&m, hdr, 4);
	return m == 0xa1b2c3d4u || m == 0xd4c3b2a1u || m == 0xa1b23c4du || m == 0x4d3cb2a1u ||
	       m == PCAPNG_SHB;
}

static int bad_header(const char *path, bool short_, struct nvt_err *err)
{
	if (short_)
		nvt_err_param(err,
			      "pcap:%s is shorter than a capture file's header (24 bytes): give a "
			      "pcap or pcapng file",
			      path);
	else
		nvt_err_param(err,
			      "pcap:%s is not a pcap or pcapng file (no magic number): give a "
			      "capture written by tcpdump, dumpcap or nvtape export",
			      path);
	return -EINVAL;
}

static int pcap_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	uint8_t hdr[24];
	struct stat st;
	int fd;

	if (a->check) {
		nvt_err_param(err, "an imported capture is checked after the import (nvtape verify "
				   "--check): record it without --check");
		return -EINVAL;
	}
	if (stat(a->arg, &st)) {
		nvt_err_set(err, errno, "pcap:%s: %s", a->arg, strerror(errno));
		return -err->code;
	}
	if (S_ISDIR(st.st_mode)) {
		nvt_err_param(err, "pcap:%s is a directory: give a capture file", a->arg);
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) { /* a FIFO or pipe: read once, by the run */
		if (!access(a->arg, R_OK))
			return 0;
		nvt_err_set(err, errno, "pcap:%s: %s", a->arg, strerror(errno));
		return -err->code;
	}
	fd = open(a->arg, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		nvt_err_set(err, errno, "pcap:%s: %s", a->arg, strerror(errno));
		return -err->code;
	}
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
	close(fd);
	if (n != (ssize_t)sizeof(hdr) || !magic_ok(hdr))
		return bad_header(a->arg, n != (ssize_t)sizeof(hdr), err);
	return 0;
}

static char *pcap_describe(const struct nvt_source_args *a, const char *meta)
{
	(void)a;
	return nvt_meta_set(meta, "nvtape:packets", "pcapng, imported");
}

/* The input opened (a FIFO without blocking on its writer) and its first 24 bytes read. */
static int open_input(struct imp *x, struct input *in, uint8_t *hdr, struct nvt_err *err)
{
	const char *path = x->a->arg;
	struct stat st;
	ssize_t n;

	in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in->fd < 0 || fstat(in->fd, &st)) {
		nvt_err_set(err, errno, "pcap:%s: %s", path, strerror(errno));
		return -err->code;
	}
	in->fifo = S_ISFIFO(st.st_mode);
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		fcntl(in->fd, F_SETFL, fcntl(in->fd, F_GETFL) & ~O_NONBLOCK);
	in->buf = malloc(PIECE);
	if (!in->buf) {
		nvt_err_set(err, ENOMEM, "no memory to read pcap:%s", path);
		return -ENOMEM;
	}
	n = in_read(in, hdr, 24);
	if (n == -ECANCELED) {
		nvt_err_set(err, ECANCELED,
			    "pcap:%s: the recording stopped before the capture's first bytes came "
			    "(no program wrote to it)",
			    path);
		return -ECANCELED;
	}
	if (n < 0)
		return in_error(x, n, err);
	if (n != 24 || !magic_ok(hdr))
		return bad_header(path, n != 24, err);
	return 0;
}

static int pcap_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		    struct nvt_source_report *rep, struct nvt_err *err)
{
	struct imp x = {.a = a, .linktype = -1, .err = err};
	struct input in = {.fd = -1, .r = r};
	uint8_t hdr[24];
	uint32_t m;
	int rc;

	nvt_pktw_init(&x.w, r, a, false);
	rc = open_input(&x, &in, hdr, err);
	if (!rc) {
		memcpy(&m, hdr, 4);
		rc = m == PCAPNG_SHB ? pcapng(&x, &in, hdr, 24, err) : classic(&x, &in, hdr, err);
	}
	if (in.fd >= 0)
		close(in.fd);
	free(in.buf);
	if (rc >= 0 && x.started)
		/* received counts the packets the capture lost (epb_dropcount) */
		nvt_pktw_finish(&x.w, x.w.packets + x.drops, x.drops);
	rep->packets = x.w.packets;
	if (rc >= 0 && x.w.too_big_bytes) {
		nvt_err_set(
			err, EMSGSIZE,
			"pcap:%s: a packet block of %zu bytes does not fit a ring chunk: import "
			"with larger chunks (--chunk); %llu packets were imported before it",
			a->arg, x.w.too_big_bytes, (unsigned long long)x.w.packets);
		return -EMSGSIZE;
	}
	if (rc >= 0 && x.w.at_limit)
		return NVT_SOURCE_AT_LIMIT;
	return rc;
}

const struct nvt_source_ops nvt_source_pcap = {
	.name = "pcap",
	.help = "a pcap or pcapng file (tcpdump, dumpcap) imported as a packet recording, for "
		"replay and export (pcap:FILE; a FIFO or pcap:<(command) too)",
	.kind = NVT_SRC_PCAP,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_PACKETS,
	.check = pcap_check,
	.run = pcap_run,
	.describe = pcap_describe,
};
