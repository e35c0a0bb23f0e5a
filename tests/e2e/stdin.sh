#!/bin/bash
# SPDX-License-Identifier: MIT
# The stdin source: a pipe's bytes land unchanged (any length), back-pressure instead of drops,
# and an idle pipe trips the stall watchdog.
. "$(dirname "$0")/lib.sh"

head -c 100000001 /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "cat '$T/in.bin' | '$NVT' record -q --source stdin --chunk 1M --chunks 4 '$T/p.nvt'"
[ "$(field bytes)" = 100000001 ] && [ "$(field stop_reason)" = eof ] || fail "stdin bytes"
tail -c +4097 "$T/p.nvt" | head -c 100000001 | cmp - "$T/in.bin" || fail "stdin data differs"
expect_rc 0 "$NVT" verify "$T/p.nvt"
grep -q "content checked by them only" "$T/out" && [ "$(field chunks_good)" = 96 ] &&
	[ "$(field bytes)" = 100000001 ] || fail "verify of a byte stream: $(grep ^RESULT "$T/out")"
[ "$(hdr source "$T/p.nvt")" = stdin ] && [ "$(hdr beat_bytes "$T/p.nvt")" = 1 ] || fail "header source kind"
ok "100000001 bytes through a pipe land byte for byte; header says source stdin"

# a slow consumer side: the pipe is throttled by the ring, nothing is dropped
expect_rc 0 bash -c "head -c 50000000 /dev/zero | '$NVT' record -q --source stdin --chunk 64K --chunks 2 --qd 1 '$T/bp.nvt'"
[ "$(field bytes)" = 50000000 ] && [ "$(field drops)" = 0 ] || fail "back-pressure"
ok "a 2-chunk ring back-pressures the pipe: 50000000 bytes, 0 drops"

expect_rc 1 bash -c "sleep 4 | '$NVT' record -q --source stdin --timeout 1 '$T/idle.nvt'"
grep -q "stdin source produced no data for 1.0 s" "$T/err" || fail "idle pipe stall message"
[ "$(field stop_reason)" = stall ] || fail "stall reason"
ok "an idle pipe: stall watchdog after 1 s, exit 1"

expect_rc 64 bash -c "'$NVT' record --source stdin --rate 100MB '$T/x.nvt' </dev/null"
ok "--rate with --source stdin is a usage error"
echo "stdin: all passed"
