#!/bin/bash
# SPDX-License-Identifier: MIT
# play against real storage limits: reads slower than the sink rate underflow (exit 2); a
# recording with drops plays clean with gap beats == its drop count (exit 0).
. "$(dirname "$0")/lib.sh"
need_root

make_loop 1G xfs
f="$MNT/d.nvt"
expect_rc 2 throttled 52428800 "$DEV" "$NVT" record -q --rate 120MB --duration 2 --chunk 1M --chunks 8 "$f"
drops=$(field drops)
expect_rc 0 "$NVT" play --rate 100MB "$f"
[ "$(field gap_beats)" = "$(field expected_gap_beats)" ] && [ "$(field gap_beats)" -gt 0 ] || fail "gap beats vs drop count"
[ "$(field underflows)" = 0 ] && [ "$(field stop_reason)" = end ] || fail "play of a recording with drops"
ok "a recording with $drops dropped beats plays clean: gap beats $(field gap_beats) == drop count, exit 0"

expect_rc 0 "$NVT" record -q --size 256M "$MNT/u.nvt"
make_cgroup 0 "$DEV"
echo "$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ') 31457280" >"$CG/blkio.throttle.read_bps_device"
expect_rc 2 in_cgroup "$CG" "$NVT" play --rate 100MB --chunk 1M --chunks 8 "$MNT/u.nvt"
[ "$(field underflows)" -gt 0 ] && [ "$(field underflow_events)" -gt 0 ] || fail "no underflow reported"
[ "$(field corrupt)" = 0 ] && [ "$(field gap_beats)" = 0 ] && [ "$(field stop_reason)" = end ] || fail "underflow run counters"
grep -q "PROBLEM: .* underflows" "$T/out" || fail "underflow problem line"
ok "reads throttled to 30 MB/s under a 100 MB/s sink: $(field underflows) underflow beats in $(field underflow_events) events, data intact, exit 2"
echo "play_drives: all passed"
