/* SPDX-License-Identifier: MIT */
/* The packets of a packet recording: the IPv4 or IPv6 and UDP headers the udp source puts
 * before each datagram it keeps (so that Wireshark's tools see addresses and ports, and a replay
 * knows them), and the way to a UDP payload through Ethernet (VLAN tags included) or raw IP. */
#ifndef NVT_FORMAT_NETPKT_H
#define NVT_FORMAT_NETPKT_H

#include <stdbool.h>
#include <stdint.h>

#define NVT_IPV4_UDP_HDR 28u /* IPv4 header without options, UDP header */
#define NVT_IPV6_UDP_HDR 48u /* IPv6 header, UDP header */

/* Addresses and ports in network byte order, as in struct sockaddr_in(6). */
struct nvt_udp_view {
	unsigned ip;                /* 4 or 6 */
	uint32_t src, dst;          /* IPv4 */
	uint8_t src6[16], dst6[16]; /* IPv6 */
	uint16_t sport, dport;
	const uint8_t *payload;
	uint32_t len;      /* payload bytes captured */
	uint32_t orig_len; /* payload bytes the datagram had (its UDP length) */
};

/* Write the 28-byte IPv4 + UDP header of a datagram of payload_len bytes at p. */
void nvt_ipv4_udp_header(uint8_t *p, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
			 uint32_t payload_len);
/* Write the 48-byte IPv6 + UDP header of a datagram of payload_len bytes at p (the UDP checksum
 * left 0: not computed, as for IPv4; Wireshark shows it unverified). */
void nvt_ipv6_udp_header(uint8_t *p, const uint8_t src[16], uint16_t sport, const uint8_t dst[16],
			 uint16_t dport, uint32_t payload_len);
/* Find the UDP datagram in a captured frame of the given link type (LINKTYPE_ETHERNET or
 * LINKTYPE_RAW); false when the frame is not UDP over IPv4 or IPv6 (or is cut short before the
 * UDP header, or is a fragment after the first). IPv6 hop-by-hop, routing and destination
 * option headers are stepped over. */
bool nvt_udp_find(uint16_t linktype, const uint8_t *p, uint32_t caplen, struct nvt_udp_view *u);

#endif
