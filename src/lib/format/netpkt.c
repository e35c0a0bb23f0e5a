/* SPDX-License-Identifier: MIT */
/* IPv4 / IPv6 and UDP headers: built for the udp source's records, parsed for checks and
 * replay. */
#include <arpa/inet.h>
#include <string.h>

#include "format/netpkt.h"
#include "format/pcapng.h"

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

void nvt_ipv4_udp_header(uint8_t *p, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
			 uint32_t payload_len)
{
	uint32_t total = payload_len + NVT_IPV4_UDP_HDR, sum = 0;
	uint16_t v;

	if (total > 65535) /* cannot be: a UDP datagram holds 65507 bytes at most */
		total = 65535;
	memset(p, 0, NVT_IPV4_UDP_HDR);
	p[0] = 0x45;
	p[2] = (uint8_t)(total >> 8);
	p[3] = (uint8_t)total;
	p[6] = 0x40; /* don't fragment */
	p[8] = 64;   /* time to live: not known to the receiver */
	p[9] = 17;   /* UDP */
	memcpy(p + 12, &src, 4);
	memcpy(p + 16, &dst, 4);
	for (int i = 0; i < 20; i += 2)
		sum += be16(p + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	v = htons((uint16_t)~sum);
	memcpy(p + 10, &v, 2);
	memcpy(p + 20, &sport, 2);
	memcpy(p + 22, &dport, 2);
	p[24] = (uint8_t)((total - 20) >> 8);
	p[25] = (uint8_t)(total - 20);
	/* checksum 0: none (allowed for UDP over IPv4) */
}

void nvt_ipv6_udp_header(uint8_t *p, const uint8_t src[16], uint16_t sport, const uint8_t dst[16],
			 uint16_t dport, uint32_t payload_len)
{
	uint32_t ulen = payload_len + 8;

	if (ulen > 65535) /* cannot be: the source keeps datagrams of 65507 bytes at most */
		ulen = 65535;
	memset(p, 0, NVT_IPV6_UDP_HDR);
	p[0] = 0x60;
	p[4] = (uint8_t)(ulen >> 8); /* payload length: the UDP datagram */
	p[5] = (uint8_t)ulen;
	p[6] = 17; /* UDP */
	p[7] = 64; /* hop limit: not known to the receiver */
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	memcpy(p + 40, &sport, 2);
	memcpy(p + 42, &dport, 2);
	p[44] = (uint8_t)(ulen >> 8);
	p[45] = (uint8_t)ulen;
}

/* The IPv6 packet at p + *off: *off moved to its UDP header. */
static bool ipv6_udp(const uint8_t *p, uint32_t caplen, uint32_t *off, struct nvt_udp_view *u)
{
	uint32_t o = *off;
	uint8_t next;

	if (caplen < o + 40 || p[o] >> 4 != 6)
		return false;
	next = p[o + 6];
	memcpy(u->src6, p + o + 8, 16);
	memcpy(u->dst6, p + o + 24, 16);
	o += 40;
	for (int hops = 0; next != 17; hops++) {
		if (hops == 8 || caplen < o + 8)
			return false;
		if (next == 44) { /* fragment: only the first holds the UDP header */
			if (be16(p + o + 2) & 0xfff8)
				return false;
			next = p[o];
			o += 8;
		} else if (next == 0 || next == 43 || next == 60) {
			uint32_t len = ((uint32_t)p[o + 1] + 1) * 8;
			next = p[o];
			o += len;
		} else {
			return false;
		}
	}
	*off = o;
	u->ip = 6;
	return true;
}

bool nvt_udp_find(uint16_t linktype, const uint8_t *p, uint32_t caplen, struct nvt_udp_view *u)
{
	uint32_t off = 0, ihl, ulen;
	uint16_t type = 0;

	if (linktype == LINKTYPE_ETHERNET) {
		if (caplen < 14)
			return false;
		type = be16(p + 12);
		off = 14;
		while ((type == 0x8100 || type == 0x88a8) && caplen >= off + 4) {
			type = be16(p + off + 2);
			off += 4;
		}
		if (type != 0x0800 && type != 0x86dd)
			return false;
	} else if (linktype != LINKTYPE_RAW) {
		return false;
	}
	if (caplen > off && p[off] >> 4 == 6 && type != 0x0800) {
		if (!ipv6_udp(p, caplen, &off, u))
			return false;
	} else {
		if (caplen < off + 20 || p[off] >> 4 != 4 || p[off + 9] != 17 || type == 0x86dd)
			return false;
		ihl = (uint32_t)(p[off] & 15) * 4;
		if (ihl < 20 || (be16(p + off + 6) & 0x1fff)) /* a fragment after the first */
			return false;
		memcpy(&u->src, p + off + 12, 4);
		memcpy(&u->dst, p + off + 16, 4);
		u->ip = 4;
		off += ihl;
	}
	if (caplen < off + 8)
		return false;
	memcpy(&u->sport, p + off, 2);
	memcpy(&u->dport, p + off + 2, 2);
	ulen = be16(p + off + 4);
	u->orig_len = ulen >= 8 ? ulen - 8 : 0;
	off += 8;
	u->payload = p + off;
	u->len = caplen - off;
	if (u->len > u->orig_len) /* Ethernet padding after a short datagram */
		u->len = u->orig_len;
	return true;
}
