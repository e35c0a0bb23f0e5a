#!/bin/bash
# SPDX-License-Identifier: MIT
# A recording being written is live, not dead: info and verify find its writer's lock (as
# recover does), name its PID and exit 0 on what its checkpoints hold; info --follow watches it
# until it is complete. A writer killed with SIGKILL is dead: INCOMPLETE, verify exits 2.
. "$(dirname "$0")/lib.sh"

f="$T/live.nvt"
# small chunks at 1 MB/s: a chunk fills every 66 ms, every checkpoint holds data, the ring
# holds 2 s (no drop on a loaded machine); it runs until
# this test stops it (however slowly the machine runs the checks)
"$NVT" record -q --rate 1MB --chunk 64K --chunks 32 "$f" >"$T/rec.out" 2>&1 &
pid=$!
wait_header "$f" 3

expect_rc 0 "$NVT" info "$f"
grep -q "state  *LIVE: being written by PID $pid$" "$T/out" ||
	{ cat "$T/out"; fail "info of a live recording: not LIVE with its PID $pid"; }
expect_rc 0 "$NVT" info --json "$f"
python3 -c "
import json, sys
j = json.load(open('$T/out'))
assert j['live'] is True and j['writer_pid'] == $pid and j['exit'] == 0, j
assert j['header']['complete'] is False, j['header']
" || fail "info --json of a live recording"
ok "info: a live recording is LIVE with its writer's PID, exit 0"

expect_rc 0 "$NVT" verify "$f"
grep -q "^LIVE: the recording is being written by PID $pid: the [1-9][0-9]* bytes of its last checkpoint were checked" "$T/out" ||
	{ cat "$T/out"; fail "verify of a live recording: no LIVE line"; }
grep -q "PROBLEM" "$T/out" && { cat "$T/out"; fail "verify of a live recording: a PROBLEM"; }
[ "$(field live)" = 1 ] && [ "$(field complete)" = 0 ] && [ "$(field gaps)" = 0 ] ||
	fail "verify RESULT of a live recording: $(grep RESULT "$T/out")"
expect_rc 0 "$NVT" verify --json "$f"
python3 -c "
import json
j = json.load(open('$T/out'))
assert j['live'] is True and j['writer_pid'] == $pid and j['problems'] == [], j
" || fail "verify --json of a live recording"
ok "verify: the durable part of a live recording checked, LIVE said, exit 0"

"$NVT" info --follow "$f" >"$T/out" 2>"$T/err" &
fp=$!
for i in $(seq 600); do grep -q "bytes durable after" "$T/out" && break; sleep 0.1; done
kill -INT $pid
wait $fp || { cat "$T/out" "$T/err"; fail "info --follow: exit $?, want 0"; }
grep -q "bytes durable after [0-9]* checkpoints  drops 0 beats in 0 events" "$T/out" ||
	{ cat "$T/out"; fail "info --follow printed no progress line"; }
tail -n +2 "$T/out" | grep -q "state  *complete" ||
	{ cat "$T/out"; fail "info --follow did not end with the complete state"; }
wait $pid || fail "the live recording failed: $(cat "$T/rec.out")"
ok "info --follow: a line a second until the recording completed, then its final state, exit 0"

g="$T/dead.nvt"
"$NVT" record -q --rate 1MB --duration 60 --chunk 64K --chunks 32 "$g" >"$T/rec.out" 2>&1 &
pid=$!
wait_header "$g" 3
kill -9 $pid
wait $pid 2>/dev/null
# dead WHAT: info says INCOMPLETE, verify finds no writer and exits 2
dead() {
	expect_rc 0 "$NVT" info "$g"
	grep -q "state  *INCOMPLETE (writer died; run nvtape recover)" "$T/out" ||
		{ cat "$T/out"; fail "info of $1"; }
	expect_rc 2 "$NVT" verify "$g"
	grep -q "PROBLEM: recording not finalized, and no writer holds it" "$T/out" ||
		{ cat "$T/out"; fail "verify of $1"; }
}
dead "a dead writer's recording"
[ "$(field live)" = 0 ] || fail "verify: a dead writer's recording said live"
expect_rc 2 "$NVT" info --follow "$g"
grep -q "its writer died before finishing it" "$T/err" || { cat "$T/err"; fail "info --follow of a dead recording"; }
ok "a writer killed: INCOMPLETE, verify exit 2, info --follow exit 2"

# A killed writer's lock outlives it for a moment (its io_uring is torn down after the
# process). Here the locker exits at once and a child it forked keeps the open file, with the
# lock, for 1 s and then for 4 s: a holder that has ended is dead, not live, either way.
for hold in 1 4; do
	python3 -c "
import fcntl, os, sys, time
fd = os.open('$g', os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
if os.fork() == 0:
    time.sleep($hold)
    os._exit(0)
" || fail "the lock holder"
	dead "a recording locked by an ended process ($hold s)"
	sleep $hold
done
ok "a lock whose holder has ended (held on for 1 s, for 4 s): INCOMPLETE, verify exit 2"
echo "live: all passed"
