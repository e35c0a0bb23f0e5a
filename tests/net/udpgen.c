/* SPDX-License-Identifier: MIT */
/* udpgen: a UDP sender for the network tests and benches. Sends COUNT datagrams of SIZE bytes
 * to ADDR:PORT (sendmmsg, batches of 64), paced to PPS a second on absolute deadlines (0 = as
 * fast as it goes), each carrying a sequence number in the chosen format, and leaves out the
 * sequence numbers it is told to skip (gaps that a receiver must find). Prints "sent N skipped
 * M" at the end.
 *
 *   udpgen ADDR PORT SIZE COUNT [PPS] [--fmt u32be|vita49|vdif:FPS] [--skip EVERY]
 *          [--skip-at SEQ:N] [--src-port P]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void stamp(uint8_t *p, const char *fmt, uint64_t seq, uint64_t fps)
{
	if (!strcmp(fmt, "vita49")) {
		uint32_t w = htonl(0x10000000u | (uint32_t)(seq & 15) << 16 | 16u);
		memcpy(p, &w, 4); /* signal data with stream id, count, size in words */
	} else if (!strncmp(fmt, "vdif", 4)) {
		uint32_t w0 = htole32((uint32_t)(seq / fps) & 0x3fffffffu);
		uint32_t w1 = htole32((uint32_t)(seq % fps) & 0xffffffu);
		memcpy(p, &w0, 4);
		memcpy(p + 4, &w1, 4);
	} else {
		uint32_t w = htonl((uint32_t)seq);
		memcpy(p, &w, 4);
	}
}

int main(int argc, char **argv)
{
	const char *fmt = "u32be";
	uint64_t every = 0, skip_at = UINT64_MAX, skip_n = 0, fps = 1, pps = 0;
	int src_port = 0;
	char *pos[5];
	int npos = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--fmt") && i + 1 < argc)
			fmt = argv[++i];
		else if (!strcmp(argv[i], "--skip") && i + 1 < argc)
			every = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--skip-at") && i + 1 < argc) {
			char *c;
			skip_at = strtoull(argv[++i], &c, 10);
			skip_n = *c == ':' ? strtoull(c + 1, NULL, 10) : 1;
		} else if (!strcmp(argv[i], "--src-port") && i + 1 < argc)
			src_port = atoi(argv[++i]);
		else if (npos < 5)
			pos[npos++] = argv[i];
	}
	if (npos < 4) {
		fprintf(stderr, "usage: udpgen ADDR PORT SIZE COUNT [PPS] [--fmt u32be|vita49|"
				"vdif:FPS] [--skip EVERY] [--skip-at SEQ:N] [--src-port P]\n");
		return 64;
	}
	if (!strncmp(fmt, "vdif:", 5))
		fps = strtoull(fmt + 5, NULL, 10);
	if (!fps)
		fps = 1;
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(pos[1]))};
	size_t size = strtoull(pos[2], NULL, 10);
	uint64_t count = strtoull(pos[3], NULL, 10);
	if (npos > 4)
		pps = strtoull(pos[4], NULL, 10);
	if (inet_pton(AF_INET, pos[0], &dst.sin_addr) != 1 || size < 16 || size > 65507) {
		fprintf(stderr, "udpgen: bad address or size (16..65507)\n");
		return 64;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	if (src_port) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)src_port)};
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
			perror("udpgen: bind");
	}
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		perror("udpgen: connect");
		return 1;
	}
	uint8_t *buf = calloc(BATCH, size);
	struct mmsghdr msg[BATCH];
	struct iovec iov[BATCH];
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){buf + (size_t)i * size, size};
		msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
		for (size_t b = 8; b < size; b++)
			buf[(size_t)i * size + b] = (uint8_t)(b * 7 + 1);
	}
	uint64_t seq = 0, sent = 0, skipped = 0, t0 = now_ns();
	while (seq < count) {
		int n = 0;
		while (n < BATCH && seq < count) {
			if ((every && seq % every == every - 1) ||
			    (seq >= skip_at && seq < skip_at + skip_n)) {
				seq++;
				skipped++;
				continue;
			}
			stamp(buf + (size_t)n * size, fmt, seq, fps);
			seq++;
			n++;
			if (pps)
				break; /* paced: one at a time, each at its deadline */
		}
		if (pps) {
			uint64_t due = t0 + (seq - 1) * 1000000000ull / pps;
			while (now_ns() < due)
				;
		}
		for (int done = 0; done < n;) {
			int k = sendmmsg(fd, msg + done, (unsigned)(n - done), 0);
			if (k < 0) {
				if (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED)
					continue;
				perror("udpgen: sendmmsg");
				free(buf);
				return 1;
			}
			done += k;
		}
		sent += (uint64_t)n;
	}
	printf("sent %llu skipped %llu seconds %.3f\n", (unsigned long long)sent,
	       (unsigned long long)skipped, (now_ns() - t0) / 1e9);
	free(buf);
	close(fd);
	return 0;
}
