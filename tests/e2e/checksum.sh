#!/bin/bash
# SPDX-License-Identifier: MIT
# Chunk checksums: every recording keeps the CRC32C of each chunk it wrote in its index. One byte
# changed on the medium afterwards, in a stdin recording or in a stripe member, is found by
# verify (exit 2, exactly that chunk: offset, length, both CRCs) and by play (exit 2); the
# unchanged recording passes; --checksum none records none and verify says so.
. "$(dirname "$0")/lib.sh"

head -c 5000000 /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --chunk 1M '$T/s.nvt' <'$T/in.bin'"
expect_rc 0 "$NVT" verify "$T/s.nvt"
[ "$(field chunks_good)" = 5 ] && [ "$(field chunks_bad)" = 0 ] && [ "$(field bytes)" = 5000000 ] ||
	fail "clean stdin recording: $(grep ^RESULT "$T/out")"
grep -q "content checked by them only" "$T/out" || fail "verify does not say what it checked"
# one bit of byte 3,300,000 of the data flipped: chunk 3 (data offset 3145728, 1048576 bytes)
python3 - "$T/s.nvt" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 3300000)
    b = f.read(1)
    f.seek(4096 + 3300000)
    f.write(bytes([b[0] ^ 0x10]))
PY
expect_rc 2 "$NVT" verify "$T/s.nvt"
[ "$(field chunks_good)" = 4 ] && [ "$(field chunks_bad)" = 1 ] || fail "flipped byte: $(grep ^RESULT "$T/out")"
grep -q "^BAD CHUNK at data offset 3145728 (file offset 3149824), 1048576 bytes: CRC32C [0-9a-f]\{8\} recorded, [0-9a-f]\{8\} read" "$T/out" ||
	{ cat "$T/out"; fail "the bad chunk line"; }
[ "$(grep -c '^BAD CHUNK' "$T/out")" = 1 ] || fail "more than one bad chunk listed"
expect_rc 2 "$NVT" verify --json "$T/s.nvt"
python3 - "$T/out" <<'PY' || fail "verify --json bad_chunks"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["bad_chunks"]
assert len(b) == 1 and b[0]["data_offset"] == 3145728 and b[0]["length"] == 1048576, b
assert b[0]["expected"] != b[0]["found"] and "checksum" in j["problems"], j["problems"]
PY
expect_rc 2 "$NVT" play --sink null "$T/s.nvt"
[ "$(field chunks_bad)" = 1 ] || fail "play: $(grep ^RESULT "$T/out")"
grep -q "first at data offset 3145728" "$T/out" || fail "play names the first bad chunk"
ok "stdin recording: clean passes (5 chunks); one flipped bit found by verify (exactly chunk 3 at 3145728, exit 2) and play (exit 2)"

# a stripe over two member files, 64 KiB stripes: a byte changed in member 1
"$NVT" record -q --size 8M --chunk 1M --stripe 64K "$T/m0" "$T/m1" >/dev/null 2>&1 || fail "stripe record"
expect_rc 0 "$NVT" verify --stripe 64K "$T/m0" "$T/m1"
[ "$(field chunks_good)" = 8 ] || fail "clean stripe: $(grep ^RESULT "$T/out")"
# member 1, byte 200000: stripe row 3 (196608..262143 of the member) = logical 458752 + 3392
python3 - "$T/m1" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(200000)
    b = f.read(1)
    f.seek(200000)
    f.write(bytes([b[0] ^ 1]))
PY
expect_rc 2 "$NVT" verify --stripe 64K "$T/m0" "$T/m1"
# logical byte 458752 + 3392 = 462144 is data byte 458048: chunk 0 (0..1048575)
grep -q "^BAD CHUNK at data offset 0 (file offset 4096), 1048576 bytes" "$T/out" || { cat "$T/out"; fail "stripe bad chunk"; }
[ "$(field chunks_bad)" = 1 ] && [ "$(field corrupt)" -ge 1 ] || fail "stripe: $(grep ^RESULT "$T/out")"
ok "stripe member changed: verify finds chunk 0 (the pattern check agrees), exit 2"

# no checksums: none kept, verify says so and checks what it can
expect_rc 0 bash -c "'$NVT' record -q --checksum none --source stdin '$T/n.nvt' <'$T/in.bin'"
expect_rc 0 "$NVT" verify "$T/n.nvt"
grep -q "chunk CRC32C    none in this recording" "$T/out" || fail "no checksums not said"
[ "$(field chunks_good)" = 0 ] || fail "checksums counted without any"
[ "$(stat -c %s "$T/n.nvt")" = $((4096 + 5000000)) ] || fail "--checksum none left an index"
expect_rc 64 "$NVT" record -q --checksum md5 "$T/x.nvt"
ok "--checksum none: no index, verify says none were kept; --checksum md5: usage error"
echo "checksum: all passed"
