#!/bin/bash
# SPDX-License-Identifier: MIT
# nvtape play: clean playback at a rate, rate accuracy, --loop, a recording with drops, a corrupt
# beat, an incomplete file, stdout byte equality, the pipe round trip, a slow reader, refusals.
. "$(dirname "$0")/lib.sh"

a="$T/a.nvt"
expect_rc 0 "$NVT" record -q --size 512M "$a"
beats=$((512 * 1048576 / 16))

expect_rc 0 "$NVT" play --rate 200MB "$a"
[ "$(field stop_reason)" = end ] && [ "$(field beats)" = $beats ] && [ "$(field underflows)" = 0 ] || fail "clean play"
[ "$(field corrupt)" = 0 ] && [ "$(field gap_beats)" = 0 ] || fail "clean play counters"
python3 - "$(field bytes)" "$(field seconds)" <<'PY' || fail "rate accuracy"
import sys
rate = int(sys.argv[1]) / float(sys.argv[2])
assert abs(rate / 200e6 - 1) < 0.005, rate   # within 0.5 % over ~2.7 s
PY
ok "play at 200 MB/s: every beat checked, no underflow, rate within 0.5 % ($(field mbps) MB/s)"

expect_rc 0 "$NVT" play --loop 3 "$a"
[ "$(field passes)" = 3 ] && [ "$(field beats)" = $((3 * beats)) ] && [ "$(field gaps)" = 0 ] || fail "--loop 3"
ok "--loop 3: three seamless passes, the sequence restarts each pass without a gap"

# corrupt one beat: the checker names it at its file offset
cp "$a" "$T/c.nvt"
printf '\x5a' | dd of="$T/c.nvt" bs=1 seek=$((4096 + 16 * 777777)) conv=notrunc status=none
expect_rc 2 "$NVT" play "$T/c.nvt"
grep -q "^CORRUPT beat 777777 at file offset $((4096 + 16 * 777777))" "$T/out" || fail "corrupt beat position"
[ "$(field corrupt)" = 1 ] || fail "corrupt count"
ok "a corrupt beat: exit 2, reported at file offset $((4096 + 16 * 777777))"

# the data through --sink stdout is the recording's data, byte for byte
expect_rc 0 bash -c "'$NVT' play -q --sink stdout '$a' > '$T/a.data'"
[ "$(sha256sum <"$T/a.data" | cut -d' ' -f1)" = "$(tail -c +4097 "$a" | head -c "$(hdr data_bytes "$a")" | sha256sum | cut -d' ' -f1)" ] || fail "stdout data differs"
ok "--sink stdout: sha256 of the output equals the recording's data"

# the pipe round trip
expect_rc 0 bash -c "'$NVT' play -q --sink stdout --rate 400MB '$a' | '$NVT' record -q --source stdin '$T/b.nvt'"
cmp <(tail -c +4097 "$a" | head -c "$(hdr data_bytes "$a")") <(tail -c +4097 "$T/b.nvt" | head -c "$(hdr data_bytes "$T/b.nvt")") || fail "round trip data differs"
ok "play --sink stdout A | record --source stdin B: B's data equals A's"

# a reader slower than --rate is reported, not hidden
expect_rc 2 bash -o pipefail -c "'$NVT' play -q --sink stdout --rate 200MB '$a' 2>'$T/late.err' | (sleep 1.5; cat >/dev/null)"
grep -q "held the stream back" "$T/late.err" || fail "late reader not reported"
ok "a slow reader on stdout: late events, exit 2"

# B is a byte stream: the checker refuses it, stdout and null play it
expect_rc 64 "$NVT" play "$T/b.nvt"
grep -q -- "--sink stdout or --sink null" "$T/err" || fail "refusal message"
expect_rc 0 "$NVT" play --sink null "$T/b.nvt"
ok "a byte-stream recording: the checker refuses it and points at --sink stdout|null"

# an incomplete recording plays its checkpointed length, and says it is not finalized (exit 2,
# as verify)
"$NVT" record -q --rate 100MB --size 2G "$T/k.nvt" >/dev/null 2>&1 &
pid=$!
wait_header "$T/k.nvt" 3
kill -9 $pid
wait $pid 2>/dev/null
durable=$(hdr durable_bytes "$T/k.nvt")
expect_rc 2 "$NVT" play "$T/k.nvt"
grep -q "is incomplete" "$T/err" || fail "no note about the incomplete file"
grep -q "PROBLEM: recording not finalized" "$T/out" || fail "no problem line for the incomplete file"
[ "$(field bytes)" = "$durable" ] && [ "$(field corrupt)" = 0 ] || fail "incomplete playback"
expect_rc 2 "$NVT" verify -q "$T/k.nvt"
ok "an incomplete recording plays the $durable bytes its checkpoint vouches for, exit 2 as verify"

# Ctrl-C: stops cleanly with the counters so far, exit 1
"$NVT" play --rate 50MB "$a" >"$T/out" 2>"$T/err" &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
rc=$?
[ $rc = 1 ] && [ "$(field stop_reason)" = signal ] && [ "$(field beats)" -gt 0 ] || fail "Ctrl-C: exit $rc"
ok "Ctrl-C: exit 1, incomplete, $(field beats) beats checked so far"

# --loop 0 plays until Ctrl-C
"$NVT" play --loop 0 --chunk 1M "$a" >"$T/out" 2>"$T/err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
[ "$(field passes)" -ge 2 ] && [ "$(field gaps)" = 0 ] && [ "$(field corrupt)" = 0 ] || { cat "$T/out"; fail "--loop 0"; }
ok "--loop 0: $(field passes) passes until Ctrl-C, no gap at any restart"

expect_rc 0 "$NVT" play --help
grep -q "Exit codes: 0 complete and clean" "$T/out" || fail "play --help"
expect_rc 64 "$NVT" play --sink dac "$a"
expect_rc 64 "$NVT" play --loop x "$a"
echo "play: all passed"
