/* SPDX-License-Identifier: MIT */
/* IPv4 / UDP headers: built for the udp source's records, parsed for checks and replay. */
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

bool nvt_udp_find(uint16_t linktype, const uint8_t *p, uint32_t caplen, struct nvt_udp_view *u)
{
	uint32_t off = 0, ihl, ulen;

	if (linktype == LINKTYPE_ETHERNET) {
		uint16_t type;
		if (caplen < 14)
			return false;
		type = be16(p + 12);
		off = 14;
		while ((type == 0x8100 || type == 0x88a8) && caplen >= off + 4) {
			type = be16(p + off + 2);
			off += 4;
		}
		if (type != 0x0800)
			return false;
	} else if (linktype != LINKTYPE_RAW) {
		return false;
	}
	if (caplen < off + 20 || p[off] >> 4 != 4 || p[off + 9] != 17)
		return false;
	ihl = (uint32_t)(p[off] & 15) * 4;
	if (ihl < 20 || (be16(p + off + 6) & 0x1fff)) /* a fragment after the first */
		return false;
	if (caplen < off + ihl + 8)
		return false;
	memcpy(&u->src, p + off + 12, 4);
	memcpy(&u->dst, p + off + 16, 4);
	off += ihl;
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
