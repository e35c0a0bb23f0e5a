#!/bin/bash
# SPDX-License-Identifier: MIT
# kill -9 at any rate costs at most the last checkpoint interval (1 s): a checkpoint writes the
# filled part of the chunk being filled, so a slow stream is durable as a fast one is. At 10 KB/s
# of stdin, 100 UDP datagrams/s, 10 MB/s and as fast as the storage takes it: the recording is
# killed, recovered, and what it kept is checked against what the sender handed over. Clean runs
# give each rate's write amplification (RESULT data_io_bytes / bytes).
. "$(dirname "$0")/lib.sh"
need_root
GEN=${NVT_TEST_DIR:?}/udpgen
PW="$(dirname "$0")/paced_writer.py"
PY=
for p in python3 /usr/bin/python3; do # the writer needs numpy to keep up at the storage's speed
	if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: numpy is missing (python3-numpy)"; exit 77; }
make_loop 4G xfs
BG=() # what runs in the background ends with the test, whatever ends it
trap 'for p in "${BG[@]+"${BG[@]}"}"; do kill -9 "$p" 2>/dev/null; done; cleanup' EXIT

now() { date +%s.%N; }
# loss_ok KEPT SENT RATE WHAT: the stream's bytes handed over after a time, and kept: at most
# 1.5 s of the stream missing (the interval, the checkpoint's own latency, the kill landing just
# before a checkpoint completes)
loss_ok() {
	python3 -c "import sys; k,s,r=map(float,sys.argv[1:4]); sys.exit(not (k <= s and s - k <= 1.5 * r))" "$1" "$2" "$3" ||
		fail "$4: kept $1 of $2 sent: more than 1.5 s of the stream at $3/s lost"
	ok "$4: kill -9, recover: kept $1 of $2 ($(python3 -c "import sys; print('%.3f' % ((float(sys.argv[2]) - float(sys.argv[1])) / float(sys.argv[3])))" "$1" "$2" "$3") s of the stream lost)"
}

# loss_log KEPT LOG TKILL WHAT: as fast as the storage takes it, the bytes lost are at most what
# the ring (32 x 8 MiB) held for the drive (it had not reached it) and 1.5 s of the stream at the
# fastest the drive took it in any second of the run (a loaded machine's storage slows and
# speeds up; the fastest second bounds what an interval can hold); also said in time, from the
# sender's log of when each byte left it
loss_log() {
	python3 - "$@" <<'PY' || fail "$4: more than 1.5 s of the stream and the ring lost"
import bisect, sys
kept, tkill = int(sys.argv[1]), float(sys.argv[3])
log = [tuple(map(float, l.split())) for l in open(sys.argv[2])]
ts = [t for t, _ in log]
peak = max(log[bisect.bisect_left(ts, t + 1.0) - 1][1] - n for t, n in log)
sent = log[-1][1]
lost_at = next((t for t, n in log if n > kept), tkill)  # when the first byte not kept left
bound = (256 << 20) + 1.5 * peak
print(f"ok: {sys.argv[4]}: kill -9, recover: kept {kept} of {int(sent)}: lost {int(sent - kept)} "
      f"bytes, what left the sender in the last {tkill - lost_at:.3f} s (bound {int(bound)}: "
      f"the ring and 1.5 s at {peak / 1e6:.0f} MB/s)")
sys.exit(not (kept <= sent and sent - kept <= bound))
PY
}

# crash_stdin NAME RATE BLOCK: a counter stream through stdin, killed after two checkpoints
crash_stdin() {
	local f="$MNT/$1.nvt" fifo="$T/$1.fifo" cnt="$T/$1.count" t1 pid w sent kept
	mkfifo "$fifo"
	"$PY" "$PW" "$2" "$3" "$cnt" >"$fifo" &
	w=$!
	BG+=($w)
	"$NVT" record -q --source stdin --check counter:u64le@0/8 "$f" <"$fifo" >/dev/null 2>&1 &
	pid=$!
	BG+=($pid)
	wait_header "$f" 3
	sleep 0.6
	kill -9 $pid
	t1=$(now)
	wait $pid 2>/dev/null
	wait $w
	sent=$(cat "$cnt")
	expect_rc 0 "$NVT" recover "$f"
	kept=$(field data_bytes)
	expect_rc 0 "$NVT" verify "$f"
	[ "$(field gaps)" = 0 ] && [ "$(field bytes)" = "$kept" ] || fail "$1: verify: $(grep RESULT "$T/out")"
	# the first counter is 0: the data starts where the stream did
	python3 -c "import sys; f=open(sys.argv[1],'rb'); f.seek(4096); sys.exit(int.from_bytes(f.read(8),'little') != 0)" "$f" ||
		fail "$1: the recording does not start at the stream's first byte"
	if [ "$2" = 0 ]; then
		loss_log "$kept" "$cnt.log" "$t1" "stdin as fast as the storage takes it"
	else
		loss_ok "$kept" "$sent" "$2" "stdin at $2 B/s"
	fi
	rm -f "$f"
}

# wamp_stdin RATE BLOCK SECONDS: a clean run; the write amplification it reports
wamp_stdin() {
	local fifo="$T/w.fifo" w b io
	rm -f "$fifo" "$MNT/w.nvt"
	mkfifo "$fifo"
	"$PY" "$PW" "$1" "$2" "$T/w.count" >"$fifo" &
	w=$!
	BG+=($w)
	"$NVT" record --source stdin --duration "$3" --stats 0 "$MNT/w.nvt" <"$fifo" >"$T/out" 2>"$T/err" ||
		fail "clean run at $1 B/s: $(cat "$T/err")"
	exec {rfd}<"$fifo" # the writer sees its reader go away
	exec {rfd}<&-
	wait $w
	b=$(field bytes)
	io=$(field data_io_bytes)
	[ -n "$io" ] && [ "$b" -gt 0 ] || fail "RESULT without data_io_bytes: $(grep RESULT "$T/out")"
	WAMP=$(python3 -c "import sys; print('%.3f' % (int(sys.argv[1]) / int(sys.argv[2])))" "$io" "$b")
	PARTS=$(field part_writes)
	rm -f "$MNT/w.nvt" "$fifo"
}

crash_stdin slow 10000 1000
wamp_stdin 10000 1000 3
[ "$PARTS" -ge 2 ] || fail "10 KB/s: no checkpoint wrote the chunk being filled"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 2.0)" "$WAMP" || fail "10 KB/s: write amplification $WAMP"
ok "10 KB/s clean: write amplification $WAMP ($PARTS checkpoint writes of the chunk being filled)"

crash_stdin medium 10000000 100000
wamp_stdin 10000000 100000 3
ok "10 MB/s clean: write amplification $WAMP ($PARTS checkpoint writes of the chunk being filled)"

# 10 MB/s, a chunk every 0.84 s: the header watched for 9 s; the worst lag between a byte leaving
# the sender and a header vouching for it is what a kill at the worst moment loses. A checkpoint
# that falls due while a chunk's write is in flight must wait for it, or the chunk being filled
# waits for the next checkpoint (1.8 s here).
fifo="$T/lag.fifo"
mkfifo "$fifo"
"$PY" "$PW" 10000000 100000 "$T/lag.count" >"$fifo" &
BG+=($!)
"$NVT" record -q --source stdin --duration 11 "$MNT/lag.nvt" <"$fifo" >/dev/null 2>&1 &
lp=$!
BG+=($lp)
sleep 0.5
read -r lag seen < <("$PY" "$(dirname "$0")/durability_lag.py" "$NVT" "$MNT/lag.nvt" "$T/lag.count.log" 9)
[ "${seen:-0}" -ge 50 ] || fail "10 MB/s durability lag: the header was read $seen times"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 1.3)" "$lag" ||
	fail "10 MB/s: a header vouched for a byte $lag s after it was sent (more than 1.3 s)"
ok "10 MB/s, header watched for 9 s: every byte vouched for within $lag s of being sent"
wait $lp
rm -f "$MNT/lag.nvt" "$fifo"

crash_stdin max 0 1048576
wamp_stdin 0 1048576 1
ok "max rate clean: write amplification $WAMP ($PARTS checkpoint writes of the chunk being filled)"

# 100 datagrams/s of 1000 bytes on loopback, each with its sequence number
port=$((20000 + $$ % 20000))
f="$MNT/udp.nvt"
"$NVT" record -q --source "udp:127.0.0.1:$port" --check counter:u32be@0 "$f" >/dev/null 2>&1 &
pid=$!
BG+=($pid)
wait_header "$f" 1
t0=$(now)
"$GEN" 127.0.0.1 "$port" 1000 100000 100 >/dev/null &
g=$!
BG+=($g)
wait_header "$f" 4
sleep 0.6
kill -9 $pid
t1=$(now)
wait $pid 2>/dev/null
kill $g 2>/dev/null
wait $g 2>/dev/null
sent=$(python3 -c "import sys; print(int((float(sys.argv[2]) - float(sys.argv[1])) * 100) + 1)" "$t0" "$t1")
expect_rc 0 "$NVT" recover "$f"
expect_rc 0 "$NVT" verify "$f"
kept=$(field packets)
[ "$(field gaps)" = 0 ] && [ "$kept" -gt 0 ] || fail "udp: verify: $(grep RESULT "$T/out")"
# the sender's first datagram left at t0 or later: sent is an upper bound, give it 5
loss_ok "$kept" "$((sent + 5))" 100 "udp at 100 datagrams/s"

port=$((port + 1))
"$NVT" record --source "udp:127.0.0.1:$port" --duration 3 --stats 0 "$MNT/uw.nvt" >"$T/out" 2>"$T/err" &
pid=$!
BG+=($pid)
wait_header "$MNT/uw.nvt" 1
"$GEN" 127.0.0.1 "$port" 1000 400 100 >/dev/null
wait $pid || fail "udp clean run: $(cat "$T/err")"
WAMP=$(python3 -c "import sys; print('%.3f' % (int(sys.argv[1]) / int(sys.argv[2])))" "$(field data_io_bytes)" "$(field bytes)")
ok "100 datagrams/s clean: write amplification $WAMP ($(field part_writes) checkpoint writes of the chunk being filled)"
echo "slowcrash: all passed"
