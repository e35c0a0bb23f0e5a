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
# kill -9 while dropping: recover follows the pattern past the last checkpoint across the drops
# (forward jumps at chunk boundaries), keeping all the data written but what was in flight (at
# most the ring's 8 chunks), and indexes every gap it crossed
g="$mnt/k.nvt"
make_cgroup 52428800 "$dev"
bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" \
	"$NVT" record -q --rate 150MB --size 400M --chunk 1M --chunks 8 "$g" >/dev/null 2>&1 &
pid=$!
wait_header "$g" 3
sleep 0.6
kill -9 $pid
wait $pid 2>/dev/null
# the checkpoint's drop index lies beyond the data (after the 400M): not data written
expect_rc 0 "$NVT" info --json "$g"
idx=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["header"]["index_offset"])' "$T/out")
[ "$idx" -ge $((4096 + 400 * 1048576)) ] || fail "the checkpoint's index at $idx, inside the data"
written=$(python3 - "$g" <<'PY'
import sys
end, pos = 0, 0  # the end of the last non-zero 4 KiB block of data
with open(sys.argv[1], "rb") as f:
    f.seek(4096)
    while pos < 400 << 20:
        b = f.read(min(1 << 20, (400 << 20) - pos))
        if not b:
            break
        for i in range(0, len(b), 4096):
            if b[i:i + 4096].strip(b"\0"):
                end = pos + i + 4096
        pos += len(b)
print(end)
PY
)
expect_rc 0 "$NVT" recover "$g"
kept=$(field data_bytes) cp=$(field checkpoint_bytes)
[ "$kept" -ge $((written - 8 * 1048576)) ] || fail "recover kept $kept bytes of the $written written (checkpoint $cp)"
expect_rc 2 "$NVT" verify "$g"
[ "$(field drops_match)" = 1 ] && [ "$(field corrupt)" = 0 ] && [ "$(field bytes)" = "$kept" ] ||
	fail "verify after recover: $(grep ^RESULT "$T/out")"
ok "killed while dropping: recover kept $kept of $written bytes written ($((kept - cp)) past the checkpoint), $(field gaps) gaps indexed and matched"
echo "drops: all passed"
