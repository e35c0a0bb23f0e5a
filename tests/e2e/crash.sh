#!/bin/bash
# SPDX-License-Identifier: MIT
# kill -9 mid-recording: the header's checkpoint vouches for what was durable; verify and info
# report the valid length; recover finalizes it; at most one checkpoint interval is lost.
. "$(dirname "$0")/lib.sh"

f="$T/k.nvt"
rate=100000000
"$NVT" record -q --rate 100MB --size 4G "$f" >/dev/null 2>&1 &
pid=$!
sleep 3.2
kill -9 $pid
wait $pid 2>/dev/null

expect_rc 0 "$NVT" info --json "$f"
python3 - "$T/out" <<'PY' || fail "info of an incomplete file"
import json, sys
h = json.load(open(sys.argv[1]))["header"]
assert not h["complete"] and h["checkpoints"] >= 2, h
assert h["durable_bytes"] >= 150000000, h   # >= 1.5 s of data at 100 MB/s after 3.2 s
assert h["valid_bytes"] == h["durable_bytes"]
PY
durable=$(hdr durable_bytes "$f")
ok "killed after 3.2 s: header vouches for $durable bytes"

expect_rc 2 "$NVT" verify "$f"
grep -q "PROBLEM: recording not finalized" "$T/out" || fail "verify must report the incomplete file"
[ "$(field bytes)" = "$durable" ] && [ "$(field corrupt)" = 0 ] && [ "$(field gaps)" = 0 ] || fail "valid length check"
ok "verify: INCOMPLETE reported, the $durable checkpointed bytes are clean"

expect_rc 0 "$NVT" recover "$f"
kept=$(field data_bytes)
[ "$kept" -ge "$durable" ] || fail "recover kept less than the checkpoint"
# at most one checkpoint interval (1 s) plus the ring's depth is lost
[ "$kept" -ge $((rate * 3200 / 1000 - rate - 268435456)) ] || fail "recover kept only $kept bytes"
expect_rc 0 "$NVT" verify -q "$f"
[ "$(field bytes)" = "$kept" ] || fail "verify after recover"
[ "$(stat -c %s "$f")" = "$(rec_end "$f")" ] || fail "preallocated tail not trimmed"
[ "$(hdr recovered "$f")" = True ] || fail "recovered flag"
ok "recover kept $kept bytes (checkpoint $durable), verify PASS, tail trimmed"

expect_rc 0 "$NVT" recover "$f"
grep -q "complete already" "$T/out" || fail "recover of a complete file"
ok "recover leaves a complete file alone"
echo "crash: all passed"
