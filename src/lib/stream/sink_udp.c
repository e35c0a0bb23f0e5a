/* SPDX-License-Identifier: MIT */
/* udp sink: replays a packet recording's UDP datagrams, payload for payload, to HOST:PORT (or
 * to HOST and each datagram's recorded destination port; HOST an IPv4 or IPv6 address, [in
 * brackets] with a port, or a name), at the captured timing or a programmed rate
 * (stream/pktplay.h). Packets that are not UDP over IPv4 or IPv6 are skipped and counted. A packet
 * with a deadline is sent alone, at it; without deadlines (--timing fast, no rate) in batches of up
 * to 64 through sendmmsg. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/netpkt.h"
#include "nvtape/sink.h"
#include "nvtape/units.h"
#include "stream/pktplay.h"

struct udp_sink {
	struct nvt_pktplay pp; /* first: the nvt_pktplay_* sink functions take the state as it */
	struct sockaddr_storage to; /* the port at the same place for IPv4 and IPv6 */
	socklen_t to_len;
	char host[256];
	bool fixed_port; /* HOST:PORT: connected; HOST: the recorded ports */
};

/* The payloads of b[0..n-1] in one sendmmsg (more when the kernel takes fewer); packets that
 * are not UDP are skipped. */
static int udp_send(void *ctx, const struct nvt_pcapng_block *b, unsigned n, unsigned *skipped,
		    struct nvt_err *err)
{
	struct udp_sink *s = ctx;
	struct mmsghdr m[NVT_PKTPLAY_BATCH];
	struct iovec iov[NVT_PKTPLAY_BATCH];
	struct sockaddr_storage to[NVT_PKTPLAY_BATCH];
	unsigned k = 0;

	for (unsigned i = 0; i < n && i < NVT_PKTPLAY_BATCH; i++) {
		struct nvt_udp_view u;
		if (!nvt_udp_find(b[i].linktype, b[i].data, b[i].caplen, &u)) {
			(*skipped)++;
			continue;
		}
		iov[k] = (struct iovec){(void *)u.payload, u.len};
		m[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
		if (!s->fixed_port) { /* each to the port it was sent to */
			to[k] = s->to;
			((struct sockaddr_in *)&to[k])->sin_port = u.dport;
			m[k].msg_hdr.msg_name = &to[k];
			m[k].msg_hdr.msg_namelen = s->to_len;
		}
		k++;
	}
	int rc = nvt_pktplay_sendmmsg(s->pp.fd, m, k, false, skipped);
	if (rc)
		nvt_err_set(err, -rc, "udp sink: send to %s: %s", s->host, strerror(-rc));
	return rc;
}

static int udp_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	struct udp_sink *s;
	char host[256], *colon;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
	uint64_t port = 0;

	if (!a->arg || !*a->arg || strlen(a->arg) >= sizeof(host)) {
		nvt_err_param(err,
			      "the udp sink is udp:HOST:PORT (every datagram to PORT) or "
			      "udp:HOST (each to the port it was sent to); an IPv6 HOST with a "
			      "port in brackets: udp:[fd00::2]:4000");
		return -EINVAL;
	}
	strcpy(host, a->arg);
	colon = strrchr(host, ':');
	if (host[0] == '[') { /* [IPv6], [IPv6]:PORT */
		char *end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':')) {
			nvt_err_param(err, "udp:%s: an IPv6 address in brackets, then :PORT",
				      a->arg);
			return -EINVAL;
		}
		colon = end[1] ? end + 1 : NULL;
		*end = 0;
		memmove(host, host + 1, strlen(host)); /* the port's text stays where it is */
	} else if (colon && strchr(host, ':') != colon) {
		colon = NULL; /* a bare IPv6 address: no port */
	}
	if (colon) {
		*colon = 0;
		if (nvt_parse_uint(colon + 1, 1, 65535, &port)) {
			nvt_err_param(err, "udp:%s: the port is a number from 1 to 65535", a->arg);
			return -EINVAL;
		}
	}
	int rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc || !ai) {
		nvt_err_param(err, "udp:%s: no address for %s (%s)", a->arg, host,
			      gai_strerror(rc));
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		freeaddrinfo(ai);
		nvt_err_set(err, ENOMEM, "no memory for the udp sink");
		return -ENOMEM;
	}
	memcpy(&s->to, ai->ai_addr, ai->ai_addrlen);
	s->to_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	snprintf(s->host, sizeof(s->host), "%s", host);
	((struct sockaddr_in *)&s->to)->sin_port = htons((uint16_t)port);
	s->fixed_port = port != 0;
	s->pp.fd = socket(s->to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int big = 4 << 20;
	if (s->pp.fd < 0 || setsockopt(s->pp.fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big)) ||
	    (s->fixed_port && connect(s->pp.fd, (struct sockaddr *)&s->to, s->to_len))) {
		nvt_err_set(err, errno, "udp sink: %s: %s", a->arg, strerror(errno));
		if (s->pp.fd >= 0)
			close(s->pp.fd);
		free(s);
		return -err->code;
	}
	nvt_pktplay_init(&s->pp, a, s->pp.fd, udp_send, s);
	*state = s;
	return 0;
}

const struct nvt_sink_ops nvt_sink_udp = {
	.name = "udp",
	.help = "sends a packet recording's UDP datagrams to udp:HOST:PORT (or udp:HOST: their "
		"own ports) at the captured timing (--timing original, --speed) or a rate",
	.caps = NVT_SINK_PACKETS,
	.open = udp_open,
	.consume = nvt_pktplay_consume,
	.pass_start = nvt_pktplay_pass_start,
	.close = nvt_pktplay_close,
	.report = nvt_pktplay_report,
};
