/* SPDX-License-Identifier: MIT */
/* packet sink: transmits a capture's Ethernet frames as they are on a network interface
 * (AF_PACKET), at the captured timing or a programmed rate (stream/pktplay.h): a replay of
 * whole-link traffic, the way tcpreplay does it. Frames of another link type (the udp source's
 * IPv4 packets) are skipped and counted: replay those through the udp sink. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "format/pcapng.h"
#include "nvtape/sink.h"
#include "stream/pktplay.h"

struct pkt_sink {
	struct nvt_pktplay pp; /* first: the nvt_pktplay_* sink functions take the state as it */
	char ifname[IF_NAMESIZE];
};

/* The frames of b[0..n-1] in one sendmmsg (more when the kernel takes fewer); frames of
 * another link type, and one longer than the interface's MTU, are skipped. */
static int pkt_send(void *ctx, const struct nvt_pcapng_block *b, unsigned n, unsigned *skipped,
		    struct nvt_err *err)
{
	struct pkt_sink *s = ctx;
	struct mmsghdr m[NVT_PKTPLAY_BATCH];
	struct iovec iov[NVT_PKTPLAY_BATCH];
	unsigned k = 0;

	for (unsigned i = 0; i < n && i < NVT_PKTPLAY_BATCH; i++) {
		if (b[i].linktype != LINKTYPE_ETHERNET || b[i].caplen < 14) {
			(*skipped)++;
			continue;
		}
		iov[k] = (struct iovec){(void *)b[i].data, b[i].caplen};
		m[k] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[k], .msg_iovlen = 1}};
		k++;
	}
	/* a frame longer than the interface's MTU is skipped */
	int rc = nvt_pktplay_sendmmsg(s->pp.fd, m, k, true, skipped);
	if (rc)
		nvt_err_set(err, -rc, "packet sink: send on %s: %s", s->ifname, strerror(-rc));
	return rc;
}

static int pkt_open(void **state, const struct nvt_sink_args *a, struct nvt_err *err)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET};
	struct pkt_sink *s;
	unsigned idx;

	if (!a->arg || !*a->arg || strlen(a->arg) >= IF_NAMESIZE ||
	    !(idx = if_nametoindex(a->arg))) {
		nvt_err_param(err, "the packet sink is packet:IFACE, a network interface of this "
				   "machine (ip link lists them)");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		nvt_err_set(err, ENOMEM, "no memory for the packet sink");
		return -ENOMEM;
	}
	strcpy(s->ifname, a->arg);
	/* protocol 0: this socket only sends, it receives nothing */
	s->pp.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	sll.sll_ifindex = (int)idx;
	if (s->pp.fd < 0 || bind(s->pp.fd, (struct sockaddr *)&sll, sizeof(sll))) {
		nvt_err_set(err, errno, "packet sink: %s: %s%s", a->arg, strerror(errno),
			    errno == EPERM ? " (sending raw frames needs CAP_NET_RAW: run as root)"
					   : "");
		if (s->pp.fd >= 0)
			close(s->pp.fd);
		free(s);
		return -err->code;
	}
	nvt_pktplay_init(&s->pp, a, s->pp.fd, pkt_send, s);
	*state = s;
	return 0;
}

const struct nvt_sink_ops nvt_sink_packet = {
	.name = "packet",
	.help = "transmits a capture's Ethernet frames on packet:IFACE at the captured timing "
		"(--timing original, --speed) or a rate",
	.caps = NVT_SINK_PACKETS,
	.open = pkt_open,
	.consume = nvt_pktplay_consume,
	.pass_start = nvt_pktplay_pass_start,
	.close = nvt_pktplay_close,
	.report = nvt_pktplay_report,
};
