#!/bin/bash
# SPDX-License-Identifier: MIT
# Ctrl-C (SIGINT) and SIGTERM mid-recording lose nothing: every byte the source produced is in
# the file, the header is final, exit 0.
. "$(dirname "$0")/lib.sh"

for sig in INT TERM; do
	f="$T/s-$sig.nvt"
	"$NVT" record -q --rate 150MB "$f" >"$T/out" 2>"$T/err" &
	pid=$!
	sleep 1.7
	kill -"$sig" $pid
	wait $pid
	rc=$?
	[ $rc = 0 ] || { cat "$T/out" "$T/err"; fail "SIG$sig: exit $rc"; }
	[ "$(field stop_reason)" = signal ] || fail "SIG$sig: reason $(field stop_reason)"
	bytes=$(field bytes)
	[ "$bytes" = "$(field source_bytes)" ] || fail "SIG$sig: wrote $bytes of $(field source_bytes) bytes"
	[ "$bytes" -gt 100000000 ] || fail "SIG$sig: only $bytes bytes"
	expect_rc 0 "$NVT" verify -q "$f"
	[ "$(field beats)" = $((bytes / 16)) ] || fail "SIG$sig: verify beats"
	ok "SIG$sig after 1.7 s: $bytes bytes, all that the source produced, verify PASS"
done
echo "signal: all passed"
