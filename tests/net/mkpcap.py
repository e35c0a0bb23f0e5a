#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mkpcap: a pcap (nanosecond timestamps) of COUNT Ethernet/IPv4/UDP frames to DST:PORT whose
gaps alternate GAP+JITTER and GAP-JITTER ns, each payload starting with the frame's capture time
(u64 little-endian ns) and its sequence number (u32), padded to SIZE bytes of frame: the replay
benches' input (the receiver reads back what each gap should have been).

usage: mkpcap.py OUT COUNT GAP_NS [JITTER_NS] [SIZE] [DST_IP] [DST_MAC] [PORT]"""
import socket
import struct
import sys

out, count, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
jitter = int(sys.argv[4]) if len(sys.argv) > 4 else 0
size = int(sys.argv[5]) if len(sys.argv) > 5 else 106
dst = sys.argv[6] if len(sys.argv) > 6 else "10.200.0.99"
mac = bytes.fromhex((sys.argv[7] if len(sys.argv) > 7 else "02:00:00:00:00:99").replace(":", ""))
port = int(sys.argv[8]) if len(sys.argv) > 8 else 9999
src_mac = bytes.fromhex("020000000001")


def csum(b):
    s = sum(struct.unpack("!10H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


t = 1_700_000_000_000_000_000
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
    for i in range(count):
        payload = struct.pack("<QI", t, i).ljust(size - 42, b"\0")
        udp = struct.pack("!HHHH", 40000, port, 8 + len(payload), 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(payload), i & 0xFFFF, 0x4000,
                         64, 17, 0, socket.inet_aton("10.200.0.1"), socket.inet_aton(dst))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        frame = mac + src_mac + b"\x08\x00" + ip + udp + payload
        f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(frame), len(frame)) + frame)
        t += gap + (jitter if i % 2 == 0 else -jitter)
