#!/bin/bash
# SPDX-License-Identifier: MIT
# Counter checks on real data (--check counter:...): a stream whose records carry a frame
# counter, recorded through stdin; record counts the gaps live and stores the check in the
# header, verify and play's checker find every gap and backward jump at its record and offset,
# for each counter width and byte order, across the counter's wrap, with a step and a wrap
# value of the stream's own; and every misuse is refused with exit 64.
. "$(dirname "$0")/lib.sh"

# gen TYPE OFFSET STRIDE FIRST COUNT [INC [WRAP [SKIP...]]]: COUNT records, the counter of record
# i FIRST + i * INC (mod WRAP), leaving out the records named in SKIP ("at:n" = n records at at)
gen() {
	python3 - "$@" <<'PY'
import struct, sys
t, off, stride, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
inc = int(sys.argv[6]) if len(sys.argv) > 6 else 1
width = {"u8": 1, "u16le": 2, "u16be": 2, "u32le": 4, "u32be": 4, "u64le": 8, "u64be": 8}[t]
wrap = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[7] != "0" else 1 << (8 * width)
skip = {}
for s in sys.argv[8:]:
    a, n = s.split(":")
    skip[int(a)] = int(n)
fmt = ("<" if t.endswith("le") or t == "u8" else ">") + {1: "B", 2: "H", 4: "I", 8: "Q"}[width]
out = bytearray()
i = 0
while i < count:
    if i in skip:
        i += skip[i]
        continue
    rec = bytearray(b"\xa5" * stride)
    rec[off:off + width] = struct.pack(fmt, (first + i * inc) % wrap)
    out += rec
    i += 1
sys.stdout.buffer.write(out)
PY
}

# lost upstream: 10 records at 1000, 3 at 3000; the counter wraps at record 2500
gen u32be 8 1024 $((4294967296 - 2500)) 5000 1 0 1000:10 3000:3 >"$T/lost.bin"
expect_rc 2 bash -c "'$NVT' record -q --source stdin --chunk 1M --check counter:u32be@8/1024 '$T/lost.nvt' <'$T/lost.bin'"
[ "$(field check_records)" = 4987 ] && [ "$(field check_gaps)" = 2 ] && [ "$(field check_missing)" = 13 ] &&
	[ "$(field drops)" = 0 ] || fail "record's live count: $(grep ^RESULT "$T/out")"
grep -q "data was lost before nvtape" "$T/out" || fail "record: lost upstream not said"
[ "$(hdr check "$T/lost.nvt")" = "counter:u32be@8/1024" ] || fail "the check is not in the header"
ok "record: 2 gaps, 13 records missing, counted live; exit 2; the check kept in the header"

expect_rc 2 "$NVT" verify "$T/lost.nvt"
[ "$(field beats)" = 4987 ] && [ "$(field gaps)" = 2 ] && [ "$(field gap_beats)" = 13 ] &&
	[ "$(field drops_match)" = 0 ] && [ "$(field backward)" = 0 ] || fail "verify: $(grep ^RESULT "$T/out")"
grep -q "^GAP at record 1000 (file offset $((4096 + 1000 * 1024))): .* 10 records missing" "$T/out" || fail "first gap line"
grep -q "^GAP at record 2990 (file offset $((4096 + 2990 * 1024))): .* 3 records missing" "$T/out" || fail "second gap line"
grep -q "data was lost before nvtape" "$T/out" || fail "verify: the mismatch is not explained"
expect_rc 2 "$NVT" verify --json "$T/lost.nvt"
python3 - "$T/out" <<'PY' || fail "verify --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["counter_checked"] and not j["pattern_checked"] and j["check"] == "counter:u32be@8/1024", j
assert j["gaps"] == 2 and j["gap_beats"] == 13 and not j["drops_match"] and "mismatch" in j["problems"], j
assert j["header"]["check"] == "counter:u32be@8/1024"
PY
ok "verify: both gaps at their records and file offsets, across the wrap; not matched by a drop"

expect_rc 2 "$NVT" play --stats 0 "$T/lost.nvt"
[ "$(field gaps)" = 2 ] && [ "$(field gap_beats)" = 13 ] || fail "play: $(grep ^RESULT "$T/out")"
grep -q "GAP at record 1000" "$T/out" || fail "play: gap line"
expect_rc 2 "$NVT" play -q --json --loop 3 "$T/lost.nvt"
python3 - "$T/out" <<'PY' || fail "play --loop 3"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["counter_checked"] and j["passes"] == 3 and j["gaps"] == 6 and j["backward"] == 0, j
PY
ok "play's checker: the same gaps, every pass, no jump between passes"

# clean streams of every width and byte order, wrapping, fed in pieces that split counters
n=0
for spec in "u8 0 1 200 70000" "u16le 2 16 65000 200000" "u16be 14 16 1 140000" \
	"u32le 0 4096 4294967000 1000" "u64le 8 24 18446744073709551000 100000" \
	"u64be 0 8 5 300000 3"; do
	set -- $spec
	inc=${6:-1}
	gen "$@" >"$T/c.bin"
	chk="counter:$1@$2/$3"
	[ "$inc" = 1 ] || chk="$chk+$inc"
	expect_rc 0 bash -c "'$NVT' record -q --force --source stdin --chunk 64K --check $chk '$T/c.nvt' <'$T/c.bin'"
	[ "$(field check_records)" = "$5" ] && [ "$(field check_gaps)" = 0 ] || fail "$chk: $(grep ^RESULT "$T/out")"
	expect_rc 0 "$NVT" verify --chunk 64K "$T/c.nvt"
	[ "$(field beats)" = "$5" ] && [ "$(field gaps)" = 0 ] || fail "$chk verify: $(grep ^RESULT "$T/out")"
	n=$((n + 1))
done
ok "$n clean streams (u8 to u64be, wrapping, a step of 3): 0 gaps live, in verify"

# a step of 4 wrapping at 1000 (a frame number within a second): clean, then one record missing
gen u32le 4 512 900 3000 4 1000 >"$T/w.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --check 'counter:u32le@4/512+4%1000' '$T/w.nvt' <'$T/w.bin'"
expect_rc 0 "$NVT" verify "$T/w.nvt"
gen u32le 4 512 900 3000 4 1000 1234:1 >"$T/w.bin"
expect_rc 2 bash -c "'$NVT' record -q --force --source stdin --check 'counter:u32le@4/512+4%1000' '$T/w.nvt' <'$T/w.bin'"
expect_rc 2 "$NVT" verify "$T/w.nvt"
[ "$(field gaps)" = 1 ] && [ "$(field gap_beats)" = 1 ] || fail "step and wrap: $(grep ^RESULT "$T/out")"
ok "a step of 4 wrapping at 1000: clean across 12 wraps; one record missing found"

# a check given afterwards (the recording names none), and a wrong one
gen u16le 0 256 0 8000 >"$T/n.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin '$T/n.nvt' <'$T/n.bin'"
expect_rc 0 "$NVT" verify --check counter:u16le/256 "$T/n.nvt"
[ "$(field beats)" = 8000 ] || fail "verify --check on a recording without one"
expect_rc 2 "$NVT" verify --check counter:u16be/256 "$T/n.nvt"
[ "$(field gaps)" -gt 1000 ] || fail "the wrong byte order must show"
expect_rc 0 "$NVT" play -q --check counter:u16le/256 "$T/n.nvt"
ok "verify and play --check on a recording that names no counter; a wrong byte order fails"

# a device that loses frames and says so (dev: source, --drops-from a loss counter), and one
# that loses frames silently: the counter finds both; verify matches the first to its drop event
# and names the second as lost before nvtape. The producer bumps the loss counter while the
# FIFO is drained and silent, so the drop event sits exactly at the gap (devsrc.sh: the guarantee)
cat >"$T/frames.py" <<'PY'
import fcntl, os, struct, sys, termios, time
fifo, counter = sys.argv[1:3]
def drained():
    while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]:
        time.sleep(0.01)
    time.sleep(0.5)
def lost(n):
    with open(counter + ".new", "w") as f:
        f.write(str(n))
    os.replace(counter + ".new", counter)
fd = os.open(fifo, os.O_WRONLY)
def frames(a, b):
    data = b"".join(struct.pack("<I", i) + bytes(4092) for i in range(a, b))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
frames(0, 1000)
drained()
lost(10 * 4096)           # the device lost frames 1000..1009 and counted them
time.sleep(1)
frames(1010, 2000)
if sys.argv[3] == "silent":
    frames(2003, 3000)    # and lost 2000..2002 without a word
else:
    frames(2000, 3000)
os.close(fd)
PY
for mode in counted silent; do
	rm -f "$T/f" && mkfifo "$T/f"
	echo 0 >"$T/loss" # the base: there before the recording starts
	timeout 60 python3 "$T/frames.py" "$T/f" "$T/loss" $mode &
	prod=$!
	sleep 0.2
	expect_rc 2 "$NVT" record -q --force --source dev:"$T/f" --drops-from "$T/loss" --check counter:u32le@0/4096 "$T/d.nvt"
	wait $prod || fail "frame producer"
	[ "$(field drops)" = 40960 ] && [ "$(field drop_events)" = 1 ] || fail "$mode: drops $(grep ^RESULT "$T/out")"
	expect_rc 2 "$NVT" verify "$T/d.nvt"
	if [ $mode = counted ]; then
		[ "$(field gaps)" = 1 ] && [ "$(field gap_beats)" = 10 ] && [ "$(field drops_match)" = 1 ] ||
			fail "counted loss: $(grep ^RESULT "$T/out")"
		grep -q "drop index      1 of 1 gaps at their indexed position" "$T/out" || fail "counted loss not at its index"
	else
		[ "$(field gaps)" = 2 ] && [ "$(field gap_beats)" = 13 ] && [ "$(field drops_match)" = 0 ] ||
			fail "silent loss: $(grep ^RESULT "$T/out")"
		grep -q "data was lost before nvtape" "$T/out" || fail "silent loss not named"
	fi
done
ok "a device's counted loss: its gap at its drop event (match); a silent one: found and named"

expect_rc 64 "$NVT" record --check counter:u32le@0/4096 --size 1M "$T/t.nvt"
grep -q "checked beat by beat" "$T/err" || fail "tpg with --check"
for bad in counter:u24le counter:u32le@4093/4096 counter:u8+0 crc32:x; do
	expect_rc 64 "$NVT" record --source stdin --check "$bad" "$T/b.nvt"
	grep -q "check" "$T/err" || fail "$bad: no message"
done
"$NVT" record -q --size 1M "$T/tpg.nvt" >/dev/null 2>&1
expect_rc 64 "$NVT" verify --check counter:u32le "$T/tpg.nvt"
grep -q "checked beat by beat" "$T/err" || fail "verify --check on the test pattern"
ok "refused with exit 64: --check with the test pattern, 4 malformed checks"
echo "counter: all passed"
