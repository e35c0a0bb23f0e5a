#!/bin/bash
# SPDX-License-Identifier: MIT
# The dev source (--source dev:PATH) on a FIFO: the bytes land unchanged and the writer closing
# ends the recording; a --drops-from loss counter that the producer maintains puts drop events
# with the counter's increase at the position reached when nvtape saw it; the errors (a file, a
# directory, a missing device, a garbage or backward counter, --drops-from without dev) each
# give their message and documented exit code; a stop is honoured while the device is silent.
#
# What is guaranteed about a drop's position: the counter is read after every read of the
# device and whenever the device has been silent for 100 ms, so an increase is placed after
# every byte nvtape had read before it looked and before every byte it reads after. A producer
# that bumps the counter while the device is silent (between writes, after its data was read)
# gets the event exactly at the byte boundary of that pause; these tests check exactly that.
. "$(dirname "$0")/lib.sh"


# produce FIFO PLAN...: the producer in the background (at most 60 s), its pid in $prod
produce() {
	timeout 60 python3 "$(dirname "$0")/fifo_producer.py" "$T/f" "$T/cnt" "$T/expect.bin" "$@" &
	prod=$!
}
rm -f "$T/f" && mkfifo "$T/f"

# 1. bytes through a FIFO: exactly what was written, writer closing = end of input, exit 0
produce w1000000 w3 w4096 w777777
expect_rc 0 "$NVT" record -q --source dev:"$T/f" --chunk 1M --chunks 8 "$T/a.nvt"
wait $prod || fail "producer"
[ "$(field bytes)" = 1781876 ] && [ "$(field stop_reason)" = eof ] && [ "$(field drops)" = 0 ] ||
	fail "dev bytes $(field bytes) reason $(field stop_reason) drops $(field drops)"
"$NVT" play -q --sink stdout "$T/a.nvt" 2>/dev/null | cmp - "$T/expect.bin" || fail "dev data differs (play)"
tail -c +4097 "$T/a.nvt" | head -c 1781876 | cmp - "$T/expect.bin" || fail "dev data differs (data offset 4096)"
expect_rc 0 "$NVT" verify "$T/a.nvt"
[ "$(hdr source "$T/a.nvt")" = dev ] && [ "$(hdr source_name "$T/a.nvt")" = dev ] &&
	[ "$(hdr beat_bytes "$T/a.nvt")" = 1 ] || fail "header source kind"
ok "1781876 bytes through a FIFO land byte for byte; end of input ends it, exit 0; header says dev"

# 1b. a ring too small for the FIFO's pace: the device is never stalled, what finds no free
# chunk is read anyway and dropped; every byte written is either recorded or counted
produce w1000000 w3 w4096 w777777
"$NVT" record -q --source dev:"$T/f" --chunk 64K --chunks 2 --qd 1 "$T/r.nvt" >"$T/out" 2>"$T/err"
rc=$?
wait $prod || fail "producer"
b=$(field bytes) dr=$(field drops)
[ $((b + dr)) = 1781876 ] || fail "small ring: $b bytes + $dr drops != 1781876"
{ [ "$dr" = 0 ] && [ $rc = 0 ]; } || { [ "$dr" -gt 0 ] && [ $rc = 2 ]; } || fail "small ring: exit $rc with $dr drops"
ok "a 2 x 64 KiB ring: $b bytes recorded + $dr dropped (exit $rc) = the 1781876 written"

# 2. a loss counter: a nonzero base is not a loss; each increase seen while the device is
# silent is one event at that byte position; two increases in one pause are one event; one
# after the last data, before the writer closes, lands at the end; hex and whitespace parse
echo 1000 >"$T/cnt"
produce w100000 d c1500/ p w70000 d c~0x5e3~/ p c1510 p w1 d c5606 p
expect_rc 2 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" --chunk 64K --chunks 4 "$T/d.nvt"
wait $prod || fail "producer"
[ "$(field bytes)" = 170001 ] && [ "$(field drops)" = 4606 ] && [ "$(field drop_events)" = 3 ] ||
	fail "counter: bytes $(field bytes) drops $(field drops) events $(field drop_events)"
grep -q "4606 bytes were lost by the device ($T/cnt)" "$T/err" || fail "counter drop warning"
tail -c +4097 "$T/d.nvt" | head -c 170001 | cmp - "$T/expect.bin" || fail "data around the drops differs"
expect_rc 0 "$NVT" info --json "$T/d.nvt"
python3 - "$T/out" <<'PY' || fail "drop index in info --json"
import json, sys
j = json.load(open(sys.argv[1]))
ev = [(e["data_offset"], e["beats"]) for e in j["drop_events"]]
assert ev == [(100000, 500), (170000, 10), (170001, 4096)], ev
assert j["header"]["drop_count"] == 4606 and j["header"]["drop_events"] == 3, j["header"]
PY
expect_rc 2 "$NVT" verify "$T/d.nvt"
[ "$(field drop_count)" = 4606 ] || fail "verify drop count"
ok "--drops-from: record and verify exit 2, drops 500 @100000, 10 @170000 (two bumps, one event), 4096 @170001 (after the last byte)"

# 2b. a counter rewritten in place, as a sysfs attribute changes: the open file is read again
printf '%-20s' 100 >"$T/cnt"
produce w5000 d i120 p w10
expect_rc 2 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" "$T/i.nvt"
wait $prod || fail "producer"
expect_rc 0 "$NVT" info --json "$T/i.nvt"
python3 - "$T/out" <<'PY' || fail "drop index of a counter rewritten in place"
import json, sys
j = json.load(open(sys.argv[1]))
ev = [(e["data_offset"], e["beats"]) for e in j["drop_events"]]
assert ev == [(5000, 20)] and j["header"]["data_bytes"] == 5010, (ev, j["header"]["data_bytes"])
PY
ok "a counter rewritten in place (100 -> 120): drops 20 @5000"

# 3. errors
echo data >"$T/reg"
expect_rc 64 "$NVT" record -q --source dev:"$T/reg" "$T/e.nvt"
grep -q "is a regular file.*stdin source" "$T/err" || fail "regular file message"
[ ! -e "$T/e.nvt" ] || fail "a refused source left a recording"
expect_rc 64 "$NVT" record -q --source dev:"$T" "$T/e.nvt"
grep -q "is a directory" "$T/err" || fail "directory message"
expect_rc 64 "$NVT" record -q --source dev: "$T/e.nvt"
grep -q "dev:ARGUMENT" "$T/err" || fail "empty path message"
ok "a regular file, a directory, an empty path as dev: usage errors, exit 64, no recording"

expect_rc 1 "$NVT" record -q --source dev:"$T/missing" "$T/e.nvt"
grep -q "dev:$T/missing: No such file or directory" "$T/err" || fail "missing device message"
[ ! -e "$T/e.nvt" ] || fail "a missing device left a recording"
ok "a missing device: exit 1, named, no recording"

echo "12 apples" >"$T/cnt"
expect_rc 1 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" "$T/e.nvt"
grep -q "loss counter $T/cnt does not hold a count" "$T/err" || fail "garbage counter message"
expect_rc 1 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/nocnt" "$T/e.nvt"
grep -q "cannot open the loss counter $T/nocnt" "$T/err" || fail "missing counter message"
echo 18446744073709551616 >"$T/cnt"
expect_rc 1 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" "$T/e.nvt"
grep -q "more than 2^64 - 1" "$T/err" || fail "counter overflow message"
[ ! -e "$T/e.nvt" ] || fail "a bad counter at the start left a recording"
ok "a garbage, missing or 2^64 counter at the start: exit 1, file named, no recording"

echo 5 >"$T/cnt"
produce w10000 d cfive p p w10
expect_rc 1 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" "$T/g.nvt"
wait $prod
grep -q "loss counter $T/cnt does not hold a count" "$T/err" || fail "garbage counter message (running)"
[ "$(field bytes)" = 10000 ] && [ "$(field stop_reason)" = source-error ] || fail "garbage counter: $(field bytes) bytes, $(field stop_reason)"
expect_rc 0 "$NVT" verify "$T/g.nvt"
ok "a counter turning to garbage: exit 1, file named, the 10000 bytes read before kept and final"

echo 50 >"$T/cnt"
produce w10000 d c40 p p w10
expect_rc 1 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" "$T/b.nvt"
wait $prod
grep -q "loss counter $T/cnt went back from 50 to 40" "$T/err" || fail "backward counter message"
[ "$(field bytes)" = 10000 ] || fail "backward counter: $(field bytes) bytes"
ok "a counter going back (50 -> 40): exit 1, file named"

echo 0 >"$T/cnt"
expect_rc 64 bash -c "'$NVT' record -q --source stdin --drops-from '$T/cnt' '$T/e.nvt' </dev/null"
grep -q "goes with --source dev:PATH" "$T/err" || fail "--drops-from with stdin message"
expect_rc 64 "$NVT" record -q --drops-from "$T/cnt" --duration 1 "$T/e.nvt"
ok "--drops-from with stdin or tpg: usage error, exit 64"

# 4. a silent device: Ctrl-C is honoured (the source polls), exit 0, empty recording
sleep 30 >"$T/f" &
holder=$!
"$NVT" record -q --source dev:"$T/f" "$T/s.nvt" >"$T/out" 2>"$T/err" &
pid=$!
wait_header "$T/s.nvt" 1
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
kill $holder 2>/dev/null
wait $holder 2>/dev/null
[ $rc = 0 ] && [ "$(field stop_reason)" = signal ] && [ "$(field bytes)" = 0 ] ||
	{ cat "$T/err"; fail "silent device: exit $rc, $(field stop_reason), $(field bytes) bytes"; }
ok "a silent device: SIGINT stops the recording, exit 0"

# 5. --size stops the reads at the limit
head -c 1000000 /dev/zero >"$T/f" 2>/dev/null &
prod=$!
expect_rc 0 "$NVT" record -q --source dev:"$T/f" --size 300000 --chunk 64K "$T/l.nvt"
wait $prod
[ "$(field bytes)" = 300000 ] && [ "$(field stop_reason)" = limit ] || fail "--size: $(field bytes) $(field stop_reason)"
ok "--size 300000: 300000 bytes, stopped at the limit"
echo "devsrc: all passed"
