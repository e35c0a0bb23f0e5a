/* SPDX-License-Identifier: MIT */
/* pcap source: a capture made elsewhere (tcpdump, dumpcap, Wireshark: pcap with microsecond or
 * nanosecond timestamps in either byte order, or pcapng) imported as a packet recording, so
 * that it can be replayed (play --sink udp:... --timing original), checked and exported like
 * one nvtape captured. The packets keep their times, lengths and link type. A file is read at
 * the storage's pace (the source waits for free chunks: nothing is dropped), and ends with it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "stream/pktwriter.h"

#define PIECE       (1u << 20)
#define PCAP_MAX_PK (256u << 10) /* a classic pcap record larger than this is damage */

struct imp {
	struct nvt_pktw w;
	const struct nvt_source_args *a;
	bool started, stop;
	int linktype;
	uint32_t snaplen;
	uint64_t packets;
	struct nvt_err *err;
};

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
static int classic(struct imp *x, int fd, const uint8_t *hdr, struct nvt_err *err)
{
	uint32_t magic = rd32(hdr, false);
	bool swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	bool nano = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	uint8_t h[16], *buf = malloc(PCAP_MAX_PK);
	uint64_t at = 24;
	int rc = 0, fd2 = dup(fd);
	FILE *f = fd2 >= 0 ? fdopen(fd2, "rb") : NULL; /* buffered: a read per packet is slow */

	if (!buf || !f) {
		if (f)
			fclose(f);
		else if (fd2 >= 0)
			close(fd2);
		free(buf);
		nvt_err_set(err, ENOMEM, "no memory to read pcap:%s", x->a->arg);
		return -ENOMEM;
	}
	setvbuf(f, NULL, _IOFBF, PIECE);
	begin(x, (uint16_t)rd32(hdr + 20, swap), rd32(hdr + 16, swap));
	while (!x->stop) {
		size_t n = fread(h, 1, 16, f);
		if (n == 0)
			break;
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
		if (fread(buf, 1, cap, f) != cap) {
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
	fclose(f);
	free(buf);
	return rc;
}

static int pcapng(struct imp *x, int fd, const uint8_t *first, size_t n, struct nvt_err *err)
{
	struct nvt_pcapng_reader rd;
	uint8_t *buf = malloc(PIECE);
	int rc;

	if (!buf) {
		nvt_err_set(err, ENOMEM, "no memory to read pcap:%s", x->a->arg);
		return -ENOMEM;
	}
	nvt_pcapng_reader_init(&rd);
	rc = nvt_pcapng_feed(&rd, first, n, on_block, x, err);
	while (!rc && !x->stop) {
		ssize_t k = read(fd, buf, PIECE);
		if (k < 0) {
			nvt_err_set(err, errno, "pcap:%s: %s", x->a->arg, strerror(errno));
			rc = -err->code;
			break;
		}
		if (k == 0)
			break;
		rc = nvt_pcapng_feed(&rd, buf, (size_t)k, on_block, x, err);
	}
	if (rc == 1)
		rc = 0; /* the recording stopped */
	if (!rc && !x->stop && !nvt_pcapng_reader_clean(&rd)) {
		nvt_err_set(err, EPROTO,
			    "pcap:%s: the file ends inside a block (cut short?): the packets "
			    "before it were imported",
			    x->a->arg);
		rc = -EPROTO;
	}
	if (rc == -EPROTO && !strstr(err->msg, x->a->arg)) {
		char m[sizeof(err->msg)];
		snprintf(m, sizeof(m), "pcap:%.200s: %.300s", x->a->arg, err->msg);
		nvt_err_set(err, EPROTO, "%s", m);
	}
	nvt_pcapng_reader_free(&rd);
	free(buf);
	return rc;
}

static int open_file(const char *path, uint8_t *hdr, struct nvt_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint32_t m;

	if (fd < 0) {
		nvt_err_set(err, errno, "pcap:%s: %s", path, strerror(errno));
		return -err->code;
	}
	if (read(fd, hdr, 24) != 24) {
		close(fd);
		nvt_err_param(err, "pcap:%s is shorter than a capture file's header", path);
		return -EINVAL;
	}
	memcpy(&m, hdr, 4);
	if (m != 0xa1b2c3d4u && m != 0xd4c3b2a1u && m != 0xa1b23c4du && m != 0x4d3cb2a1u &&
	    m != PCAPNG_SHB) {
		close(fd);
		nvt_err_param(err, "pcap:%s is not a pcap or pcapng file (no magic number)", path);
		return -EINVAL;
	}
	return fd;
}

static int pcap_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	uint8_t hdr[24];
	int fd;

	if (a->check) {
		nvt_err_param(err, "an imported capture is checked after the import (nvtape verify "
				   "--check): record it without --check");
		return -EINVAL;
	}
	fd = open_file(a->arg, hdr, err);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static char *pcap_describe(const struct nvt_source_args *a, const char *meta)
{
	(void)a;
	return nvt_meta_set(meta, "nvtape:packets", "pcapng, imported");
}

static int pcap_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		    struct nvt_source_report *rep, struct nvt_err *err)
{
	struct imp x = {.a = a, .linktype = -1, .err = err};
	uint8_t hdr[24];
	uint32_t m;
	int fd = open_file(a->arg, hdr, err), rc;

	if (fd < 0)
		return fd;
	nvt_pktw_init(&x.w, r, a, false);
	memcpy(&m, hdr, 4);
	rc = m == PCAPNG_SHB ? pcapng(&x, fd, hdr, 24, err) : classic(&x, fd, hdr, err);
	close(fd);
	if (rc >= 0 && x.started)
		nvt_pktw_finish(&x.w, x.w.packets, 0);
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
		"replay and export (pcap:FILE)",
	.kind = NVT_SRC_PCAP,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_PACKETS,
	.check = pcap_check,
	.run = pcap_run,
	.describe = pcap_describe,
};
