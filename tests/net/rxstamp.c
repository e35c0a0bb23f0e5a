/* SPDX-License-Identifier: MIT */
/* rxstamp: the replay benches' receiver. Takes the UDP frames to PORT arriving on IFACE
 * (AF_PACKET, the kernel's receive timestamp in ns) whose payload starts with the packet's
 * original capture time (u64 little-endian ns) and sequence number (u32), until COUNT came or
 * the line was quiet for 2 s after the first. Prints the gap error (received gap minus
 * captured gap) median and 90th percentile, the share of gaps more than 5 us off, the duration
 * ratio (received first-to-last over captured), the packets missing or out of order, and the
 * schedule's drift: each packet's receive time less its due time (its capture time, or i x GAP_NS
 * for the i-th packet received when GAP_NS is given), the least of the last third less the least
 * of the first third. A replay on absolute deadlines sends some packet of each third on time
 * however busy the CPU is (late packets do not move later ones), so its drift stays within
 * microseconds where the duration ratio follows the lateness of the last packet:
 *
 *   rxstamp IFACE PORT COUNT [GAP_NS]
 *   RX packets=N missing=M reordered=R median_us=X p90_us=Y long_pct=Z duration_ratio=Q
 *      drift_us=D
 */
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: rxstamp IFACE PORT COUNT [GAP_NS]\n");
		return 64;
	}
	unsigned idx = if_nametoindex(argv[1]);
	uint16_t port = (uint16_t)atoi(argv[2]);
	size_t count = strtoull(argv[3], NULL, 10), n = 0, missing = 0, reordered = 0;
	uint64_t gap = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), one = 1, big = 64 << 20;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)idx};
	if (!idx || fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one))) {
		perror("rxstamp");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	uint64_t *rx = calloc(count, 8), *orig = calloc(count, 8);
	uint32_t last_seq = 0;
	uint8_t buf[9100];
	char ctl[256];
	printf("ready\n");
	fflush(stdout);
	while (n < count) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, n ? 2000 : 30000) <= 0)
			break;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = ctl,
				   .msg_controllen = sizeof(ctl)};
		ssize_t k = recvmsg(fd, &m, 0);
		if (k < 14 + 20 + 8 + 12)
			continue;
		if (buf[12] != 0x08 || buf[13] != 0x00 || buf[14 + 9] != 17)
			continue;
		size_t ihl = (size_t)(buf[14] & 15) * 4;
		uint16_t dport;
		memcpy(&dport, buf + 14 + ihl + 2, 2);
		if (ntohs(dport) != port || (size_t)k < 14 + ihl + 8 + 12)
			continue;
		const uint8_t *pl = buf + 14 + ihl + 8;
		uint64_t ts = 0, o;
		uint32_t seq;
		memcpy(&o, pl, 8);
		memcpy(&seq, pl + 8, 4);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec t;
				memcpy(&t, CMSG_DATA(c), sizeof(t));
				ts = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
			}
		if (n && seq != last_seq + 1) {
			if (seq > last_seq)
				missing += seq - last_seq - 1;
			else
				reordered++;
		}
		last_seq = seq;
		rx[n] = ts;
		orig[n] = o;
		n++;
	}
	close(fd);
	if (n < 3) {
		printf("RX packets=%zu\n", n);
		free(rx);
		free(orig);
		return 1;
	}
	double *err = calloc(n, sizeof(double));
	size_t long_gaps = 0;
	for (size_t i = 1; i < n; i++) {
		err[i - 1] = ((double)(rx[i] - rx[i - 1]) - (double)(orig[i] - orig[i - 1])) / 1e3;
		if (err[i - 1] > 5 || err[i - 1] < -5)
			long_gaps++;
	}
	qsort(err, n - 1, sizeof(double), cmp_d);
	double first = 0, last = 0;
	for (size_t i = 0; i < n; i++) {
		double due = gap ? (double)i * (double)gap : (double)(orig[i] - orig[0]);
		double off = (double)(rx[i] - rx[0]) - due;
		if (i < n / 3 && (i == 0 || off < first))
			first = off;
		if (i >= n - n / 3 && (i == n - n / 3 || off < last))
			last = off;
	}
	printf("RX packets=%zu missing=%zu reordered=%zu median_us=%.3f p90_us=%.3f long_pct=%.2f "
	       "duration_ratio=%.6f drift_us=%.3f\n",
	       n, missing, reordered, err[(n - 1) / 2], err[(n - 1) * 9 / 10],
	       100.0 * long_gaps / (n - 1),
	       (double)(rx[n - 1] - rx[0]) / (double)(orig[n - 1] - orig[0]), (last - first) / 1e3);
	free(err);
	free(rx);
	free(orig);
	return 0;
}
