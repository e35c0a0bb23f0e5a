/* SPDX-License-Identifier: MIT */
/* udp source: datagrams on one or more ports (a range, a multicast group) recorded as a pcapng
 * stream (docs/packets.md), each datagram behind the IPv4 or IPv6 and UDP headers it came
 * with, so its boundaries, addresses, ports and receive time (the kernel's, in ns) are kept and
 * Wireshark's tools read an export as it is.
 *
 *   udp:[ADDR:]PORT[-LAST][,PORT[-LAST]...][,rcvbuf=SIZE][,snaplen=BYTES][,iface=NAME]
 *
 * ADDR is an IPv4 address or an IPv6 one in brackets ([::] takes IPv4 and IPv6 datagrams,
 * [ff15::1] joins an IPv6 group); none: IPv4 on every local address.
 *
 * recvmmsg takes up to 64 datagrams a call from each socket; each is copied once into the
 * ring. A UDP socket overflows in the kernel when it is not read in time, so this source never
 * waits for the storage: a datagram that finds no free chunk is dropped and counted. Losses:
 * the kernel's count of datagrams the socket had no room for (SO_RXQ_OVFL, delivered with every
 * datagram, so each loss is placed right before the first datagram after it) and, with a check
 * (a counter in the payload, vita49, vdif), sequence gaps. With a check the gaps go into the
 * drop index (they see loss anywhere upstream) and the kernel's count is kept beside them;
 * without one the kernel's count does. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/net_tstamp.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/netpkt.h"
#include "format/pcapng.h"
#include "nvtape/format.h"
#include "nvtape/meta.h"
#include "nvtape/units.h"
#include "stream/pktcheck.h"
#include "stream/pktwriter.h"
#include "util/sysutil.h"

#define UDP_MAX_SOCKS    64
#define UDP_BATCH        64
#define UDP_RCVBUF       (32u << 20) /* asked by default: a second of 256 Mb/s */
#define UDP_MAX_PAYLOAD  65507u      /* IPv4: 65535 - 20 - 8 */
#define UDP6_MAX_PAYLOAD 65527u      /* IPv6 without jumbograms: 65535 - 8 */
#define UDP_POLL_MS      100
#define UDP_DRAIN_MAX    (1u << 16) /* datagrams taken after a stop at most */

struct udp_cfg {
	int family;            /* AF_INET or AF_INET6 */
	struct in_addr addr;   /* INADDR_ANY, a local address, or a multicast group */
	struct in6_addr addr6; /* the same for AF_INET6 (in6addr_any: IPv4 too) */
	char addr_text[INET6_ADDRSTRLEN];
	bool multicast;
	uint16_t port[UDP_MAX_SOCKS];
	unsigned nport;
	uint64_t rcvbuf;
	uint32_t snaplen; /* payload bytes kept of each datagram (default: the most it can have) */
	bool snap_given;
	char iface[IF_NAMESIZE];
};

static int cfg_error(struct nvt_err *err, const char *arg, const char *what)
{
	nvt_err_param(err,
		      "udp:%s: %s (udp:[ADDR:]PORT[-LAST][,PORT...][,rcvbuf=SIZE]"
		      "[,snaplen=BYTES][,iface=NAME], e.g. udp:4000, udp:239.1.2.3:5000-5003 or "
		      "udp:[::]:4000)",
		      arg, what);
	return -EINVAL;
}

static int add_ports(struct udp_cfg *c, const char *s, const char *arg, struct nvt_err *err)
{
	uint64_t first, last;
	char buf[32];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return cfg_error(err, arg, "a port is a number from 1 to 65535");
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (nvt_parse_uint(buf, 1, 65535, &first) ||
	    (dash && nvt_parse_uint(dash + 1, 1, 65535, &last)))
		return cfg_error(err, arg, "a port is a number from 1 to 65535");
	if (!dash)
		last = first;
	if (last < first)
		return cfg_error(err, arg, "a port range runs from the lower port to the higher");
	for (uint64_t p = first; p <= last; p++) {
		if (c->nport == UDP_MAX_SOCKS)
			return cfg_error(err, arg, "more than 64 ports");
		for (unsigned i = 0; i < c->nport; i++)
			if (c->port[i] == p)
				return cfg_error(err, arg, "a port given twice");
		c->port[c->nport++] = (uint16_t)p;
	}
	return 0;
}

static int parse_cfg(const char *arg, struct udp_cfg *c, struct nvt_err *err)
{
	char buf[512], *save = NULL, *tok;
	bool first = true;

	memset(c, 0, sizeof(*c));
	c->family = AF_INET;
	c->addr.s_addr = htonl(INADDR_ANY);
	c->rcvbuf = UDP_RCVBUF;
	c->snaplen = UDP_MAX_PAYLOAD;
	if (!arg || !*arg)
		return cfg_error(err, "", "give the port to receive on");
	if (strlen(arg) >= sizeof(buf))
		return cfg_error(err, arg, "too long");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), first = false) {
		char *eq = strchr(tok, '=');
		if (eq) {
			uint64_t v;
			*eq = 0;
			if (!strcmp(tok, "rcvbuf")) {
				if (nvt_parse_size(eq + 1, &v) || v < 4096 || v > (1u << 30))
					return cfg_error(err, arg,
							 "rcvbuf is a size from 4K to 1G");
				c->rcvbuf = v;
			} else if (!strcmp(tok, "snaplen")) {
				if (nvt_parse_uint(eq + 1, 1, UDP6_MAX_PAYLOAD, &v))
					return cfg_error(err, arg,
							 "snaplen is a byte count from 1 to 65527");
				c->snaplen = (uint32_t)v;
				c->snap_given = true;
			} else if (!strcmp(tok, "iface")) {
				if (!eq[1] || strlen(eq + 1) >= IF_NAMESIZE)
					return cfg_error(err, arg,
							 "iface names a network interface");
				strcpy(c->iface, eq + 1);
			} else {
				return cfg_error(err, arg,
						 "options are rcvbuf=, snaplen= and iface=");
			}
			continue;
		}
		char *colon = strrchr(tok, ':');
		if (colon) {
			if (!first)
				return cfg_error(err, arg,
						 "the address goes before the first port");
			*colon = 0;
			if (*tok == '[' && colon[-1] == ']') {
				colon[-1] = 0;
				c->family = AF_INET6;
				if (inet_pton(AF_INET6, tok + 1, &c->addr6) != 1)
					return cfg_error(err, arg,
							 "the address in brackets is an IPv6 "
							 "address ([::] for IPv4 and IPv6)");
			} else if (*tok && inet_pton(AF_INET, tok, &c->addr) != 1) {
				return cfg_error(
					err, arg,
					"the address is an IPv4 address (a local one, or a "
					"multicast group to join) or an IPv6 one in brackets");
			}
			tok = colon + 1;
		}
		if (add_ports(c, tok, arg, err))
			return -EINVAL;
	}
	if (!c->nport)
		return cfg_error(err, arg, "give the port to receive on");
	if (c->family == AF_INET6 && !c->snap_given)
		c->snaplen = UDP6_MAX_PAYLOAD; /* an IPv6 datagram is up to 20 bytes longer */
	c->multicast = c->family == AF_INET6 ? IN6_IS_ADDR_MULTICAST(&c->addr6)
					     : IN_MULTICAST(ntohl(c->addr.s_addr));
	inet_ntop(c->family, c->family == AF_INET6 ? (void *)&c->addr6 : (void *)&c->addr,
		  c->addr_text, sizeof(c->addr_text));
	if (c->iface[0] && !if_nametoindex(c->iface))
		return cfg_error(err, arg, "no network interface of that name");
	return 0;
}

/* The socket of one port: bound, timestamps and the overflow count on, the receive buffer
 * asked for (beyond net.core.rmem_max with CAP_NET_ADMIN). *got: the buffer it has. */
static int open_sock(const struct udp_cfg *c, uint16_t port, int *got, struct nvt_err *err)
{
	bool v6 = c->family == AF_INET6;
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = c->addr};
	struct sockaddr_in6 sa6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = c->addr6};
	int fd = socket(c->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1, zero = 0;
	int want = (int)c->rcvbuf, have = 0;
	unsigned ifindex = c->iface[0] ? if_nametoindex(c->iface) : 0;
	socklen_t len = sizeof(have);

	if (fd < 0) {
		nvt_err_set(err, errno, "udp: socket: %s%s", strerror(errno),
			    v6 && errno == EAFNOSUPPORT ? " (IPv6 is off on this machine)" : "");
		return -err->code;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) ||
	    (v6 && (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) ||
		    /* [::]: IPv4 datagrams too */
		    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)))) ||
	    (c->multicast && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) ||
	    (c->iface[0] &&
	     setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->iface, (socklen_t)strlen(c->iface)))) {
		nvt_err_set(err, errno, "udp: socket options: %s", strerror(errno));
		goto fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &have, &len);
	*got = have / 2; /* the kernel reports twice what it grants the data */
	if (v6 ? bind(fd, (struct sockaddr *)&sa6, sizeof(sa6))
	       : bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		nvt_err_set(err, errno, "udp: cannot receive on %s%s%s:%u: %s%s", v6 ? "[" : "",
			    c->addr_text, v6 ? "]" : "", port, strerror(errno),
			    errno == EADDRINUSE ? " (another program receives there: stop it or "
						  "choose another port)"
			    : errno == EADDRNOTAVAIL ? " (not an address of this machine)"
						     : "");
		goto fail;
	}
	if (c->multicast) {
		struct ip_mreqn m = {.imr_multiaddr = c->addr, .imr_ifindex = (int)ifindex};
		struct ipv6_mreq m6 = {.ipv6mr_multiaddr = c->addr6, .ipv6mr_interface = ifindex};
		if (v6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m6, sizeof(m6))
		       : setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m))) {
			nvt_err_set(err, errno, "udp: cannot join %s: %s%s", c->addr_text,
				    strerror(errno),
				    c->iface[0] ? "" : " (name the interface: ,iface=NAME)");
			goto fail;
		}
	}
	return fd;
fail:
	close(fd);
	return -err->code;
}

static int udp_check(const struct nvt_source_args *a, struct nvt_err *err)
{
	struct udp_cfg c;
	struct nvt_pktcheck pc;

	if (parse_cfg(a->arg, &c, err))
		return -EINVAL;
	if (a->check && nvt_pktcheck_parse(a->check, &pc, err))
		return -EINVAL;
	char what[96];
	snprintf(what, sizeof(what), "udp:%.80s", a->arg);
	if (nvt_pktw_check_chunk(a, what, "datagram",
				 c.family == AF_INET6 ? NVT_IPV6_UDP_HDR : NVT_IPV4_UDP_HDR,
				 c.snaplen, err))
		return -EINVAL;
	/* the ports free now: a taken one is refused before the recording is created */
	for (unsigned i = 0; i < c.nport; i++) {
		int got, fd = open_sock(&c, c.port[i], &got, err);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}

static char *udp_describe(const struct nvt_source_args *a, const char *meta)
{
	struct udp_cfg c;
	struct nvt_err err;

	if (parse_cfg(a->arg, &c, &err))
		return NULL;
	char *m = nvt_meta_set(meta, "nvtape:packets",
			       c.family == AF_INET6 ? "pcapng, LINKTYPE_RAW (IPv4 or IPv6 + UDP)"
						    : "pcapng, LINKTYPE_RAW (IPv4 + UDP)");
	if (m && a->check) {
		char *m2 = nvt_meta_set(m, "nvtape:packet_check", a->check);
		free(m);
		m = m2;
	}
	return m;
}

struct udp_src {
	struct udp_cfg cfg;
	int fd[UDP_MAX_SOCKS];
	uint32_t ovfl[UDP_MAX_SOCKS]; /* the kernel's overflow count seen last */
	struct nvt_pktw w;
	struct nvt_pktcheck pc;
	bool checking;
	uint64_t kernel_drops, gap_drops, received;
	/* the batch's datagrams from pend_i on were not taken when a stop came (pend_i counted
	 * already): the drain takes them first */
	unsigned pend_sock, pend_i, pend_n;
	/* recvmmsg's batch */
	struct mmsghdr msg[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} from[UDP_BATCH];
	char ctl[UDP_BATCH][CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(uint32_t)) +
			    CMSG_SPACE(sizeof(struct in_pktinfo)) +
			    CMSG_SPACE(sizeof(struct in6_pktinfo))];
	uint8_t *buf; /* UDP_BATCH x (snaplen + 1) */
};

/* One datagram of the batch: losses before it (unless counted already), then the datagram.
 * 0, or NVT_PKTW_STOP. */
static int take(struct udp_src *s, unsigned sock, unsigned i, bool counted)
{
	struct msghdr *h = &s->msg[i].msg_hdr;
	uint64_t ts = 0, lost = 0;
	uint32_t dst = s->cfg.addr.s_addr, len = s->msg[i].msg_len, keep, hdr;
	struct in6_addr dst6 = s->cfg.addr6, src6;
	uint8_t *data, *payload = s->iov[i].iov_base;
	bool v6 = s->from[i].v6.sin6_family == AF_INET6;
	uint16_t sport = v6 ? s->from[i].v6.sin6_port : s->from[i].v4.sin_port;
	uint32_t src = s->from[i].v4.sin_addr.s_addr;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec t;
			memcpy(&t, CMSG_DATA(cm), sizeof(t));
			ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
		} else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL) {
			uint32_t o;
			memcpy(&o, CMSG_DATA(cm), sizeof(o));
			lost = (uint32_t)(o - s->ovfl[sock]);
			s->ovfl[sock] = o;
		} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			dst = pi.ipi_addr.s_addr;
		} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			dst6 = pi.ipi6_addr;
		}
	}
	src6 = s->from[i].v6.sin6_addr;
	if (v6 && IN6_IS_ADDR_V4MAPPED(&src6)) { /* an IPv4 datagram on a [::] socket */
		v6 = false;
		memcpy(&src, src6.s6_addr + 12, 4);
		if (IN6_IS_ADDR_V4MAPPED(&dst6))
			memcpy(&dst, dst6.s6_addr + 12, 4);
	}
	hdr = v6 ? NVT_IPV6_UDP_HDR : NVT_IPV4_UDP_HDR;
	if (!ts)
		ts = nvt_real_ns();
	keep = len < s->cfg.snaplen ? len : s->cfg.snaplen;
	if (!counted) {
		s->kernel_drops += lost;
		if (s->checking) {
			uint64_t missing = nvt_pktcheck_packet(&s->pc, payload, keep);
			s->gap_drops += missing;
			nvt_pktw_dropped(&s->w, missing);
			nvt_recorder_check_counts(s->w.r, &s->pc.cc.counts);
		} else {
			nvt_pktw_dropped(&s->w, lost);
		}
	}
	switch (nvt_pktw_reserve(&s->w, hdr + keep, &data)) {
	case NVT_PKTW_OK:
		if (v6)
			nvt_ipv6_udp_header(data, src6.s6_addr, sport, dst6.s6_addr,
					    htons(s->cfg.port[sock]), len);
		else
			nvt_ipv4_udp_header(data, src, sport, dst, htons(s->cfg.port[sock]), len);
		memcpy(data + hdr, payload, keep);
		nvt_pktw_commit(&s->w, ts, hdr + keep, hdr + len);
		s->received++;
		return 0;
	case NVT_PKTW_FULL:
		s->w.ring_drops++;
		nvt_pktw_dropped(&s->w, 1);
		s->received++;
		return 0;
	default:
		return NVT_PKTW_STOP;
	}
}

/* Losses after the last datagram: the kernel tells them with the next datagram only, so the
 * sockets' own drop counts (SO_MEMINFO) are read at the end. */
static void tail_drops(struct udp_src *s)
{
	for (unsigned i = 0; i < s->cfg.nport; i++) {
		uint32_t mi[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mi);
		if (getsockopt(s->fd[i], SOL_SOCKET, SO_MEMINFO, mi, &len) ||
		    len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
			continue;
		uint32_t more = mi[SK_MEMINFO_DROPS] - s->ovfl[i];
		if (more < (1u << 31)) { /* the count only grows (modulo 2^32) */
			s->ovfl[i] = mi[SK_MEMINFO_DROPS];
			s->kernel_drops += more;
			if (!s->checking)
				nvt_pktw_dropped(&s->w, more);
		}
	}
}

/* Datagrams from..n of the batch: 0, or NVT_PKTW_STOP with the rest kept for the drain. */
static int take_batch(struct udp_src *s, unsigned sock, unsigned from, unsigned n)
{
	for (unsigned i = from; i < n; i++)
		if (take(s, sock, i, i == from && s->pend_n) == NVT_PKTW_STOP) {
			s->pend_sock = sock;
			s->pend_i = i;
			s->pend_n = n;
			return NVT_PKTW_STOP;
		}
	s->pend_n = 0;
	return 0;
}

/* Read what one socket has: 1 = datagrams came, 0 = none, NVT_PKTW_STOP, or -errno. */
static int drain_sock(struct udp_src *s, unsigned sock, struct nvt_err *err)
{
	int n;

	for (unsigned i = 0; i < UDP_BATCH; i++) {
		s->msg[i].msg_hdr.msg_controllen = sizeof(s->ctl[i]);
		s->msg[i].msg_hdr.msg_namelen = sizeof(s->from[i]);
	}
	n = recvmmsg(s->fd[sock], s->msg, UDP_BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		nvt_err_set(err, errno, "udp: receive on port %u: %s", s->cfg.port[sock],
			    strerror(errno));
		return -err->code;
	}
	return take_batch(s, sock, 0, (unsigned)n) ? NVT_PKTW_STOP : n > 0;
}

static int udp_loop(struct udp_src *s, struct nvt_err *err)
{
	struct pollfd pfd[UDP_MAX_SOCKS];

	for (unsigned i = 0; i < s->cfg.nport; i++)
		pfd[i] = (struct pollfd){.fd = s->fd[i], .events = POLLIN};
	for (;;) {
		int pr = poll(pfd, s->cfg.nport, UDP_POLL_MS);
		if (pr < 0 && errno != EINTR) {
			nvt_err_set(err, errno, "udp: poll: %s", strerror(errno));
			return -err->code;
		}
		if (nvt_recorder_stopping(s->w.r))
			return NVT_PKTW_STOP;
		if (pr <= 0) {
			if (nvt_pktw_at_limit(&s->w)) /* silent: the duration still counts */
				return NVT_PKTW_STOP;
			continue;
		}
		for (unsigned i = 0; i < s->cfg.nport; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			int rc = drain_sock(s, i, err);
			if (rc < 0 || rc == NVT_PKTW_STOP)
				return rc;
		}
	}
}

static void rcvbuf_notice(const struct nvt_source_args *a, const struct udp_cfg *c, int got)
{
	char msg[320];

	if (!a->notice || (uint64_t)got >= c->rcvbuf)
		return;
	snprintf(msg, sizeof(msg),
		 "udp: the receive buffer is %d KiB of the %llu KiB asked: net.core.rmem_max "
		 "caps it without CAP_NET_ADMIN (run as root, or raise the sysctl); a burst "
		 "longer than it holds is lost in the kernel (counted)",
		 got >> 10, (unsigned long long)(c->rcvbuf >> 10));
	a->notice(msg, a->notice_arg);
}

static int udp_run(struct nvt_recorder *r, const struct nvt_source_args *a,
		   struct nvt_source_report *rep, struct nvt_err *err)
{
	struct udp_src *s = calloc(1, sizeof(*s));
	char name[64], desc[96];
	int rc = 0, got = 0;
	unsigned nopen = 0;

	if (!s) {
		nvt_err_set(err, ENOMEM, "no memory for the udp source");
		return -ENOMEM;
	}
	if (parse_cfg(a->arg, &s->cfg, err) ||
	    (a->check && nvt_pktcheck_parse(a->check, &s->pc, err))) {
		rc = -EINVAL;
		goto out;
	}
	s->checking = a->check != NULL;
	s->buf = malloc((size_t)UDP_BATCH * (s->cfg.snaplen + 1u));
	if (!s->buf) {
		nvt_err_set(err, ENOMEM, "no memory for the udp source's receive batch");
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < UDP_BATCH; i++) {
		/* one byte more than kept: MSG_TRUNC then tells the datagram's whole length */
		s->iov[i] = (struct iovec){s->buf + (size_t)i * (s->cfg.snaplen + 1u),
					   s->cfg.snaplen + 1u};
		s->msg[i].msg_hdr = (struct msghdr){.msg_name = &s->from[i],
						    .msg_iov = &s->iov[i],
						    .msg_iovlen = 1,
						    .msg_control = s->ctl[i]};
	}
	for (; nopen < s->cfg.nport; nopen++) {
		int fd = open_sock(&s->cfg, s->cfg.port[nopen], &got, err);
		if (fd < 0) {
			rc = fd;
			goto out;
		}
		s->fd[nopen] = fd;
	}
	rcvbuf_notice(a, &s->cfg, got);
	snprintf(name, sizeof(name), "udp:%.56s", a->arg);
	snprintf(desc, sizeof(desc), "UDP datagrams on %u port%s, receive buffer %d KiB",
		 s->cfg.nport, s->cfg.nport > 1 ? "s" : "", got >> 10);
	nvt_pktw_init(&s->w, r, a, true);
	if (nvt_pktw_start(&s->w, LINKTYPE_RAW,
			   (s->cfg.family == AF_INET6 ? NVT_IPV6_UDP_HDR : NVT_IPV4_UDP_HDR) +
				   s->cfg.snaplen,
			   name, desc))
		goto out; /* stopped before it began */
	rc = udp_loop(s, err);
	if (rc == NVT_PKTW_STOP) {
		rc = nvt_pktw_fit_error(&s->w, "udp", "datagram", s->cfg.snaplen, err);
		if (!rc)
			rc = s->w.at_limit ? NVT_SOURCE_AT_LIMIT : 0;
	}
	if (rc >= 0 && (!s->w.at_limit || !s->w.size_limit_hit)) {
		/* stopped, or at the duration: what the sockets hold arrived before, and is kept */
		unsigned taken = 0;
		s->w.at_limit = false;
		s->w.duration_ns = 0;
		s->w.flags = NVT_ACQUIRE_DRAIN | NVT_ACQUIRE_NOWAIT;
		int d = s->pend_n ? take_batch(s, s->pend_sock, s->pend_i, s->pend_n) : 0;
		for (unsigned i = 0; d == 0 && i < s->cfg.nport && taken < UDP_DRAIN_MAX; i++)
			while (taken < UDP_DRAIN_MAX && (d = drain_sock(s, i, err)) == 1)
				taken += UDP_BATCH;
		s->w.at_limit = rc == NVT_SOURCE_AT_LIMIT;
		if (d < 0)
			rc = d; /* a receive failed (err says how) */
	}
	if (rc >= 0)
		tail_drops(s);
	if (rc >= 0 && s->kernel_drops > s->gap_drops && s->checking)
		/* lost in the kernel but not seen as gaps (after the last datagram, or beyond
		 * what a short counter tells apart): indexed at the end */
		nvt_pktw_dropped(&s->w, s->kernel_drops - s->gap_drops);
	if (rc >= 0)
		/* received counts the datagrams that found no chunk too */
		nvt_pktw_finish(&s->w, s->received + s->kernel_drops,
				s->kernel_drops + s->w.ring_drops);
	rep->packets = s->w.packets;
	rep->kernel_drops = s->kernel_drops;
out:
	for (unsigned i = 0; i < nopen; i++)
		close(s->fd[i]);
	free(s->buf);
	free(s);
	return rc;
}

const struct nvt_source_ops nvt_source_udp = {
	.name = "udp",
	.help = "UDP datagrams on ports or a multicast group, kept whole with receive times as "
		"pcapng (udp:[ADDR:]PORT[-LAST][,rcvbuf=SIZE]); losses the kernel counts and "
		"sequence gaps (--check counter:..., vita49, vdif) are indexed",
	.kind = NVT_SRC_UDP,
	.unit_bytes = 1,
	.caps = NVT_SOURCE_NEEDS_ARG | NVT_SOURCE_NEVER_STALLS | NVT_SOURCE_PACKETS,
	.check = udp_check,
	.run = udp_run,
	.describe = udp_describe,
};
