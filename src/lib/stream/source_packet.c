/* SPDX-License-Identifier: MIT */
/* packet source: whole-link capture on a network interface, like tcpdump -w, recorded as a
 * pcapng stream (docs/packets.md).
 *
 *   packet:IFACE[,filter=EXPRESSION][,promisc][,snaplen=BYTES][,ring=SIZE]
 *               [,fanout=N[:hash|cpu|lb]][,hwstamp]
 *
 * AF_PACKET with a TPACKET_V3 ring of 1 MiB blocks mapped into the process (the kernel fills a
 * block with several frames and hands it over whole, or after 10 ms); each frame is copied
 * once, into its Enhanced Packet Block in the recording's ring. The filter is a pcap
 * expression, compiled by libpcap and run in the kernel (SO_ATTACH_FILTER), so frames it
 * refuses cost nothing here. Times are the kernel's in ns, the NIC's when it stamps frames
 * (SO_TIMESTAMPING raw hardware; the interface description says which); hwstamp switches the
 * NIC's stamping of every received frame on (SIOCSHWTSTAMP) and back as it was at the end.
 * Losses: the capture rings' own counts (PACKET_STATISTICS tp_drops, read after every block:
 * placed where that block ends) and frames that found no free recording chunk.
 *
 * fanout=N spreads the frames over N sockets of one PACKET_FANOUT group, each with its own
 * capture ring (ring= is shared out): the kernel fills them from several CPUs without sharing
 * one ring's lock, and a full ring passes frames on to the next (rollover) rather than drop
 * them. This thread, the recording's one producer, takes the frames of the rings' handed-over
 * blocks in time order (a merge of the rings' oldest frames); a frame still in a block the
 * kernel holds can come after a later one of another ring (at most a block's 10 ms). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
#define FANOUT_MAX   16
#define RING_MIN     (4 * BLOCK_BYTES) /* a socket's */

struct pk_cfg {
	char ifname[IF_NAMESIZE];
	char filter[400];
	bool promisc, hwstamp;
	uint32_t snaplen;
	uint64_t ring;
	unsigned fanout;      /* sockets: 1, or 2 .. FANOUT_MAX */
	unsigned fanout_mode; /* PACKET_FANOUT_HASH, _CPU or _LB */
};

#define OPTIONS "filter=, promisc, snaplen=, ring=, fanout= and hwstamp"

static int cfg_error(struct nvt_err *err, const char *arg, const char *what)
{
	nvt_err_param(err,
		      "packet:%s: %s (packet:IFACE[,filter=EXPRESSION][,promisc][,snaplen=BYTES]"
		      "[,ring=SIZE][,fanout=N[:hash|cpu|lb]][,hwstamp], e.g. "
		      "packet:eth1,filter=udp port 4000)",
		      arg, what);
	return -EINVAL;
}

static int parse_fanout(const char *v, struct pk_cfg *c)
{
	static const struct {
		const char *name;
		unsigned mode;
	} modes[] = {
		{"hash", PACKET_FANOUT_HASH}, {"cpu", PACKET_FANOUT_CPU}, {"lb", PACKET_FANOUT_LB}};
	char n[8];
	const char *colon = strchr(v, ':');
	size_t len = colon ? (size_t)(colon - v) : strlen(v);
	uint64_t k;

	if (len >= sizeof(n))
		return -1;
	memcpy(n, v, len);
	n[len] = 0;
	if (nvt_parse_uint(n, 2, FANOUT_MAX, &k))
		return -1;
	c->fanout = (unsigned)k;
	c->fanout_mode = PACKET_FANOUT_HASH;
	if (!colon)
		return 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(colon + 1, modes[i].name)) {
			c->fanout_mode = modes[i].mode;
			return 0;
		}
	return -1;
}

static int parse_cfg(const char *arg, struct pk_cfg *c, struct nvt_err *err)
{
	char buf[512], *save = NULL, *tok;

	memset(c, 0, sizeof(*c));
	c->snaplen = SNAP_MAX;
	c->ring = RING_DEFAULT;
	c->fanout = 1;
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
		if (!strcmp(tok, "hwstamp")) {
			c->hwstamp = true;
			continue;
		}
		if (!eq)
			return cfg_error(err, arg, "options are " OPTIONS);
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
		} else if (!strcmp(tok, "fanout")) {
			if (parse_fanout(eq + 1, c))
				return cfg_error(
					err, arg,
					"fanout is a socket count from 2 to 16, then :hash (a "
					"flow to a socket, the default), :cpu (the receiving "
					"CPU's) or :lb (in turn)");
		} else {
			return cfg_error(err, arg, "options are " OPTIONS);
		}
	}
	if (c->ring / c->fanout < RING_MIN) {
		char what[96];
		snprintf(what, sizeof(what),
			 "ring is shared out over the fanout's %u sockets, 4M each at least: give "
			 "ring=%uM or more",
			 c->fanout, 4 * c->fanout);
		return cfg_error(err, arg, what);
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

/* The interface stamps every received frame in hardware when asked (ethtool -T says so). */
static int hw_offered(int fd, const struct pk_cfg *c, struct nvt_err *err)
{
	struct ethtool_ts_info ti = {.cmd = ETHTOOL_GET_TS_INFO};
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, c->ifname);
	ifr.ifr_data = (void *)&ti;
	if (!ioctl(fd, SIOCETHTOOL, &ifr) && (ti.so_timestamping & SOF_TIMESTAMPING_RAW_HARDWARE) &&
	    (ti.rx_filters & (1u << HWTSTAMP_FILTER_ALL)))
		return 0;
	nvt_err_set(err, EOPNOTSUPP,
		    "packet:%s: the interface does not stamp every received frame in hardware "
		    "(ethtool -T %s lists what it offers): record without hwstamp for the "
		    "kernel's times",
		    c->ifname, c->ifname);
	return -EOPNOTSUPP;
}

static int pk_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	struct pk_cfg c;
	struct bpf_program prog;
	int rc = 0;

	if (parse_cfg(a->arg, &c, err))
		return -EINVAL;
	if (a->check) {
		nvt_err_param(err, "the packet source does not check counters yet: record with the "
				   "udp source for a --check");
		return -EINVAL;
	}
	char what[96];
	snprintf(what, sizeof(what), "packet:%.80s", a->arg);
	if (nvt_pktw_check_chunk(a, what, "frame", 0, c.snaplen, err))
		return -EINVAL;
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
	if (c.hwstamp)
		rc = hw_offered(fd, &c, err);
	close(fd);
	return rc;
}

static char *pk_describe(const struct nvt_source_args *a, const char *meta)
{
	(void)a;
	return nvt_meta_set(meta, "nvtape:packets", "pcapng, LINKTYPE_ETHERNET");
}

/* One capture socket and its ring of blocks; blk is the block being taken (NULL: none), h its
 * next frame and left the frames after it. */
struct pk_ring {
	int fd;
	uint8_t *map;
	size_t map_bytes;
	unsigned nblocks, next;
	struct tpacket_block_desc *blk;
	struct tpacket3_hdr *h;
	uint32_t left;
	uint64_t frames;
};

struct pk_src {
	struct pk_cfg cfg;
	struct pk_ring ring[FANOUT_MAX];
	unsigned nring;
	struct nvt_pktw w;
	bool started;
	const struct nvt_source_args *a;
	uint64_t kernel_drops, released;
	uint64_t last_ts, backsteps; /* frames taken with a time before the one before */
	uint64_t t_live;             /* fanout: frames before this time are not the capture's */
	uint64_t unstamped;          /* hwstamp: frames the NIC did not stamp (the kernel's time) */
	bool hw_set, hw_saved_ok;    /* hwstamp: switched on; the setting before is known */
	struct hwtstamp_config hw_saved;
	struct sock_fprog prog; /* the capture's filter, compiled once (len 0: none) */
	struct bpf_program bpf;
	int ctl; /* hwstamp: the socket for the NIC's settings */
};

static int fail_errno(const struct pk_src *s, const char *what, struct nvt_err *err)
{
	nvt_err_set(err, errno, "packet:%s: %s: %s%s", s->cfg.ifname, what, strerror(errno),
		    errno == EPERM    ? " (capturing needs CAP_NET_RAW: run as root)"
		    : errno == ENOMEM ? " (give a smaller ring=)"
				      : "");
	return -err->code;
}

/* The capture's filter on socket fd (none: every frame). 0 or -errno. */
static int set_filter(const struct pk_src *s, int fd, struct nvt_err *err)
{
	int zero = 0, r;

	if (!s->prog.len) {
		r = setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof(zero));
		return r && errno != ENOENT ? fail_errno(s, "filter", err) : 0;
	}
	r = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &s->prog, sizeof(s->prog));
	return r ? fail_errno(s, "filter", err) : 0;
}

/* Socket g: filter, TPACKET_V3 ring of the cfg's share, bound to the interface. */
static int open_ring(struct pk_src *s, struct pk_ring *g, struct nvt_err *err)
{
	int v = TPACKET_V3, ts = SOF_TIMESTAMPING_RAW_HARDWARE;
	struct tpacket_req3 req = {.tp_block_size = BLOCK_BYTES,
				   .tp_block_nr =
					   (unsigned)(s->cfg.ring / s->cfg.fanout / BLOCK_BYTES),
				   .tp_frame_size = 2048,
				   .tp_retire_blk_tov = BLOCK_TOV_MS};
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex(s->cfg.ifname)};

	req.tp_frame_nr = req.tp_block_size / req.tp_frame_size * req.tp_block_nr;
	g->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* no frames before the bind */
	if (g->fd < 0)
		return fail_errno(s, "capture socket", err);
	if (s->cfg.fanout > 1) {
		/* until every socket is in the group: a socket bound but not yet in the group
		 * would take a copy of the frames the group takes */
		struct sock_filter none = BPF_STMT(BPF_RET | BPF_K, 0);
		struct sock_fprog fp = {.len = 1, .filter = &none};
		if (setsockopt(g->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)))
			return fail_errno(s, "filter", err);
	} else if (set_filter(s, g->fd, err)) {
		return -err->code;
	}
	if (setsockopt(g->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		return fail_errno(s, "TPACKET_V3", err);
	/* hwstamp: the NIC's times (switched on for every frame before this socket takes any);
	 * otherwise the kernel's, also for frames that a NIC stamps for another program (one time
	 * base in a recording) */
	if (s->cfg.hwstamp && setsockopt(g->fd, SOL_PACKET, PACKET_TIMESTAMP, &ts, sizeof(ts)))
		return fail_errno(s, "hardware timestamps (PACKET_TIMESTAMP)", err);
	if (setsockopt(g->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		goto ring_fail;
	g->nblocks = req.tp_block_nr;
	g->map_bytes = (size_t)req.tp_block_size * req.tp_block_nr;
	g->map =
		mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, g->fd, 0);
	if (g->map == MAP_FAILED) {
		g->map = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
		if (g->map == MAP_FAILED) {
			g->map = NULL;
			goto ring_fail;
		}
	}
	if (s->cfg.promisc) {
		struct packet_mreq mr = {.mr_ifindex = sll.sll_ifindex,
					 .mr_type = PACKET_MR_PROMISC};
		if (setsockopt(g->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)))
			return fail_errno(s, "promiscuous mode", err);
	}
	if (bind(g->fd, (struct sockaddr *)&sll, sizeof(sll)))
		return fail_errno(s, "bind", err);
	return 0;
ring_fail:;
	char what[64];
	snprintf(what, sizeof(what), "capture ring (%llu MiB)",
		 (unsigned long long)(s->cfg.ring / s->cfg.fanout >> 20));
	return fail_errno(s, what, err);
}

/* The sockets join one fanout group: an id of the kernel's choosing (no other capture's group
 * is joined by chance), frames passed on from a full ring to the next. They take no frame
 * before all are in (each frame is taken once); then their filters go live one by one, and
 * the capture begins when the last is: frames of an earlier time are left out (with the
 * NIC's times, which cannot be compared with the clock here, the first microseconds may hold
 * only some of the frames). */
static int join_fanout(struct pk_src *s, struct nvt_err *err)
{
	int mode = (int)(s->cfg.fanout_mode | PACKET_FANOUT_FLAG_ROLLOVER) << 16, got = 0;
	int first = mode | PACKET_FANOUT_FLAG_UNIQUEID << 16;
	socklen_t len = sizeof(got);

	if (setsockopt(s->ring[0].fd, SOL_PACKET, PACKET_FANOUT, &first, sizeof(first)) ||
	    getsockopt(s->ring[0].fd, SOL_PACKET, PACKET_FANOUT, &got, &len))
		return fail_errno(s, "fanout group", err);
	for (unsigned i = 1; i < s->nring; i++) {
		int arg = mode | (got & 0xffff);
		if (setsockopt(s->ring[i].fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)))
			return fail_errno(s, "fanout group", err);
	}
	for (unsigned i = 0; i < s->nring; i++)
		if (set_filter(s, s->ring[i].fd, err))
			return -err->code;
	s->t_live = s->cfg.hwstamp ? 0 : nvt_real_ns();
	if (s->a->notice) {
		char msg[96];
		snprintf(msg, sizeof(msg), "packet:%s: capturing on %u sockets", s->cfg.ifname,
			 s->nring);
		s->a->notice(msg, s->a->notice_arg);
	}
	return 0;
}

static int hw_ioctl(int fd, const char *ifname, unsigned long req, struct hwtstamp_config *hc)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)hc;
	return ioctl(fd, req, &ifr);
}

/* hwstamp: the NIC stamps every received frame from now on (its transmit setting kept);
 * switched on before any capture socket is bound, so no frame has the kernel's time. */
static int hw_on(struct pk_src *s, int fd, struct nvt_err *err)
{
	struct hwtstamp_config hc = {.tx_type = HWTSTAMP_TX_OFF, .rx_filter = HWTSTAMP_FILTER_ALL};

	if (hw_offered(fd, &s->cfg, err))
		return -EOPNOTSUPP;
	s->hw_saved_ok = !hw_ioctl(fd, s->cfg.ifname, SIOCGHWTSTAMP, &s->hw_saved);
	if (s->hw_saved_ok)
		hc.tx_type = s->hw_saved.tx_type;
	if (hw_ioctl(fd, s->cfg.ifname, SIOCSHWTSTAMP, &hc)) {
		nvt_err_set(err, errno,
			    "packet:%s: switching the NIC's timestamps on (SIOCSHWTSTAMP): %s%s",
			    s->cfg.ifname, strerror(errno),
			    errno == EPERM ? " (it needs CAP_NET_ADMIN: run as root)" : "");
		return -err->code;
	}
	s->hw_set = true;
	if (hc.rx_filter != HWTSTAMP_FILTER_ALL) {
		nvt_err_set(err, EOPNOTSUPP,
			    "packet:%s: the NIC stamps only some received frames (its driver chose "
			    "filter %d): record without hwstamp for the kernel's times",
			    s->cfg.ifname, hc.rx_filter);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The NIC's stamping as it was before (left on when the driver did not say). */
static void hw_off(struct pk_src *s)
{
	if (!s->hw_set)
		return;
	if (s->hw_saved_ok)
		(void)hw_ioctl(s->ctl, s->cfg.ifname, SIOCSHWTSTAMP, &s->hw_saved);
	else if (s->a->notice) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "packet:%s: hardware timestamps left on (the driver did not say how they "
			 "were set before)",
			 s->cfg.ifname);
		s->a->notice(msg, s->a->notice_arg);
	}
}

/* A ring's losses since the last look (the kernel resets its counts on reading). */
static void ring_stats(struct pk_src *s, struct pk_ring *g)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	if (getsockopt(g->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		return;
	if (st.tp_drops) {
		s->kernel_drops += st.tp_drops;
		nvt_pktw_dropped(&s->w, st.tp_drops);
	}
}

static int start(struct pk_src *s)
{
	bool hw = s->cfg.hwstamp;
	char name[80], desc[256], fan[48] = "";

	snprintf(name, sizeof(name), "%s", s->cfg.ifname);
	if (s->nring > 1)
		snprintf(fan, sizeof(fan), ", fanout over %u sockets", s->nring);
	snprintf(desc, sizeof(desc), "captured by nvtape (AF_PACKET), %s timestamps%s%s%s%.100s",
		 hw ? "hardware" : "software", s->cfg.promisc ? ", promiscuous" : "", fan,
		 s->cfg.filter[0] ? ", filter " : "", s->cfg.filter);
	s->started = true;
	return nvt_pktw_start(&s->w, LINKTYPE_ETHERNET, s->cfg.snaplen, name, desc);
}

static uint64_t frame_ns(const struct tpacket3_hdr *h)
{
	return (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;
}

/* The block taken is done: back to the kernel, and the ring's losses read. */
static void release(struct pk_src *s, struct pk_ring *g)
{
	__atomic_store_n(&g->blk->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	g->blk = NULL;
	g->next = (g->next + 1) % g->nblocks;
	s->released++;
	ring_stats(s, g);
}

/* The ring's next frame, from a block the kernel has handed over; NULL: none yet. */
static struct tpacket3_hdr *head(struct pk_src *s, struct pk_ring *g)
{
	while (!g->blk) {
		struct tpacket_block_desc *bd =
			(struct tpacket_block_desc *)(g->map + (size_t)g->next * BLOCK_BYTES);
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) &
		      TP_STATUS_USER))
			return NULL;
		g->blk = bd;
		g->left = bd->hdr.bh1.num_pkts;
		g->h = (struct tpacket3_hdr *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
		if (!g->left)
			release(s, g);
	}
	return g->h;
}

/* The ring whose next frame is the oldest; NULL: no frame handed over. */
static struct pk_ring *oldest(struct pk_src *s)
{
	struct pk_ring *best = NULL;
	uint64_t best_ns = 0;

	for (unsigned i = 0; i < s->nring; i++) {
		struct tpacket3_hdr *h = head(s, &s->ring[i]);
		if (h && (!best || frame_ns(h) < best_ns)) {
			best = &s->ring[i];
			best_ns = frame_ns(h);
		}
	}
	return best;
}

/* The ring's next frame into the recording: 0, or NVT_PKTW_STOP (the frame stays next). */
static int take_frame(struct pk_src *s, struct pk_ring *g)
{
	struct tpacket3_hdr *h = g->h;
	uint64_t ts = frame_ns(h);
	uint8_t *p;

	if (ts < s->t_live) /* before the capture began (fanout) */
		goto next;
	if (!s->started && start(s))
		return NVT_PKTW_STOP;
	switch (nvt_pktw_reserve(&s->w, h->tp_snaplen, &p)) {
	case NVT_PKTW_OK:
		memcpy(p, (uint8_t *)h + h->tp_mac, h->tp_snaplen);
		nvt_pktw_commit(&s->w, ts, h->tp_snaplen, h->tp_len);
		break;
	case NVT_PKTW_FULL:
		s->w.ring_drops++;
		nvt_pktw_dropped(&s->w, 1);
		break;
	default:
		return NVT_PKTW_STOP;
	}
	if (ts < s->last_ts)
		s->backsteps++;
	s->last_ts = ts;
	g->frames++;
	if (s->cfg.hwstamp && !(h->tp_status & TP_STATUS_TS_RAW_HARDWARE))
		s->unstamped++;
next:
	g->h = (struct tpacket3_hdr *)((uint8_t *)h + h->tp_next_offset);
	if (!--g->left)
		release(s, g);
	return 0;
}

/* Sleep until a ring has a block for us, or ms. */
static int wait_frames(struct pk_src *s, int ms, struct nvt_err *err)
{
	struct pollfd pfd[FANOUT_MAX];

	for (unsigned i = 0; i < s->nring; i++)
		pfd[i] = (struct pollfd){.fd = s->ring[i].fd, .events = POLLIN | POLLERR};
	if (poll(pfd, s->nring, ms) < 0 && errno != EINTR) {
		nvt_err_set(err, errno, "packet: poll: %s", strerror(errno));
		return -err->code;
	}
	return 0;
}

static int pk_loop(struct pk_src *s, struct nvt_err *err)
{
	for (;;) {
		struct pk_ring *g = oldest(s);
		if (g) {
			if (take_frame(s, g) == NVT_PKTW_STOP)
				return NVT_PKTW_STOP;
			continue;
		}
		if (nvt_recorder_stopping(s->w.r) || nvt_pktw_at_limit(&s->w))
			return NVT_PKTW_STOP;
		if (wait_frames(s, POLL_MS, err))
			return -err->code;
	}
}

/* What the kernel had received when the capture stopped is kept: the blocks handed over, and
 * those it still fills, which it hands over within a block's time (at most a ring's worth: a
 * link that goes on sending does not hold the stop up). */
static void drain(struct pk_src *s, struct nvt_err *err)
{
	uint64_t blocks = 0, until, end_ns = nvt_mono_ns() + 3 * BLOCK_TOV_MS * 1000000ull;
	struct pk_ring *g;

	s->w.at_limit = s->w.size_limit_hit;
	s->w.duration_ns = 0;
	s->w.flags = NVT_ACQUIRE_DRAIN | NVT_ACQUIRE_NOWAIT;
	for (unsigned i = 0; i < s->nring; i++)
		blocks += s->ring[i].nblocks;
	until = s->released + blocks;
	while (!s->w.size_limit_hit && s->released < until) {
		if ((g = oldest(s))) {
			if (take_frame(s, g) == NVT_PKTW_STOP)
				break;
		} else if (nvt_mono_ns() >= end_ns || wait_frames(s, 1, err)) {
			break;
		}
	}
	for (unsigned i = 0; i < s->nring; i++)
		ring_stats(s, &s->ring[i]);
}

static void fanout_notice(const struct pk_src *s)
{
	static const char *const mode[] = {[PACKET_FANOUT_HASH] = "hash",
					   [PACKET_FANOUT_LB] = "lb",
					   [PACKET_FANOUT_CPU] = "cpu"};
	char msg[512];
	int n;

	if (s->nring < 2 || !s->a->notice)
		return;
	n = snprintf(msg, sizeof(msg), "packet:%s: fanout over %u sockets (%s): frames",
		     s->cfg.ifname, s->nring, mode[s->cfg.fanout_mode]);
	for (unsigned i = 0; i < s->nring && n > 0 && (size_t)n < sizeof(msg); i++)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, "%s%llu", i ? " + " : " ",
			      (unsigned long long)s->ring[i].frames);
	if (n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n,
			 "; %llu taken after a later one (a block the kernel still held)",
			 (unsigned long long)s->backsteps);
	s->a->notice(msg, s->a->notice_arg);
}

static void unstamped_notice(const struct pk_src *s)
{
	char msg[200];

	if (!s->unstamped || !s->a->notice)
		return;
	snprintf(msg, sizeof(msg),
		 "packet:%s: %llu frames carry the kernel's time, not the NIC's (it did not stamp "
		 "them)",
		 s->cfg.ifname, (unsigned long long)s->unstamped);
	s->a->notice(msg, s->a->notice_arg);
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
	for (unsigned i = 0; i < FANOUT_MAX; i++)
		s->ring[i].fd = -1;
	s->ctl = -1;
	s->a = a;
	rc = parse_cfg(a->arg, &s->cfg, err);
	if (!rc && s->cfg.filter[0] && !(rc = compile_filter(&s->cfg, &s->bpf, err)))
		s->prog = (struct sock_fprog){.len = (unsigned short)s->bpf.bf_len,
					      .filter = (struct sock_filter *)s->bpf.bf_insns};
	if (!rc && s->cfg.hwstamp) {
		s->ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		rc = s->ctl < 0 ? fail_errno(s, "socket", err) : hw_on(s, s->ctl, err);
	}
	for (unsigned i = 0; !rc && i < s->cfg.fanout; i++, s->nring++)
		rc = open_ring(s, &s->ring[i], err);
	if (!rc && s->nring > 1)
		rc = join_fanout(s, err);
	if (rc)
		goto out;
	nvt_pktw_init(&s->w, r, a, true); /* the limits count from here */
	rc = start(s); /* the recording is timed from here, not from its first frame */
	if (!rc)
		rc = pk_loop(s, err);
	if (rc == NVT_PKTW_STOP) {
		rc = nvt_pktw_fit_error(&s->w, "packet", "frame", s->cfg.snaplen, err);
		if (!rc)
			rc = s->w.at_limit ? NVT_SOURCE_AT_LIMIT : 0;
	}
	if (rc >= 0) {
		drain(s, err);
		if (!s->started) /* no frame came: the stream begins all the same */
			start(s);
		nvt_pktw_finish(&s->w, s->w.packets + s->kernel_drops + s->w.ring_drops,
				s->kernel_drops + s->w.ring_drops);
		fanout_notice(s);
		unstamped_notice(s);
	}
	rep->packets = s->w.packets;
	rep->kernel_drops = s->kernel_drops;
out:
	hw_off(s);
	for (unsigned i = 0; i < s->nring; i++) {
		if (s->ring[i].map)
			munmap(s->ring[i].map, s->ring[i].map_bytes);
		if (s->ring[i].fd >= 0)
			close(s->ring[i].fd);
	}
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->prog.len)
		pcap_freecode(&s->bpf);
	free(s);
	return rc;
}

const struct nvt_source_ops nvt_source_packet = {
	.name = "packet",
	.help = "frames captured on a network interface (AF_PACKET TPACKET_V3) as pcapng "
		"(packet:IFACE[,OPTION...]: filter=EXPR, promisc, snaplen=N, ring=SIZE, "
		"fanout=N[:hash|cpu|lb], hwstamp); the kernel's drops are indexed",
	.kind = NVT_SRC_PACKET,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_PACKETS,
	.check = pk_check,
	.run = pk_run,
	.describe = pk_describe,
};
