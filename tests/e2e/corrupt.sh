#!/bin/bash
# SPDX-License-Identifier: MIT
# Damage in the data is found at the right place: a flipped bit, and a jump of the sequence.
. "$(dirname "$0")/lib.sh"

f="$T/c.nvt"
expect_rc 0 "$NVT" record -q --size 64M "$f"
s0=$(hdr first_seq "$f") # every run starts its pattern at a sequence of its own
# flip one bit in the upper half of beat 1000003 (file offset 4096 + 16 * 1000003 + 8)
off=$((4096 + 16 * 1000003 + 8))
printf '\x01' | dd of="$f" bs=1 seek=$off conv=notrunc status=none
expect_rc 2 "$NVT" verify "$f"
grep -q "^CORRUPT beat 1000003 at file offset $((4096 + 16 * 1000003)): expected $((s0 + 1000003))" "$T/out" || { cat "$T/out"; fail "corrupt beat not reported at its offset"; }
[ "$(field corrupt)" = 1 ] && [ "$(field gaps)" = 0 ] || fail "corrupt count"
ok "a flipped bit: CORRUPT beat 1000003 at file offset $((4096 + 16 * 1000003))"

# overwrite beat 2000000 with seq 2000100 (valid form, wrong place): a gap with no drop event
python3 - "$f" "$s0" <<'PY'
import struct, sys
seq = int(sys.argv[2]) + 2000100
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 16 * 2000000)
    f.write(struct.pack("<QQ", seq, seq ^ 0xFFFFFFFFFFFFFFFF))
PY
expect_rc 2 "$NVT" verify "$f"
grep -q "^GAP at beat 2000000 (file offset $((4096 + 16 * 2000000))): expected $((s0 + 2000000)), found $((s0 + 2000100)), 100 beats missing" "$T/out" || { cat "$T/out"; fail "gap not reported"; }
grep -q "^BACKWARD at beat 2000001" "$T/out" || fail "backward jump not reported"
[ "$(field drops_match)" = 0 ] || fail "a gap without a drop event must be a mismatch"
ok "an out-of-place beat: GAP + BACKWARD at beat 2000000, mismatch against the drop index"

expect_rc 2 "$NVT" verify --json "$f"
python3 -c "import json; j=json.load(open('$T/out')); assert j['corrupt']==1 and j['gaps']==1 and j['backward']==1 and j['gaps_unmatched']==1 and j['result']=='fail'" || fail "verify --json"
ok "verify --json counts"
echo "corrupt: all passed"
