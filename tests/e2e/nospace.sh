#!/bin/bash
# SPDX-License-Identifier: MIT
# A full filesystem: recording stops cleanly, keeps and finalizes all it wrote, says so, exit 1.
# With --size it refuses before starting.
. "$(dirname "$0")/lib.sh"
need_root

make_loop 80M ext4
f="$MNT/full.nvt"
expect_rc 1 "$NVT" record -q --rate 100MB --chunk 1M --chunks 16 "$f"
grep -q "no space left" "$T/err" || fail "no message about the full disk"
[ "$(field stop_reason)" = no-space ] || fail "reason $(field stop_reason)"
bytes=$(field bytes)
[ "$bytes" -gt 40000000 ] || fail "kept only $bytes bytes of a 80 MB filesystem"
ok "full disk: exit 1, $bytes bytes kept"

expect_rc 2 "$NVT" verify "$f"
# (a busy machine may also have dropped beats on the way: drops_match says each gap is indexed)
[ "$(field bytes)" = "$bytes" ] && [ "$(field corrupt)" = 0 ] || fail "kept data not clean"
[ "$(field complete)" = 1 ] && [ "$(field drops_match)" = 1 ] || fail "header not finalized"
grep -q "ended early on an error" "$T/out" || fail "verify does not note the early stop"
ok "kept data verifies clean; beats lost after the end are counted (exit 2)"

rm -f "$f"
expect_rc 1 "$NVT" record -q --size 1G "$MNT/big.nvt"
grep -q "not enough free space" "$T/err" || fail "no free-space refusal"
[ ! -e "$MNT/big.nvt" ] || fail "refused recording left a file behind"
ok "--size larger than the free space is refused before starting"
# XFS frees a deleted file's blocks in the background: statfs lags for a moment while
# fallocate already finds the space. The reservation decides, so this succeeds.
make_loop 1200M xfs
for i in 1 2 3; do
	expect_rc 0 "$NVT" record -q --size 800M --chunk 1M --chunks 8 "$MNT/old.nvt"
	rm "$MNT/old.nvt"
	expect_rc 0 "$NVT" record -q --size 800M --chunk 1M --chunks 8 "$MNT/new.nvt"
	rm "$MNT/new.nvt"
done
ok "XFS: recording right after deleting the previous one (statfs still lagging) succeeds"
echo "nospace: all passed"
