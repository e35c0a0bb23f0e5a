#!/bin/bash
# SPDX-License-Identifier: MIT
# record -> verify -> info on the build directory's filesystem and on XFS; rate accuracy
# end to end; the null engine; JSON output.
. "$(dirname "$0")/lib.sh"

f="$T/a.nvt"
expect_rc 0 "$NVT" record -q --rate 200MB --duration 2 "$f"
bytes=$(field bytes)
[ "$(field drops)" = 0 ] || fail "drops on a 200 MB/s recording"
[ "$bytes" = "$(field source_bytes)" ] || fail "bytes $bytes != source bytes"
# exact long-term rate: 2 s x 200 MB/s, completed to a 4 KiB block
[ "$bytes" -ge 400000000 ] && [ "$bytes" -lt 400004096 ] || fail "rate x duration: $bytes bytes"
[ "$(field checkpoints)" -ge 1 ] || fail "no checkpoint in a 2 s recording"
ok "record 200 MB/s x 2 s = $bytes bytes, exit 0"

expect_rc 0 "$NVT" verify "$f"
[ "$(field result)" = pass ] && [ "$(field beats)" = $((bytes / 16)) ] || fail "verify"
grep -q "^  gaps            0," "$T/out" || fail "verify summary"
ok "verify PASS, every beat checked"

expect_rc 0 "$NVT" info "$f"
grep -q "state           complete" "$T/out" || fail "info state"
expect_rc 0 "$NVT" info --json "$f"
python3 - "$T/out" "$bytes" <<'PY' || fail "info --json"
import json, sys
j = json.load(open(sys.argv[1]))
h = j["header"]
assert h["format"] == "nvtape" and h["complete"] and h["source"] == "tpg", h
assert h["data_bytes"] == int(sys.argv[2]) and h["drop_count"] == 0, h
assert h["rate_bps"] == 200000000 and h["data_offset"] == 4096, h
assert j["drop_events"] == []
PY
ok "info human and JSON"

# the file is exactly header + data + the index (the chunk checksums) on the next 4 KiB boundary
[ "$(hdr index_offset "$f")" = $(((4096 + bytes + 4095) / 4096 * 4096)) ] || fail "index offset"
[ "$(stat -c %s "$f")" = "$(rec_end "$f")" ] || fail "file size"

if [ "$(id -u)" = 0 ]; then
	make_loop 1G xfs
	dev=$DEV mnt=$MNT
	expect_rc 0 "$NVT" record -q --size 600M --chunk 4M --chunks 16 --qd 4 "$mnt/x.nvt"
	[ "$(field bytes)" = 629145600 ] || fail "size limit on XFS"
	expect_rc 0 "$NVT" verify -q --qd 4 "$mnt/x.nvt"
	ok "XFS on a loop device: --size 600M unpaced, verify PASS"
fi

expect_rc 0 "$NVT" record -q --engine null --size 1G /nonexistent/ignored
[ "$(field bytes)" = 1073741824 ] || fail "null engine bytes"
ok "null engine: $(field mbps) MB/s"

expect_rc 0 "$NVT" record -q --json --size 16M "$T/j.nvt"
python3 -c "import json,sys; j=json.load(open('$T/out')); assert j['bytes']==16777216 and j['exit']==0 and j['header']['complete']" || fail "record --json"
ok "record --json"
# tmpfs: O_DIRECT there since Linux 6.6; a recording in memory is said to be one
shm=$(mktemp -p /dev/shm nvt-e2e.XXXXXX.nvt)
if "$NVT" record -q --size 8M "$shm" >"$T/out" 2>"$T/err"; then
	grep -q "is on tmpfs: the recording lives in memory" "$T/err" || fail "no tmpfs note: $(cat "$T/err")"
	ok "tmpfs: recorded, with a note that the recording lives in memory"
else
	grep -q "does not support O_DIRECT (it is tmpfs)" "$T/err" || fail "tmpfs refusal: $(cat "$T/err")"
	ok "tmpfs without O_DIRECT (before Linux 6.6): refused with the reason"
fi
rm -f "$shm"
echo "basic: all passed"
