#!/bin/bash
# SPDX-License-Identifier: MIT
# Storage slower than the source: a blkio-throttled loop device. record exits 2, every drop is
# counted and indexed, verify finds gap beats == drop count at the indexed positions.
. "$(dirname "$0")/lib.sh"
need_root

make_loop 1G xfs
dev=$DEV mnt=$MNT
f="$mnt/d.nvt"
expect_rc 2 throttled 52428800 "$dev" "$NVT" record -q --rate 150MB --duration 3 --chunk 1M --chunks 8 "$f"
drops=$(field drops)
events=$(field drop_events)
[ "$drops" -gt 0 ] && [ "$events" -gt 0 ] || fail "no drops recorded at 3x the storage rate"
grep -q "beats were dropped" "$T/err" || fail "no drop warning"
ok "record at 150 MB/s into 50 MB/s: exit 2, $drops beats dropped in $events events"

expect_rc 2 "$NVT" verify --max-errors 2 "$f"
[ "$(field gap_beats)" -gt 0 ] || fail "no gaps found"
[ "$(field drops_match)" = 1 ] || fail "gap beats do not match the drop count"
[ "$(field corrupt)" = 0 ] && [ "$(field backward)" = 0 ] || fail "corrupt or backward beats"
gaps=$(field gaps)
grep -q "drop index      $gaps of $gaps gaps at their indexed position" "$T/out" || fail "index match"
[ "$(grep -c '^GAP at beat' "$T/out")" = 2 ] || fail "--max-errors 2 must cap the GAP lines"
ok "verify: $gaps gaps, $(field gap_beats) gap beats == header drop count $(field drop_count), all at indexed positions"

expect_rc 0 "$NVT" info --json "$f"
python3 - "$T/out" <<'PY' || fail "index in info --json"
import json, sys
j = json.load(open(sys.argv[1]))
ev = j["drop_events"]
assert len(ev) == j["header"]["drop_events"] and sum(e["beats"] for e in ev) == j["header"]["drop_count"]
assert all(e["data_offset"] % 1048576 == 0 for e in ev), "drops start at chunk boundaries"
assert all(a["data_offset"] < b["data_offset"] for a, b in zip(ev, ev[1:]))
PY
ok "drop index: offsets at chunk boundaries, sum == drop count"
echo "drops: all passed"
