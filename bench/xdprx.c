/* SPDX-License-Identifier: MIT */
/* xdprx: an AF_XDP receiver for bench/afxdp, to measure whether AF_XDP beats the packet source's
 * AF_PACKET TPACKET_V3 ring. Binds one AF_XDP socket (libxdp's xsk API, with libxdp's default
 * XDP program that redirects every frame of the queue to the socket) to one interface queue,
 * in native (driver) or generic (skb) mode, and copies every frame it receives once into a
 * large in-memory buffer laid out as pcapng Enhanced Packet Blocks (as a recorder copies a
 * frame into its ring chunk; the buffer wraps around, nothing is written to a file). Counts
 * frames and bytes, and at SIGINT/SIGTERM or after -t seconds prints one line:
 *
 *   RX frames=N bytes=N udp=N drops=N rx_dropped=N rx_ring_full=N rx_fill_ring_empty_descs=N
 *      rx_invalid_descs=N seconds=S cpu_s=S wraps=N mode=native|generic bind=copy|zerocopy|auto
 *
 * drops = rx_dropped + rx_ring_full + rx_invalid_descs (the socket's XDP_STATISTICS; frames
 * the XDP program could not redirect are not in them: compare with the sender's count). "READY"
 * is printed on stdout once the socket is bound. Times: one CLOCK_REALTIME read per batch
 * (AF_XDP gives no per-frame time stamp without driver metadata).
 *
 *   xdprx -i IFACE [-q QUEUE] [-N | -S] [-c | -z] [-t SECONDS] [-b BUFFER_MIB] [-f FRAMES]
 *         [-s | -w USEC]
 *   -N native mode (XDP_FLAGS_DRV_MODE, the default), -S generic mode (XDP_FLAGS_SKB_MODE),
 *   -c copy mode (XDP_COPY), -z zero-copy (XDP_ZEROCOPY; neither: the kernel chooses),
 *   -f UMEM frames of 4 KiB (default 16384: 64 MiB), -b buffer (default 256 MiB),
 *   -s busy-poll the rx ring instead of sleeping in poll(), -w sleep USEC microseconds when
 *   the rx ring is empty instead of poll() (frames gather in the ring: no wake-up per frame).
 *
 * Build (Debian 12: apt-get install libxdp-dev libbpf-dev):
 *   gcc -O2 -Wall -Wextra -o build/xdprx bench/xdprx.c -lxdp -lbpf
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xdp/xsk.h>

#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define BATCH      64
#define EPB_HDR    28u /* type, length, interface, time high/low, captured, original */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static int usage(void)
{
	fprintf(stderr, "usage: xdprx -i IFACE [-q QUEUE] [-N | -S] [-c | -z] [-t SECONDS] "
			"[-b BUFFER_MIB] [-f FRAMES] [-s | -w USEC]\n");
	return 64;
}

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

int main(int argc, char **argv)
{
	const char *ifname = NULL, *mode = "native", *bind_mode = "auto";
	uint32_t queue = 0, nframes = 16384, xdp_flags = XDP_FLAGS_DRV_MODE;
	uint16_t bind_flags = 0;
	double secs = 0;
	size_t buf_size = (size_t)256 << 20;
	int spin = 0, opt;
	long nap_us = 0;

	while ((opt = getopt(argc, argv, "i:q:NSczt:b:f:sw:")) != -1) {
		switch (opt) {
		case 'i':
			ifname = optarg;
			break;
		case 'q':
			queue = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'N':
			xdp_flags = XDP_FLAGS_DRV_MODE;
			mode = "native";
			break;
		case 'S':
			xdp_flags = XDP_FLAGS_SKB_MODE;
			mode = "generic";
			break;
		case 'c':
			bind_flags = XDP_COPY;
			bind_mode = "copy";
			break;
		case 'z':
			bind_flags = XDP_ZEROCOPY;
			bind_mode = "zerocopy";
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		case 'b':
			buf_size = (size_t)strtoul(optarg, NULL, 10) << 20;
			break;
		case 'f':
			nframes = pow2_at_least((uint32_t)strtoul(optarg, NULL, 10));
			break;
		case 's':
			spin = 1;
			break;
		case 'w':
			nap_us = strtol(optarg, NULL, 10);
			break;
		default:
			return usage();
		}
	}
	if (!ifname || optind != argc || nframes < 2 * BATCH || buf_size < (1u << 20))
		return usage();

	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
	setrlimit(RLIMIT_MEMLOCK, &unlimited); /* kernels before 5.11 count BPF maps there */

	size_t umem_size = (size_t)nframes * FRAME_SIZE;
	void *umem_area = mmap(NULL, umem_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint8_t *buf = mmap(NULL, buf_size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (umem_area == MAP_FAILED || buf == MAP_FAILED) {
		perror("xdprx: mmap");
		return 1;
	}

	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp, rx;
	struct xsk_umem *umem;
	struct xsk_umem_config ucfg = {
		.fill_size = nframes,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_size = FRAME_SIZE,
		.frame_headroom = XSK_UMEM__DEFAULT_FRAME_HEADROOM,
		.flags = XSK_UMEM__DEFAULT_FLAGS,
	};
	int err = xsk_umem__create(&umem, umem_area, umem_size, &fill, &comp, &ucfg);
	if (err) {
		fprintf(stderr, "xdprx: xsk_umem__create: %s\n", strerror(-err));
		return 1;
	}
	struct xsk_socket *xsk;
	struct xsk_socket_config scfg = {
		.rx_size = nframes,
		.tx_size = 0,
		.libxdp_flags = 0, /* load libxdp's default program */
		.xdp_flags = xdp_flags,
		.bind_flags = (uint16_t)(bind_flags | XDP_USE_NEED_WAKEUP),
	};
	err = xsk_socket__create(&xsk, ifname, queue, umem, &rx, NULL, &scfg);
	if (err) {
		fprintf(stderr, "xdprx: xsk_socket__create(%s queue %u, %s mode, %s): %s\n", ifname,
			queue, mode, bind_mode, strerror(-err));
		xsk_umem__delete(umem);
		return 1;
	}
	int fd = xsk_socket__fd(xsk);

	uint32_t idx;
	if (xsk_ring_prod__reserve(&fill, nframes, &idx) != nframes) {
		fprintf(stderr, "xdprx: could not fill the fill ring\n");
		return 1;
	}
	for (uint32_t i = 0; i < nframes; i++)
		*xsk_ring_prod__fill_addr(&fill, idx + i) = (uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&fill, nframes);

	printf("READY\n");
	fflush(stdout);

	uint64_t frames = 0, bytes = 0, udp = 0, wraps = 0, t0 = now_ns(CLOCK_MONOTONIC);
	uint64_t end = secs > 0 ? t0 + (uint64_t)(secs * 1e9) : UINT64_MAX;
	size_t pos = 0;
	while (!stop && now_ns(CLOCK_MONOTONIC) < end) {
		uint32_t rxi, fi;
		uint32_t n = xsk_ring_cons__peek(&rx, BATCH, &rxi);
		if (!n) {
			if (xsk_ring_prod__needs_wakeup(&fill))
				recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			if (nap_us > 0) {
				struct timespec nap = {nap_us / 1000000, nap_us % 1000000 * 1000};
				nanosleep(&nap, NULL);
			} else if (!spin) {
				struct pollfd pfd = {.fd = fd, .events = POLLIN};
				poll(&pfd, 1, 100);
			}
			continue;
		}
		uint64_t ts = now_ns(CLOCK_REALTIME);
		while (xsk_ring_prod__reserve(&fill, n, &fi) != n)
			; /* cannot happen: the fill ring holds every frame */
		for (uint32_t i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, rxi + i);
			const uint8_t *f = xsk_umem__get_data(umem_area, d->addr);
			uint32_t len = d->len, padded = (len + 3u) & ~3u;
			uint32_t total = EPB_HDR + padded + 4u;
			if (pos + total > buf_size) {
				pos = 0;
				wraps++;
			}
			uint8_t *b = buf + pos;
			put32(b, 6);
			put32(b + 4, total);
			put32(b + 8, 0);
			put32(b + 12, (uint32_t)(ts >> 32));
			put32(b + 16, (uint32_t)ts);
			put32(b + 20, len);
			put32(b + 24, len);
			memcpy(b + EPB_HDR, f, len);
			memset(b + EPB_HDR + len, 0, padded - len);
			put32(b + EPB_HDR + padded, total);
			pos += total;
			if (len >= 34 && f[12] == 0x08 && f[13] == 0x00 && f[23] == IPPROTO_UDP)
				udp++;
			bytes += len;
			*xsk_ring_prod__fill_addr(&fill, fi + i) = xsk_umem__extract_addr(d->addr);
		}
		xsk_ring_prod__submit(&fill, n);
		xsk_ring_cons__release(&rx, n);
		frames += n;
	}
	double took = (now_ns(CLOCK_MONOTONIC) - t0) / 1e9;

	struct xdp_statistics st = {0};
	socklen_t optlen = sizeof(st);
	if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &optlen))
		perror("xdprx: getsockopt XDP_STATISTICS");
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec / 1e6;
	printf("RX frames=%llu bytes=%llu udp=%llu drops=%llu rx_dropped=%llu rx_ring_full=%llu "
	       "rx_fill_ring_empty_descs=%llu rx_invalid_descs=%llu seconds=%.3f cpu_s=%.3f "
	       "wraps=%llu mode=%s bind=%s\n",
	       (unsigned long long)frames, (unsigned long long)bytes, (unsigned long long)udp,
	       (unsigned long long)(st.rx_dropped + st.rx_ring_full + st.rx_invalid_descs),
	       (unsigned long long)st.rx_dropped, (unsigned long long)st.rx_ring_full,
	       (unsigned long long)st.rx_fill_ring_empty_descs,
	       (unsigned long long)st.rx_invalid_descs, took, cpu, (unsigned long long)wraps, mode,
	       bind_mode);
	fflush(stdout);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	munmap(buf, buf_size);
	munmap(umem_area, umem_size);
	return 0;
}
