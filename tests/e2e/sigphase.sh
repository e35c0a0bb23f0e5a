#!/bin/bash
# SPDX-License-Identifier: MIT
# SIGINT/SIGTERM at every phase of a recording: before the ring is set up, while the space is
# reserved, around the first checkpoint, during the final drain and index write, and twice in a
# row. Every run exits with the documented code (0, or 2 when beats were dropped) and leaves
# either no file or a finalized one that verifies.
. "$(dirname "$0")/lib.sh"
need_root

# stop_at FILE DELAY:SIG... -- ARGS: record ARGS into FILE (through the command prefix in RUN),
# send each SIG after its delay (seconds since the previous one); sets rc
stop_at() {
	local f=$1 d
	shift
	local -a sched=()
	while [ "$1" != -- ]; do sched+=("$1"); shift; done
	shift
	rm -f "$f"
	"${RUN[@]}" "$NVT" record -q "$@" "$f" >"$T/out" 2>"$T/err" &
	local pid=$! mask
	# from the moment it handles SIGINT and SIGTERM (before that, as for any program, a signal
	# ends it before it has touched the target)
	for i in $(seq 5000); do
		mask=$(sed -n 's/^SigCgt:\s*//p' /proc/$pid/status 2>/dev/null)
		[ -n "$mask" ] && [ $((0x$mask & 0x4002)) = $((0x4002)) ] && break
		[ -d /proc/$pid ] || break
		sleep 0.001
	done
	for d in "${sched[@]}"; do
		sleep "${d%:*}"
		kill -"${d#*:}" $pid 2>/dev/null
	done
	wait $pid
	rc=$?
}

# finalized FILE WHAT: no file, or one that is complete and whose data checks out
finalized() {
	[ -e "$1" ] || return 0
	"$NVT" verify -q "$1" >"$T/v.out" 2>"$T/v.err"
	local vrc=$?
	vfield() { grep '^RESULT' "$T/v.out" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	# exit 2 only for an empty recording (stopped before the first beat) or one with drops
	[ "$(vfield complete)" = 1 ] && [ "$(vfield corrupt)" = 0 ] && [ "$(vfield drops_match)" = 1 ] &&
		{ [ $vrc = 0 ] || { [ $vrc = 2 ] && { [ "$(vfield bytes)" = 0 ] || [ "$(vfield drop_count)" != 0 ]; }; }; } ||
		{ cat "$T/out" "$T/err" "$T/v.out" "$T/v.err"; fail "$2: the file is not finalized"; }
	[ "$(vfield bytes)" = "$(field bytes)" ] ||
		{ cat "$T/out" "$T/v.out"; fail "$2: verify and record disagree on the length"; }
}

RUN=()
f="$T/s.nvt"
n=0
# startup (ring, O_DIRECT probe, reservation of 1 GiB, first header) and the first checkpoint
for d in 0 0.003 0.01 0.03 0.06 0.1 0.2 0.4 0.9 1.0 1.1; do
	for sig in INT TERM; do
		stop_at "$f" "$d:$sig" -- --rate 50MB --size 1G
		[ $rc = 0 ] || { cat "$T/out" "$T/err"; fail "SIG$sig after $d s: exit $rc"; }
		finalized "$f" "SIG$sig after $d s"
		n=$((n + 1))
	done
done
ok "$n runs stopped by one signal from 0 to 1.1 s: exit 0, each file finalized and verified"

# twice in a row, early and late
for d in "0.02:INT 0.001:INT" "0.2:TERM 0:INT" "1.0:INT 0.01:TERM" "1.5:INT 0.05:INT"; do
	stop_at "$f" $d -- --rate 50MB --size 1G
	[ $rc = 0 ] || { cat "$T/out" "$T/err"; fail "signals $d: exit $rc"; }
	finalized "$f" "signals $d"
done
ok "two signals in a row (4 schedules): exit 0, finalized"

# during the drain: a throttled disk behind a full ring takes seconds to write it out; more
# signals arrive meanwhile and change nothing
make_loop 2G ext4
make_cgroup 31457280 "$DEV" # 30 MiB/s
# (not through in_cgroup: a function runs in a subshell of its own, and the signals are for
# nvtape's pid)
RUN=(bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG")
stop_at "$MNT/d.nvt" "1.5:INT" "0.3:INT" "0.3:TERM" -- --rate 120MB --size 1G
[ $rc = 0 ] || [ $rc = 2 ] || { cat "$T/out" "$T/err"; fail "drain: exit $rc"; }
finalized "$MNT/d.nvt" "signals during the drain"
ok "three signals during a throttled drain: exit $rc, $(field bytes <"$T/out") bytes, drops $(field drops <"$T/out"), finalized and verified"
# speedtest's read-back stops at a signal too, reads limited to 20 MiB/s so that it is mid-way
echo "$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ') 20971520" >"$CG/blkio.throttle.read_bps_device"
sync && echo 3 >/proc/sys/vm/drop_caches
t0=$(date +%s%N)
"${RUN[@]}" "$NVT" speedtest --read --chunk 1M "$MNT/d.nvt" >"$T/out" 2>"$T/err" &
pid=$!
for i in $(seq 5000); do
	mask=$(sed -n 's/^SigCgt:\s*//p' /proc/$pid/status 2>/dev/null)
	[ -n "$mask" ] && [ $((0x$mask & 0x2)) = 2 ] && break
	sleep 0.001
done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
secs=$((($(date +%s%N) - t0) / 1000000000))
[ $rc = 1 ] && grep -q "interrupted after" "$T/out" "$T/err" ||
	{ cat "$T/out" "$T/err"; fail "speedtest read-back: exit $rc, not interrupted"; }
[ $secs -lt 20 ] || fail "speedtest read-back took $secs s after a signal"
ok "SIGINT during speedtest's read-back: exit 1, stopped mid-way"
echo "sigphase: all passed"
