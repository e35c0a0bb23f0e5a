#!/bin/bash
# SPDX-License-Identifier: MIT
# Every loss is told with its measured cause and unit: sequence gaps of a UDP stream are lost
# upstream (before nvtape), not "dropped by the recorder"; gaps a later check finds without a
# drop event are counted in packets, not beats; an shm producer's drops are its own, not
# "storage slower than --rate".
. "$(dirname "$0")/lib.sh"
EX=${NVT_EXAMPLES:?NVT_EXAMPLES must point at the built examples}
command -v ss >/dev/null || { echo "SKIP: needs ss (iproute2)"; exit 77; }

# send PORT SKIP: 100 datagrams of a u32le counter to 127.0.0.1:PORT, the values in SKIP left out
send() {
	python3 - "$1" "$2" <<'PY' || fail "sender"
import socket, struct, sys, time
port, skip = int(sys.argv[1]), {int(x) for x in sys.argv[2].split(",") if x}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(100):
    if i not in skip:
        s.sendto(struct.pack("<I", i) + bytes(60), ("127.0.0.1", port))
        time.sleep(0.001)
PY
}
# rec_udp PORT FILE ARGS...: a udp recording on 127.0.0.1:PORT in the background, once bound
rec_udp() {
	local port=$1 f=$2
	shift 2
	"$NVT" record -q --source "udp:127.0.0.1:$port" --duration 3 "$@" "$f" >"$T/r.out" 2>"$T/r.err" &
	rp=$!
	for i in $(seq 200); do
		ss -Hlun "sport = :$port" | grep -q . && return 0
		sleep 0.05
	done
	cat "$T/r.err"
	fail "the udp recording did not start"
}
port=$((20000 + $$ % 20000))

rec_udp $port "$T/c.nvt" --check counter:u32le@0
send $port 40,41,42
wait $rp
[ $? = 2 ] || { cat "$T/r.out" "$T/r.err"; fail "a udp recording with 3 packets lost upstream: exit 2"; }
expect_rc 2 "$NVT" verify "$T/c.nvt"
grep -q "^PROBLEM: 3 packets were not recorded, in 1 events: 0 lost in the kernel or for want of a free ring chunk (the recorder's count), 3 seen only as sequence gaps: lost upstream, before nvtape" "$T/out" ||
	{ cat "$T/out"; fail "verify: the sender's gaps blamed on the recorder"; }
grep -q "recorder dropped" "$T/out" && fail "verify still says the recorder dropped them"
ok "sequence gaps of a udp stream: lost upstream, before nvtape, in packets"

rec_udp $port "$T/n.nvt"
send $port 10,11
wait $rp || { cat "$T/r.out" "$T/r.err"; fail "a udp recording without a check: exit 0"; }
expect_rc 2 "$NVT" verify --check counter:u32le@0 "$T/n.nvt"
grep -q "^PROBLEM: 2 packets missing in 1 sequence gaps do not match the header's drop count 0 (+0 dropped after the last packet): 1 gaps without a drop event were lost upstream, before nvtape" "$T/out" ||
	{ cat "$T/out"; fail "verify --check: gaps without a drop event"; }
grep -q "gap beats" "$T/out" && fail "verify counts packets as beats"
ok "gaps a later check finds without a drop event: lost upstream, in packets"

S=$T/s.sock
"$NVT" record --source shm:"$S" --chunk 1M --chunks 8 "$T/s.nvt" >"$T/r.out" 2>"$T/r.err" &
rp=$!
for i in $(seq 300); do grep -qs "waiting for a producer" "$T/r.err" && break; sleep 0.05; done
"$EX/shm_producer" -d 4 "$S" 16777216 >"$T/p.out" || fail "producer"
wait $rp
[ $? = 2 ] || { cat "$T/r.out" "$T/r.err"; fail "shm with drops: exit 2"; }
grep -q "WARNING: the shm producer dropped [1-9][0-9]* bytes (its own drop log)" "$T/r.err" ||
	{ cat "$T/r.err"; fail "record: the producer's drops not named as its own"; }
grep -q -- "--rate" "$T/r.err" && { cat "$T/r.err"; fail "record blames --rate, which shm has not"; }
expect_rc 2 "$NVT" verify "$T/s.nvt"
grep -q "^PROBLEM: [1-9][0-9]* bytes were not recorded, in 3 events: counted by the shm producer in its drop log" "$T/out" ||
	{ cat "$T/out"; fail "verify: the producer's drops"; }
ok "shm: the producer's own drops are named its own (record and verify), no --rate blamed"
echo "causes: all passed"
