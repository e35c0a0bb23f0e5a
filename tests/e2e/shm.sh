#!/bin/bash
# SPDX-License-Identifier: MIT
# The shm source: a producer process (examples/shm_producer, the header-only client of
# include/nvtape/producer.h) writes into nvtape's ring itself. Its bytes land unchanged (the
# same as through a pipe), its drops are counted and indexed where it lost the data, a stop
# takes everything it committed, a producer that dies ends the recording with what it
# committed (exit 1), a second producer is refused, a size limit stops the producer, and
# socket names that are taken or left over are handled. With root, a paced producer into a
# throttled drive never waits: what finds no room is dropped and counted. Then what a hostile
# producer or local user can do: holes punched in the ring, bytes on the socket, silent and
# wrong connections, a failed recording told to the producer, another user listening first.
. "$(dirname "$0")/lib.sh"
EX=${NVT_EXAMPLES:?NVT_EXAMPLES must point at the built examples}
P=$EX/shm_producer
S=$T/s.sock

# start_rec ARGS...: nvtape recording from shm:$S in the background (pid in $rp), once listening
# (run by "${WRAP[@]}" when set)
WRAP=()
start_rec() {
	rm -f "$T/r.out" "$T/r.err"
	"${WRAP[@]+"${WRAP[@]}"}" "$NVT" record --source shm:"$S" "$@" >"$T/r.out" 2>"$T/r.err" &
	rp=$!
	# its note comes once it listens (a socket file alone may be one left over)
	for i in $(seq 300); do grep -qs "waiting for a producer" "$T/r.err" && return 0; sleep 0.05; done
	cat "$T/r.err"
	fail "nvtape did not listen on $S"
}
# end_rec WANT: wait for the recording, require its exit code; its output becomes $T/out
end_rec() {
	wait $rp
	local rc=$?
	cp "$T/r.out" "$T/out"
	[ "$rc" = "$1" ] || { cat "$T/r.out" "$T/r.err"; fail "record exit $rc, want $1"; }
}
pfield() { grep '^RESULT' "$T/p.out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# 1. 64 MiB unpaced through an 8 x 1 MiB ring (the producer waits for the drive): byte for byte
# what the same producer writes into a pipe; header says shm
start_rec -q --chunk 1M --chunks 8 "$T/a.nvt"
"$P" "$S" 67108864 >"$T/p.out" || fail "producer"
end_rec 0
[ "$(field bytes)" = 67108864 ] && [ "$(field drops)" = 0 ] && [ "$(field stop_reason)" = eof ] ||
	fail "bytes $(field bytes) drops $(field drops) reason $(field stop_reason)"
"$P" -m pipe - 67108864 2>/dev/null >"$T/pipe.bin"
"$NVT" play -q --sink stdout "$T/a.nvt" 2>/dev/null | cmp - "$T/pipe.bin" || fail "data differs from the pipe's"
[ "$(hdr source "$T/a.nvt")" = shm ] || fail "header source $(hdr source "$T/a.nvt")"
expect_rc 0 "$NVT" verify --check counter:u64le@0/16 "$T/a.nvt"
[ "$(field chunks_good)" = 64 ] || fail "checksums: $(field chunks_good) chunks good"
ok "64 MiB through shared memory: exactly the pipe's bytes, every chunk's CRC32C and counter good"

# 2. drops: 4096 beats skipped every 4 MiB are 15 drop events at the positions of the gaps
start_rec -q --chunk 1M --chunks 8 "$T/d.nvt"
"$P" -d 4 "$S" 67108864 >"$T/p.out" || fail "producer"
end_rec 2
[ "$(field drops)" = "$(pfield dropped_bytes)" ] && [ "$(field drop_events)" = 15 ] ||
	fail "drops $(field drops) in $(field drop_events) events, producer $(pfield dropped_bytes)"
expect_rc 2 "$NVT" verify --check counter:u64le@0/16 "$T/d.nvt"
[ "$(field gaps)" = 15 ] && [ "$(field gap_beats)" = $((15 * 4096)) ] && [ "$(field drops_match)" = 1 ] ||
	fail "verify: $(field gaps) gaps, $(field gap_beats) gap beats, drops_match $(field drops_match)"
expect_rc 0 "$NVT" info --json "$T/d.nvt"
python3 - "$T/out" <<'PY' || fail "drop events at 4 MiB steps"
import json, sys
ev = json.load(open(sys.argv[1]))["drop_events"]
assert [e["data_offset"] for e in ev] == [(k + 1) << 22 for k in range(15)], ev
assert all(e["beats"] == 4096 * 16 for e in ev), ev
PY
ok "15 drops of 4096 beats: counted in bytes, indexed at every 4 MiB, where the counter jumps"

# 3. Ctrl-C while a paced producer runs: the producer is told to stop, and every byte it
# committed is in the recording
start_rec -q --chunk 1M --chunks 8 "$T/c.nvt"
"$P" -r 20 "$S" 10000000000 >"$T/p.out" &
pp=$!
sleep 1.5
kill -INT $rp
wait $pp || fail "producer exit $?"
end_rec 0
[ "$(field stop_reason)" = signal ] && [ "$(field bytes)" = "$(pfield bytes)" ] && [ "$(field bytes)" -gt 10000000 ] ||
	fail "stop: recorded $(field bytes) ($(field stop_reason)), producer committed $(pfield bytes)"
expect_rc 0 "$NVT" verify --check counter:u64le@0/16 "$T/c.nvt"
ok "Ctrl-C at 20 MB/s: the producer stopped, all its $(pfield bytes) bytes recorded"

# 4. a producer that dies after 5000000 bytes: exit 1 saying so, those bytes kept, complete
start_rec -q --chunk 1M --chunks 8 "$T/k.nvt"
"$P" -k 5000000 "$S" 67108864 >/dev/null
[ $? = 3 ] || fail "producer did not die as asked"
end_rec 1
grep -q "went away without closing the stream: the recording keeps the 5000000 bytes" "$T/r.err" ||
	{ cat "$T/r.err"; fail "no message for a dead producer"; }
[ "$(field bytes)" = 5000000 ] && [ "$(field stop_reason)" = source-error ] || fail "dead producer: $(field bytes) bytes"
expect_rc 0 "$NVT" verify --check counter:u64le@0/16 "$T/k.nvt"
ok "a producer that dies: exit 1, its 5000000 committed bytes kept in a complete recording"

# 5. a second producer is refused while the first is attached; --size stops the first
start_rec -q --chunk 1M --chunks 8 --size 32M "$T/s.nvt"
"$P" -r 20 "$S" 10000000000 >"$T/p.out" &
pp=$!
sleep 0.5
"$P" "$S" 4096 >/dev/null 2>"$T/p2.err" && fail "a second producer was let in"
grep -q "busy" "$T/p2.err" || fail "second producer: $(cat "$T/p2.err")"
wait $pp || fail "producer exit $?"
end_rec 0
[ "$(field bytes)" = 33554432 ] && [ "$(field stop_reason)" = limit ] || fail "size: $(field bytes) $(field stop_reason)"
[ "$(pfield bytes)" = 33554432 ] || fail "the producer committed $(pfield bytes) past the size"
ok "a second producer is told busy; --size 32M stops the producer at exactly 32 MiB"

# 6. names: a socket left by a dead run is replaced; a name another recording listens on and a
# path that is not a socket are refused with exit 1; without a producer Ctrl-C ends it empty
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.bind(sys.argv[1])" "$S"
[ -S "$S" ] || fail "no stale socket made"
start_rec -q --chunk 1M --chunks 8 "$T/n.nvt"
expect_rc 1 "$NVT" record -q --source shm:"$S" --chunk 1M --chunks 8 "$T/n2.nvt"
grep -q "another recording listens on this name" "$T/err" || fail "taken name: $(cat "$T/err")"
# connections that do not say they are a producer (that probe, this one) take no one's place
python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.close()" "$S"
"$P" "$S" 1048576 >/dev/null || fail "the producer after the probes"
end_rec 0
[ "$(field bytes)" = 1048576 ] || fail "after probes: $(field bytes) bytes"
start_rec -q --chunk 1M --chunks 8 "$T/n1.nvt"
kill -INT $rp
end_rec 0
[ "$(field bytes)" = 0 ] || fail "no producer: $(field bytes) bytes"
[ -e "$S" ] && fail "socket file left behind"
touch "$S"
expect_rc 1 "$NVT" record -q --source shm:"$S" "$T/n3.nvt"
grep -q "exists and is not a socket" "$T/err" || fail "not a socket: $(cat "$T/err")"
rm -f "$S"
expect_rc 64 "$NVT" record -q --source shm: "$T/n4.nvt"
ok "a stale socket is replaced, a taken name and a plain file are refused (exit 1), probes are not producers, shm: alone is usage (64)"

# 7. root: a paced producer into a drive throttled to a third of its rate never waits: what
# finds the ring full is dropped, counted and indexed; recorded + dropped = produced
if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/blkio ]; then
	make_loop 1G xfs
	make_cgroup 20971520 "$DEV"
	WRAP=(in_cgroup "$CG")
	start_rec -q --chunk 1M --chunks 4 --duration 4 "$MNT/t.nvt"
	WRAP=()
	"$P" -r 60 "$S" 10000000000 >"$T/p.out" || fail "producer"
	end_rec 2
	# what the producer lost after the recording's end is not the recording's
	b=$(field bytes) d=$(field drops) ev=$(field drop_events)
	[ "$d" -gt 0 ] && [ "$d" -le "$(pfield dropped_bytes)" ] && [ "$b" -le "$(pfield bytes)" ] ||
		fail "throttled: recorded $b, dropped $d; producer committed $(pfield bytes), dropped $(pfield dropped_bytes)"
	expect_rc 2 "$NVT" verify --check counter:u64le@0/16 "$MNT/t.nvt"
	[ "$(field drops_match)" = 1 ] || fail "throttled: gaps do not match the drop index"
	ok "60 MB/s into 20 MB/s: $b bytes recorded, $d dropped in $ev events, all at their gaps"
else
	echo "skip: throttled drive (needs root and the blkio cgroup)"
fi

# 8. the pure-Python producer (python/nvtape_producer.py): the same beats written in place, 3
# drops at their positions; a producer that publishes a position past its limit stops the
# recording with a protocol error (exit 1), what came before kept
PY="env PYTHONPATH=$(dirname "$0")/../../python python3 $(dirname "$0")/shm_producer.py"
start_rec -q --chunk 1M --chunks 4 "$T/py.nvt"
$PY "$S" 8388608 2097152 >"$T/p.out" || fail "python producer"
end_rec 2
[ "$(field bytes)" = 8388608 ] && [ "$(field drops)" = $((3 * 4096 * 16)) ] && [ "$(field drop_events)" = 3 ] ||
	fail "python: bytes $(field bytes) drops $(field drops) events $(field drop_events)"
expect_rc 2 "$NVT" verify --check counter:u64le@0/16 "$T/py.nvt"
[ "$(field gaps)" = 3 ] && [ "$(field drops_match)" = 1 ] && [ "$(field corrupt)" = 0 ] ||
	fail "python: verify gaps $(field gaps) drops_match $(field drops_match)"
start_rec -q --chunk 1M --chunks 4 "$T/bad.nvt"
$PY "$S" --bad >/dev/null 2>"$T/p.err"
[ $? = 1 ] || { cat "$T/p.err"; fail "python bad producer: not told that the recording failed"; }
end_rec 1
grep -q "a producer that does not follow include/nvtape/producer.h" "$T/r.err" || { cat "$T/r.err"; fail "no protocol error"; }
grep -q "FAILED: errno=71 the recording failed: .*does not follow include/nvtape/producer.h" "$T/p.err" ||
	fail "the bad producer was not told why: $(cat "$T/p.err")"
ok "a Python producer: 8 MiB in place with 3 drops at their gaps; a position past the limit: exit 1, protocol error, the producer told so"

# 9. a producer that dies holding a drop its log had no room for: the drop still counts (at
# the end); a producer that never waits learns that nvtape was killed (it does not spin on)
start_rec -q --chunk 1M --chunks 4 "$T/dd.nvt"
$PY "$S" --die-with-drop >/dev/null
[ $? = 3 ] || fail "python producer did not die as asked"
end_rec 1
[ "$(field bytes)" = 1048576 ] && [ "$(field drops)" = 12345 ] ||
	fail "dead producer's held drop: bytes $(field bytes) drops $(field drops)"
start_rec -q --chunk 1M --chunks 2 "$T/kk.nvt"
timeout 20 "$P" -r 100 "$S" 10000000000 >"$T/p.out" &
pp=$!
sleep 0.5
kill -STOP $rp # the ring fills: the paced producer finds no room and drops
sleep 0.3
kill -9 $rp
wait $rp 2>/dev/null
wait $pp
prc=$?
[ $prc != 124 ] || fail "the producer did not notice that nvtape was killed"
ok "a held drop of a dead producer counts; a NOWAIT producer notices a killed nvtape (exit $prc)"

# 10. the ring's memory stays the recording's: after its first commit a producer can punch no
# hole in the ring (madvise MADV_REMOVE, fallocate PUNCH_HOLE: EPERM) and what it wrote
# verifies; pages released before the first commit (the drive would write the pages the
# kernel pinned, not those the producer fills) are found and refused (exit 1, the producer
# told why)
start_rec -q --chunk 1M --chunks 4 "$T/ph.nvt"
$PY "$S" --punch-after >"$T/p.out" 2>"$T/p.err"
prc=$?
[ "$(pfield punch_madvise)" = EPERM ] && [ "$(pfield punch_fallocate)" = EPERM ] ||
	fail "holes punched in the sealed ring: madvise $(pfield punch_madvise), fallocate $(pfield punch_fallocate)"
[ $prc = 0 ] || { cat "$T/p.err"; fail "punching producer: exit $prc"; }
end_rec 0
expect_rc 0 "$NVT" verify "$T/ph.nvt"
[ "$(field chunks_good)" = 4 ] && [ "$(field chunks_bad)" = 0 ] || fail "after a punch attempt: $(field chunks_bad) bad chunks"
start_rec -q --chunk 1M --chunks 4 "$T/pb.nvt"
if grep -q "unlocked memory" "$T/r.err"; then
	kill -INT $rp
	wait $rp
	echo "skip: pages released before the first commit (the ring is in unlocked memory: no telling)"
else
	$PY "$S" --punch-before >"$T/p.out" 2>"$T/p.err"
	[ $? = 1 ] || { cat "$T/p.err"; fail "punch before the first commit: the producer was not told"; }
	end_rec 1
	grep -q "released 1024 of the ring's 1024 pages before its first commit" "$T/r.err" ||
		{ cat "$T/r.err"; fail "no message for pages released before the first commit"; }
	grep -q "FAILED: errno=71 .*released 1024 of the ring's 1024 pages" "$T/p.err" || fail "producer: $(cat "$T/p.err")"
fi
ok "the ring is sealed at the first commit (no hole can be punched, the data verifies); holes punched before it: exit 1, said to both sides"

# 11. the socket: bytes a producer sends after its hello are a protocol error naming them
# (exit 1; the producer is told); a wrong hello is answered with the reason and noted; a
# silent connection holds no one up: 30 of them before a producer, 30 more and a wrong hello
# while it is attached
start_rec -q --chunk 1M --chunks 4 "$T/j.nvt"
$PY "$S" --junk >"$T/p.out" 2>"$T/p.err"
[ $? = 1 ] || { cat "$T/p.err"; fail "junk on the socket: the producer was not told"; }
end_rec 1
grep -qF 'the producer (pid' "$T/r.err" && grep -qF 'sent 12 bytes on the socket ("hello there\x01") after its hello' "$T/r.err" ||
	{ cat "$T/r.err"; fail "junk on the socket not named"; }
grep -q "went away without closing" "$T/r.err" && fail "junk on the socket taken for a producer that went away"
[ "$(field bytes)" = 1048576 ] || fail "junk: the recording kept $(field bytes) bytes, not the 1048576 committed"
grep -qF 'FAILED: errno=71 the recording failed: shm' "$T/p.err" || fail "junk producer: $(cat "$T/p.err")"
# nobody listening: both producers name the socket and what to start
"$P" "$T/nobody.sock" 16 >/dev/null 2>"$T/p.err" && fail "a producer attached to nobody"
grep -qF "shm $T/nobody.sock: nobody listens there (No such file or directory): start \`nvtape record --source shm:$T/nobody.sock\` first" "$T/p.err" ||
	fail "C producer, nobody listening: $(cat "$T/p.err")"
$PY "$T/nobody.sock" 16 >/dev/null 2>"$T/p.err" && fail "a Python producer attached to nobody"
grep -qF "shm $T/nobody.sock: nobody listens there" "$T/p.err" || fail "Python producer, nobody listening: $(cat "$T/p.err")"
start_rec -q --chunk 1M --chunks 4 "$T/q.nvt"
$PY "$S" --silent 30 20 >"$T/silent.out" &
sp=$!
for i in $(seq 200); do grep -qs SILENT "$T/silent.out" && break; sleep 0.05; done
t0=$EPOCHREALTIME
timeout 20 "$P" "$S" 1048576 >"$T/p.out" 2>"$T/p.err"
prc=$?
[ $prc = 0 ] || { cat "$T/p.err"; fail "producer behind 30 silent connections: exit $prc (124: still waiting after 20 s)"; }
t1=$EPOCHREALTIME
took=$(python3 -c "print(round($t1 - $t0, 3))")
end_rec 0
python3 -c "import sys; sys.exit(not $took < 10)" || fail "a producer behind 30 silent connections took $took s (1 s each would be 30)"
kill $sp 2>/dev/null
wait $sp 2>/dev/null
start_rec -q --chunk 1M --chunks 4 "$T/q2.nvt"
"$P" -r 5 "$S" 10000000000 >"$T/p.out" 2>"$T/p.err" &
pp=$!
sleep 0.5
$PY "$S" --silent 30 20 >"$T/silent.out" &
sp=$!
for i in $(seq 200); do grep -qs SILENT "$T/silent.out" && break; sleep 0.05; done
$PY "$S" --hello "nvtape-producer 2" >"$T/h.out" || fail "hello client"
read -r _ secs ans <"$T/h.out"
kill -INT $rp
wait $pp || fail "producer exit $?"
end_rec 0
kill $sp 2>/dev/null
wait $sp 2>/dev/null
case "$ans" in
"error|shm $S: expected the hello \"nvtape-producer 1\" and its zero"*'got 17 bytes "nvtape-producer 2"'*) ;;
*) fail "a wrong hello was answered: $ans" ;;
esac
python3 -c "import sys; sys.exit(not $secs < 5)" || fail "the wrong hello was answered after $secs s"
grep -qF 'sent 17 bytes "nvtape-producer 2", not a producer'"'"'s hello: told so and closed' "$T/r.err" ||
	{ cat "$T/r.err"; fail "nvtape did not note the wrong hello"; }
ok "junk after the hello: exit 1 naming it; a wrong hello answered in $secs s and noted; 30 silent connections: a producer attached and done in $took s"

# 12. a recording that fails (the drive full): the producer's close says so, with nvtape's
# reason (C: exit 1 and the message; Python: RecordingFailed, ENOSPC)
if [ "$(id -u)" = 0 ]; then
	make_loop 48M ext4
	start_rec -q --chunk 1M --chunks 8 "$MNT/full.nvt"
	"$P" "$S" 209715200 >"$T/p.out" 2>"$T/p.err"
	prc=$?
	end_rec 1
	[ "$(field stop_reason)" = no-space ] || fail "full drive: reason $(field stop_reason)"
	[ $prc = 1 ] || { cat "$T/p.err"; fail "C producer into a full drive: exit $prc, want 1"; }
	grep -q "shm_producer: the recording failed: .*[Nn]o space left" "$T/p.err" || fail "C producer: $(cat "$T/p.err")"
	rm -f "$MNT/full.nvt"
	start_rec -q --chunk 1M --chunks 8 "$MNT/full.nvt"
	$PY "$S" 209715200 >"$T/p.out" 2>"$T/p.err"
	prc=$?
	end_rec 1
	[ $prc = 1 ] || { cat "$T/p.err"; fail "Python producer into a full drive: exit $prc, want 1"; }
	grep -q "FAILED: errno=28 the recording failed: .*[Nn]o space left" "$T/p.err" || fail "Python producer: $(cat "$T/p.err")"
	ok "the drive full: both producers are told the recording failed (ENOSPC) with nvtape's reason"
else
	echo "skip: a full drive (needs root for a loop device)"
fi

# 13. another local user cannot intercept a producer (root: a throwaway user is made for it
# and removed at the end). Root's names live in /run/nvtape, not in /tmp where anyone could
# listen first; producers (C and Python) refuse a socket another user listens on, before
# sending anything; nvtape refuses (and notes) a producer of another user; a user's own
# directory (/tmp/nvtape-UID) is made 0700 and refused when it is not its own
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; then
	SQ=nvtsq$$
	useradd -M -N -r -s /usr/sbin/nologin "$SQ" || fail "useradd $SQ"
	SQU=$(id -u "$SQ")
	sqp=
	# (a failure on the way may leave the user's recording running: -f removes the user anyway)
	NM=sq$$
	trap '[ -n "$sqp" ] && kill $sqp 2>/dev/null && wait $sqp; userdel -f "$SQ"; rm -rf "/tmp/nvtape-$SQU" "/tmp/nvtape-$NM.sock"*; cleanup' EXIT
	SQ_AS=(setpriv --reuid "$SQU" --regid "$(id -g "$SQ")" --clear-groups env -u XDG_RUNTIME_DIR HOME=/)
	as_sq() { "${SQ_AS[@]}" "$@"; }
	chmod 711 "$T"
	mkdir -m 1777 "$T/pub"
	# squat SOCKET SECONDS: the other user listens there, counting the bytes it receives
	squat() {
		"${SQ_AS[@]}" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8); s.settimeout(0.2)
got, end = 0, time.time() + float(sys.argv[2])
open(sys.argv[1] + ".ready", "w").close()
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    c.settimeout(1)
    try:
        got += len(c.recv(4096))
    except socket.timeout:
        pass
    c.close()
    print("received %d" % got, flush=True)
' "$1" "$2" >"$T/squat.out" 2>&1 &
		sqp=$!
		for i in $(seq 100); do [ -e "$1.ready" ] && return 0; sleep 0.05; done
		fail "the squatter did not listen on $1"
	}
	# root's name: the other user listens first on the old place, /tmp/nvtape-NAME.sock
	squat "/tmp/nvtape-$NM.sock" 30
	WRAP=(env -u XDG_RUNTIME_DIR)
	S=$NM start_rec -q --chunk 1M --chunks 4 "$T/root.nvt"
	WRAP=()
	grep -q "waiting for a producer on /run/nvtape/nvtape-$NM.sock" "$T/r.err" || fail "root's socket: $(cat "$T/r.err")"
	env -u XDG_RUNTIME_DIR "$P" "$NM" 1048576 >"$T/p.out" 2>"$T/p.err" || fail "root's producer: $(cat "$T/p.err")"
	end_rec 0
	[ "$(field bytes)" = 1048576 ] || fail "root's recording by name: $(field bytes) bytes"
	[ "$(stat -c %U:%a /run/nvtape)" = root:700 ] || fail "/run/nvtape is $(stat -c %U:%a /run/nvtape)"
	# a socket path in a directory anyone can write, taken by the other user: both producers
	# refuse it, naming the path and the uid; the squatter receives nothing
	kill $sqp 2>/dev/null
	wait $sqp 2>/dev/null
	rm -f "/tmp/nvtape-$NM.sock" "/tmp/nvtape-$NM.sock.ready"
	squat "$T/pub/x.sock" 30
	"$P" "$T/pub/x.sock" 1048576 >"$T/p.out" 2>"$T/p.err" && fail "the C producer wrote to another user's socket"
	grep -q "shm $T/pub/x.sock: answered by uid $SQU (pid [0-9]*), neither your user (uid 0) nor root" "$T/p.err" ||
		fail "C producer: $(cat "$T/p.err")"
	$PY "$T/pub/x.sock" 1048576 >"$T/p.out" 2>"$T/p.err" && fail "the Python producer wrote to another user's socket"
	grep -q "shm $T/pub/x.sock: answered by uid $SQU (pid [0-9]*)" "$T/p.err" || fail "Python producer: $(cat "$T/p.err")"
	sleep 1.5
	grep -q "received [1-9]" "$T/squat.out" && fail "the other user received the producer's hello: $(cat "$T/squat.out")"
	kill $sqp 2>/dev/null
	wait $sqp 2>/dev/null
	# root's recording on a socket another user can reach: its producer is refused and noted
	S=$T/pub/root.sock start_rec -q --chunk 1M --chunks 4 "$T/r2.nvt"
	chmod 666 "$T/pub/root.sock"
	as_sq "$P" "$T/pub/root.sock" 1048576 >"$T/p.out" 2>"$T/p.err" && fail "root's recording took uid $SQU's producer"
	grep -qF "this recording (uid 0) takes producers of its own user or root, not uid $SQU" "$T/p.err" ||
		fail "refused producer: $(cat "$T/p.err")"
	kill -INT $rp
	end_rec 0
	grep -q "refused a producer of uid $SQU (pid [0-9]*): only uid 0 or root may attach" "$T/r.err" ||
		{ cat "$T/r.err"; fail "nvtape did not note the refused producer"; }
	# the user's own directory: made 0700 at the first use; another user's, a symlink, a mode
	# others could use, or an XDG_RUNTIME_DIR others can write are refused with the fix
	rm -rf "/tmp/nvtape-$SQU"
	mkdir -m 1777 "$T/pub/u"
	WRAP=(as_sq)
	S=$NM start_rec -q --chunk 1M --chunks 4 "$T/pub/u/u.nvt"
	WRAP=()
	[ "$(stat -c %U:%a "/tmp/nvtape-$SQU")" = "$SQ:700" ] || fail "/tmp/nvtape-$SQU is $(stat -c %U:%a "/tmp/nvtape-$SQU")"
	as_sq "$P" "$NM" 1048576 >"$T/p.out" 2>"$T/p.err" || fail "the user's producer: $(cat "$T/p.err")"
	end_rec 0
	[ "$(field bytes)" = 1048576 ] || fail "the user's recording: $(field bytes) bytes"
	rm -rf "/tmp/nvtape-$SQU"
	for how in other symlink mode xdg; do
		env=(env -u XDG_RUNTIME_DIR)
		case $how in
		other) mkdir -m 777 "/tmp/nvtape-$SQU"; want="is another user's (owner uid 0, mode 0777)" ;;
		symlink) ln -s "$T/pub" "/tmp/nvtape-$SQU"; want="is a symbolic link" ;;
		mode) mkdir -m 755 "/tmp/nvtape-$SQU"; chown "$SQ" "/tmp/nvtape-$SQU"; want="is not mode 0700 (owner uid $SQU, mode 0755)" ;;
		xdg) env=(env XDG_RUNTIME_DIR="$T/pub"); want="the socket directory $T/pub is another user's (owner uid 0, mode 1777)" ;;
		esac
		as_sq "${env[@]}" "$NVT" record -q --source shm:"$NM" --chunk 1M --chunks 4 "$T/pub/u/$how.nvt" >"$T/out" 2>"$T/err"
		rc=$?
		[ $rc = 1 ] && grep -qF "$want" "$T/err" || { cat "$T/err"; fail "socket directory ($how): exit $rc"; }
		[ -e "$T/pub/u/$how.nvt" ] && fail "a refused socket directory ($how) left a recording behind"
		rm -rf "/tmp/nvtape-$SQU"
	done
	ok "another user: cannot take root's name (/run/nvtape), gets nothing from producers that find it listening, is refused and noted by root's recording; a user's directory is made 0700, another's, a symlink, mode 0755 and a public XDG_RUNTIME_DIR are refused"
else
	echo "skip: another local user (needs root, useradd and setpriv)"
fi
