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
	int fd;
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
	for (unsigned done = 0; done < k;) {
		int r = sendmmsg(s->fd, m + done, k - done, 0);
		if (r > 0) {
			done += (unsigned)r;
			continue;
		}
		if (r < 0 && (errno == EINTR || errno == ENOBUFS))
			continue;
		if (r < 0 && errno == EMSGSIZE) { /* this frame is longer than the MTU */
			(*skipped)++;
			done++;
			continue;
		}
		nvt_err_set(err, r < 0 ? errno : EIO, "packet sink: send on %s: %s", s->ifname,
			    strerror(r < 0 ? errno : EIO));
		return -err->code;
	}
	return 0;
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
	s->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	sll.sll_ifindex = (int)idx;
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		nvt_err_set(err, errno, "packet sink: %s: %s%s", a->arg, strerror(errno),
			    errno == EPERM ? " (sending raw frames needs CAP_NET_RAW: run as root)"
					   : "");
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return -err->code;
	}
	nvt_pktplay_init(&s->pp, a, pkt_send, s);
	*state = s;
	return 0;
}

static void pkt_close(void *state)
{
	struct pkt_sink *s = state;

	nvt_pktplay_free(&s->pp);
	close(s->fd);
	free(s);
}

const struct nvt_sink_ops nvt_sink_packet = {
	.name = "packet",
	.help = "transmits a capture's Ethernet frames on packet:IFACE at the captured timing "
		"(--timing original, --speed) or a rate",
	.caps = NVT_SINK_PACKETS,
	.open = pkt_open,
	.consume = nvt_pktplay_consume,
	.pass_start = nvt_pktplay_pass_start,
	.close = pkt_close,
	.report = nvt_pktplay_report,
};
