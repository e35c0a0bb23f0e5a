/* SPDX-License-Identifier: MIT */
/* packet source: whole-link capture on a network interface, like tcpdump -w, recorded as a
 * pcapng stream (docs/packets.md).
 *
 *   packet:IFACE[,filter=EXPRESSION][,promisc][,snaplen=BYTES][,ring=SIZE]
 *
 * AF_PACKET with a TPACKET_V3 ring of 1 MiB blocks mapped into the process (the kernel fills a
 * block with several frames and hands it over whole, or after 10 ms); each frame is copied
 * once, into its Enhanced Packet Block in the recording's ring. The filter is a pcap
 * expression, compiled by libpcap and run in the kernel (SO_ATTACH_FILTER), so frames it
 * refuses cost nothing here. Times are the kernel's in ns, the NIC's when it stamps frames
 * (SO_TIMESTAMPING raw hardware; the interface description says which). Losses: the capture
 * ring's own count (PACKET_STATISTICS tp_drops, read after every block: placed where that block
 * ends) and frames that found no free recording chunk. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "nvtape/units.h"
#include "stream/pktwriter.h"
#include "util/sysutil.h"

#define BLOCK_BYTES  (1u << 20)
#define RING_DEFAULT (64u << 20)
#define BLOCK_TOV_MS 10
#define POLL_MS      100
#define SNAP_MAX     262144u

struct pk_cfg {
	char ifname[IF_NAMESIZE];
	char filter[400];
	bool promisc;
	uint32_t snaplen;
	uint64_t ring;
};

static int cfg_error(struct nvt_err *err, const char *arg, const char *what)
{
	nvt_err_param(err,
		      "packet:%s: %s (packet:IFACE[,filter=EXPRESSION][,promisc][,snaplen=BYTES]"
		      "[,ring=SIZE], e.g. packet:eth1,filter=udp port 4000)",
		      arg, what);
	return -EINVAL;
}

static int parse_cfg(const char *arg, struct pk_cfg *c, struct nvt_err *err)
{
	char buf[512], *save = NULL, *tok;

	memset(c, 0, sizeof(*c));
	c->snaplen = SNAP_MAX;
	c->ring = RING_DEFAULT;
	if (!arg || !*arg || strlen(arg) >= sizeof(buf))
		return cfg_error(err, arg ? arg : "", "name the interface to capture on");
	strcpy(buf, arg);
	tok = strtok_r(buf, ",", &save);
	if (!tok || strlen(tok) >= IF_NAMESIZE || !if_nametoindex(tok))
		return cfg_error(err, arg,
				 "no network interface of that name (ip link lists them)");
	strcpy(c->ifname, tok);
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');
		uint64_t v;
		if (!strcmp(tok, "promisc")) {
			c->promisc = true;
			continue;
		}
		if (!eq)
			return cfg_error(err, arg,
					 "options are filter=, promisc, snaplen= and ring=");
		*eq = 0;
		if (!strcmp(tok, "filter")) {
			if (strlen(eq + 1) >= sizeof(c->filter))
				return cfg_error(err, arg, "the filter is too long");
			strcpy(c->filter, eq + 1);
		} else if (!strcmp(tok, "snaplen")) {
			if (nvt_parse_uint(eq + 1, 64, SNAP_MAX, &v))
				return cfg_error(err, arg,
						 "snaplen is a byte count from 64 to 262144");
			c->snaplen = (uint32_t)v;
		} else if (!strcmp(tok, "ring")) {
			if (nvt_parse_size(eq + 1, &v) || v < 4 * BLOCK_BYTES || v > (4ull << 30))
				return cfg_error(err, arg, "ring is a size from 4M to 4G");
			c->ring = v - v % BLOCK_BYTES;
		} else {
			return cfg_error(err, arg,
					 "options are filter=, promisc, snaplen= and ring=");
		}
	}
	return 0;
}

/* The filter compiled for the interface's link type (Ethernet) with libpcap. */
static int compile_filter(const struct pk_cfg *c, struct bpf_program *prog, struct nvt_err *err)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, (int)c->snaplen);
	int rc = 0;

	if (!p) {
		nvt_err_set(err, ENOMEM, "packet: libpcap could not start");
		return -ENOMEM;
	}
	if (pcap_compile(p, prog, c->filter, 1, PCAP_NETMASK_UNKNOWN)) {
		nvt_err_param(err, "packet:%s: the filter \"%s\" is not a pcap expression: %s",
			      c->ifname, c->filter, pcap_geterr(p));
		rc = -EINVAL;
	}
	pcap_close(p);
	return rc;
}

static int pk_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	struct pk_cfg c;
	struct bpf_program prog;

	if (parse_cfg(a->arg, &c, err))
		return -EINVAL;
	if (a->check) {
		nvt_err_param(err, "the packet source does not check counters yet: record with the "
				   "udp source for a --check");
		return -EINVAL;
	}
	if (c.filter[0]) {
		if (compile_filter(&c, &prog, err))
			return -EINVAL;
		pcap_freecode(&prog);
	}
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		nvt_err_set(err, errno, "packet:%s: %s%s", c.ifname, strerror(errno),
			    errno == EPERM ? " (capturing needs CAP_NET_RAW: run as root)" : "");
		return -err->code;
	}
	close(fd);
	return 0;
}

static char *pk_describe(const struct nvt_source_args *a, const char *meta)
{
	(void)a;
	return nvt_meta_set(meta, "nvtape:packets", "pcapng, LINKTYPE_ETHERNET");
}

struct pk_src {
	struct pk_cfg cfg;
	int fd;
	uint8_t *map;
	size_t map_bytes;
	unsigned nblocks, next;
	struct nvt_pktw w;
	bool started;
	const struct nvt_source_args *a;
	uint64_t kernel_drops, seen;
	bool hw_ts;
};

static int open_ring(struct pk_src *s, struct nvt_err *err)
{
	int v = TPACKET_V3, ts = SOF_TIMESTAMPING_RAW_HARDWARE;
	struct tpacket_req3 req = {.tp_block_size = BLOCK_BYTES,
				   .tp_block_nr = (unsigned)(s->cfg.ring / BLOCK_BYTES),
				   .tp_frame_size = 2048,
				   .tp_retire_blk_tov = BLOCK_TOV_MS};
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(s->cfg.ifname)};

	req.tp_frame_nr = req.tp_block_size / req.tp_frame_size * req.tp_block_nr;
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* no frames before the bind */
	if (s->fd < 0)
		goto fail;
	if (s->cfg.filter[0]) {
		struct bpf_program prog;
		if (compile_filter(&s->cfg, &prog, err))
			return -EINVAL;
		struct sock_fprog fp = {.len = (unsigned short)prog.bf_len,
					.filter = (struct sock_filter *)prog.bf_insns};
		int r = setsockopt(s->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
		pcap_freecode(&prog);
		if (r)
			goto fail;
	}
	if (setsockopt(s->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		goto fail;
	/* the NIC's own times where it stamps frames; the kernel's otherwise */
	s->hw_ts = !setsockopt(s->fd, SOL_PACKET, PACKET_TIMESTAMP, &ts, sizeof(ts));
	if (setsockopt(s->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		goto fail;
	s->nblocks = req.tp_block_nr;
	s->map_bytes = (size_t)req.tp_block_size * req.tp_block_nr;
	s->map =
		mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, s->fd, 0);
	if (s->map == MAP_FAILED) {
		s->map = mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
		if (s->map == MAP_FAILED) {
			s->map = NULL;
			goto fail;
		}
	}
	if (s->cfg.promisc) {
		struct packet_mreq mr = {.mr_ifindex = sll.sll_ifindex,
					 .mr_type = PACKET_MR_PROMISC};
		if (setsockopt(s->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			goto fail;
	}
	if (bind(s->fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto fail;
	return 0;
fail:
	nvt_err_set(err, errno, "packet:%s: capture ring (%llu MiB): %s%s", s->cfg.ifname,
		    (unsigned long long)(s->cfg.ring >> 20), strerror(errno),
		    errno == EPERM    ? " (capturing needs CAP_NET_RAW: run as root)"
		    : errno == ENOMEM ? " (give a smaller ring=)"
				      : "");
	return -err->code;
}

/* The capture ring's losses since the last look (the kernel resets its counts on reading). */
static void ring_stats(struct pk_src *s)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	if (getsockopt(s->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return;
	s->seen += st.tp_packets;
	if (st.tp_drops) {
		s->kernel_drops += st.tp_drops;
		nvt_pktw_dropped(&s->w, st.tp_drops);
	}
}

static int start(struct pk_src *s, bool hw)
{
	char name[80], desc[256];

	snprintf(name, sizeof(name), "%s", s->cfg.ifname);
	snprintf(desc, sizeof(desc), "captured by nvtape (AF_PACKET), %s timestamps%s%s%.100s",
		 hw ? "hardware" : "software", s->cfg.promisc ? ", promiscuous" : "",
		 s->cfg.filter[0] ? ", filter " : "", s->cfg.filter);
	s->started = true;
	return nvt_pktw_start(&s->w, LINKTYPE_ETHERNET, s->cfg.snaplen, name, desc);
}

/* The frames of one block handed over by the kernel: 0, or NVT_PKTW_STOP. */
static int take_block(struct pk_src *s, struct tpacket_block_desc *bd)
{
	struct tpacket3_hdr *h =
		(struct tpacket3_hdr *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
	int rc = 0;

	for (uint32_t i = 0; i < bd->hdr.bh1.num_pkts && !rc; i++) {
		uint8_t *p;
		if (!s->started && start(s, (h->tp_status & TP_STATUS_TS_RAW_HARDWARE) != 0))
			return NVT_PKTW_STOP;
		switch (nvt_pktw_reserve(&s->w, h->tp_snaplen, &p)) {
		case NVT_PKTW_OK:
			memcpy(p, (uint8_t *)h + h->tp_mac, h->tp_snaplen);
			nvt_pktw_commit(&s->w, (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec,
					h->tp_snaplen, h->tp_len);
			break;
		case NVT_PKTW_FULL:
			s->w.ring_drops++;
			nvt_pktw_dropped(&s->w, 1);
			break;
		default:
			rc = NVT_PKTW_STOP;
		}
		h = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
	}
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	s->next = (s->next + 1) % s->nblocks;
	ring_stats(s);
	return rc;
}

static struct tpacket_block_desc *ready(struct pk_src *s)
{
	struct tpacket_block_desc *bd =
		(struct tpacket_block_desc *)(s->map + (size_t)s->next * BLOCK_BYTES);
	return __atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER ? bd
											     : NULL;
}

static int pk_loop(struct pk_src *s, struct nvt_err *err)
{
	for (;;) {
		struct tpacket_block_desc *bd = ready(s);
		if (bd) {
			if (take_block(s, bd) == NVT_PKTW_STOP)
				return NVT_PKTW_STOP;
			continue;
		}
		if (nvt_recorder_stopping(s->w.r) || nvt_pktw_at_limit(&s->w))
			return NVT_PKTW_STOP;
		struct pollfd pfd = {.fd = s->fd, .events = POLLIN | POLLERR};
		if (poll(&pfd, 1, POLL_MS) < 0 && errno != EINTR) {
			nvt_err_set(err, errno, "packet: poll: %s", strerror(errno));
			return -err->code;
		}
	}
}

static int pk_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		  struct nvt_source_report *rep, struct nvt_err *err)
{
	struct pk_src *s = calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		nvt_err_set(err, ENOMEM, "no memory for the packet source");
		return -ENOMEM;
	}
	s->fd = -1;
	s->a = a;
	rc = parse_cfg(a->arg, &s->cfg, err);
	if (!rc)
		rc = open_ring(s, err);
	if (rc)
		goto out;
	nvt_pktw_init(&s->w, r, a, true); /* the limits count from here */
	rc = pk_loop(s, err);
	if (rc == NVT_PKTW_STOP) {
		rc = s->w.at_limit ? NVT_SOURCE_AT_LIMIT : 0;
		if (s->w.too_big) {
			nvt_err_set(
				err, EMSGSIZE,
				"packet: a block of %zu bytes (a frame of up to %u) does not fit "
				"a ring chunk: record with larger chunks (--chunk) or a smaller "
				"snaplen=",
				s->w.too_big_bytes, s->cfg.snaplen);
			rc = -EMSGSIZE;
		}
	}
	if (rc >= 0) {
		/* what the kernel had handed over when the capture stopped is kept */
		struct tpacket_block_desc *bd;
		bool size_hit = s->w.size_limit_hit;
		s->w.at_limit = size_hit;
		s->w.duration_ns = 0;
		s->w.flags = NVT_ACQUIRE_DRAIN | NVT_ACQUIRE_NOWAIT;
		for (unsigned i = 0; i < s->nblocks && !size_hit && (bd = ready(s)); i++)
			if (take_block(s, bd) == NVT_PKTW_STOP)
				break;
		ring_stats(s);
		if (!s->started) /* no frame came: no timestamps to name */
			start(s, false);
		nvt_pktw_finish(&s->w, s->w.packets + s->kernel_drops + s->w.ring_drops,
				s->kernel_drops + s->w.ring_drops);
	}
	rep->packets = s->w.packets;
	rep->kernel_drops = s->kernel_drops;
out:
	if (s->map)
		munmap(s->map, s->map_bytes);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return rc;
}

const struct nvt_source_ops nvt_source_packet = {
	.name = "packet",
	.help = "frames captured on a network interface (AF_PACKET TPACKET_V3) as pcapng "
		"(packet:IFACE[,filter=EXPR][,promisc][,snaplen=N][,ring=SIZE]); the kernel's "
		"drops are indexed",
	.kind = NVT_SRC_PACKET,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_PACKETS,
	.check = pk_check,
	.run = pk_run,
	.describe = pk_describe,
};
