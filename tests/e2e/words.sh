#!/bin/bash
# SPDX-License-Identifier: MIT
# Words and figures that tell the truth: the help names what record records today; the banner
# comes only once the recording is open; a file that is not a recording is named; a ratio over
# too little data or time is "-" (null in JSON), never -nan, inf or 72609 core-s/GB; a slow
# stream's live line says its first chunk is filling rather than 0.0 MB/s; a packet capture is
# timed from its start, not from its first frame.
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$NVT" --help
grep -q "^  record .*(device, UDP, packets, shm, stdin, ...)" "$T/out" ||
	{ cat "$T/out"; fail "the help's summary of record"; }
grep -q "test pattern or stdin" "$T/out" && fail "the help still says test pattern or stdin"
ok "the top-level help (and so man nvtape-record) names the sources of today"

head -c 8192 /dev/urandom >"$T/random.bin"
expect_rc 64 "$NVT" record --source "pcap:$T/random.bin" "$T/u.nvt"
grep -q "is not a pcap or pcapng file" "$T/err" || { cat "$T/err"; fail "pcap: no refusal"; }
grep -q "recording to" "$T/err" && { cat "$T/err"; fail "the banner came before the refusal"; }
[ ! -e "$T/u.nvt" ] || fail "a refused recording left a file"
expect_rc 0 "$NVT" record --size 1M "$T/b.nvt"
grep -q "^nvtape record: recording to $T/b.nvt (.*) -- Ctrl-C to stop" "$T/err" ||
	{ cat "$T/err"; fail "no banner for a recording that ran"; }
expect_rc 64 "$NVT" play --sink udp:127.0.0.1:9 "$T/b.nvt"
grep -q "this recording holds none" "$T/err" || { cat "$T/err"; fail "play: no refusal"; }
grep -q "playing" "$T/err" && { cat "$T/err"; fail "play: the banner came before the refusal"; }
expect_rc 0 "$NVT" play "$T/b.nvt"
grep -q "^nvtape play: playing $T/b.nvt (.*) -- Ctrl-C to stop" "$T/err" ||
	{ cat "$T/err"; fail "no banner for a playback that ran"; }
ok "the banner: none before an argument error, once the recording (or the playback) is open"

expect_rc 1 "$NVT" speedtest --size 4M "$T/b.nvt"
grep -q "recording to it would replace it; give --force to overwrite it" "$T/out" ||
	{ cat "$T/out"; fail "speedtest's refusal of a recording does not name --force"; }
ok "speedtest's refusal of a target that holds a recording names --force, as record's does"

for cmd in info verify recover meta export; do
	expect_rc 1 "$NVT" $cmd "$T/random.bin"
	grep -q "$T/random.bin: not a recording: bad magic" "$T/err" ||
		{ cat "$T/err"; fail "$cmd: bad magic without the file's name"; }
done
ok "bad magic names the file (info, verify, recover, meta, export)"

expect_rc 0 "$NVT" record --size 10 "$T/t.nvt"
grep -q "^nvtape record: $T/t.nvt: 4096 bytes in [0-9.]* s, - MB/s" "$T/out" ||
	{ cat "$T/out"; fail "4 KiB: MB/s is not -"; }
grep -q "whole process - core-s/GB" "$T/out" || { cat "$T/out"; fail "4 KiB: core-s/GB is not -"; }
grep -Eqw -- "-?(nan|inf)" "$T/out" && { cat "$T/out"; fail "4 KiB: inf or nan"; }
[ "$(field mbps)" = - ] && [ "$(field io_cpu_s_per_gb)" = - ] || fail "4 KiB: RESULT $(grep RESULT "$T/out")"
expect_rc 0 "$NVT" record -q --json --size 10 "$T/t2.nvt"
python3 -c "import json; j = json.load(open('$T/out')); assert j['mbps'] is None, j['mbps']" ||
	fail "4 KiB: JSON mbps is not null"
expect_rc 0 "$NVT" record --source stdin "$T/e.nvt" </dev/null
grep -q " 0 bytes in [0-9.]* s, - MB/s" "$T/out" || { cat "$T/out"; fail "empty stdin: MB/s is not -"; }
grep -Eqw -- "-?(nan|inf)" "$T/out" && { cat "$T/out"; fail "empty stdin: inf or nan"; }
expect_rc 0 "$NVT" verify "$T/t.nvt"
grep -q "^  read            - MB/s" "$T/out" && [ "$(field mbps)" = - ] ||
	{ cat "$T/out"; fail "verify of 4 KiB: MB/s is not -"; }
expect_rc 0 "$NVT" record -q --size 64M "$T/big.nvt"
[ "$(field mbps)" != - ] && [ "$(field io_cpu_s_per_gb)" != - ] || fail "64 MiB: no rate: $(grep RESULT "$T/out")"
ok "a ratio over too little (4 KiB, empty stdin) is -, null in JSON; 64 MiB has its figures"

expect_rc 0 "$NVT" record --rate 100KB --duration 2.5 --stats 0.5 "$T/slow.nvt"
grep -q "nothing written yet (the next checkpoint writes what arrived)" "$T/err" &&
	grep -Eq "MB/s \(avg +[0-9.]+\) +[1-9][0-9]*\.[0-9] kB" "$T/err" ||
	{ cat "$T/err"; fail "the live line of a slow stream"; }
grep -Eq "nothing written yet .*  received [1-9][0-9.]* kB" "$T/err" ||
	{ cat "$T/err"; fail "the live line of a slow stream: what was received before a write"; }
ok "a slow stream's live line: nothing written until the first checkpoint, then kB written; kB received meanwhile"

# 100 datagrams/s on loopback: the live line counts packets received before any is written
port=$((20000 + $$ % 20000))
"$NVT" record --source "udp:127.0.0.1:$port" --duration 3 --stats 0.25 "$T/u.nvt" \
	>"$T/u.out" 2>"$T/u.err" &
rp=$!
wait_header "$T/u.nvt" 1
"${NVT_TEST_DIR:?}/udpgen" 127.0.0.1 "$port" 1000 200 100 >/dev/null || fail "udpgen"
wait $rp || { cat "$T/u.out" "$T/u.err"; fail "the udp recording: exit $?"; }
grep -Eq "nothing written yet .*  received [1-9][0-9]* packets, [1-9][0-9.]* kB" "$T/u.err" ||
	{ cat "$T/u.err"; fail "the live line of a slow udp stream: no packets received"; }
grep -Eq "kB  received (1[0-9][0-9]|200) packets" "$T/u.err" ||
	{ cat "$T/u.err"; fail "the live line of a slow udp stream: not the packets sent once written"; }
ok "a slow udp stream's live line: packets and kB received before the first checkpoint writes them"

if [ "$(id -u)" = 0 ]; then
	"$NVT" record -q --source packet:lo --duration 2 "$T/p.nvt" >"$T/p.out" 2>&1 &
	rp=$!
	wait_header "$T/p.nvt" 1
	sleep 1.2
	python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(bytes(100), ('127.0.0.1', 9))"
	wait $rp || { cat "$T/p.out"; fail "the packet capture failed"; }
	d=$(hdr duration_ns "$T/p.nvt")
	[ "$d" -ge 1900000000 ] || fail "a 2 s capture whose frames came late is timed $d ns"
	ok "a packet capture is timed from its start ($d ns for --duration 2)"
else
	echo "skip: the packet capture's time (needs root)"
fi
echo "words: all passed"
