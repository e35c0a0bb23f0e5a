#!/bin/bash
# SPDX-License-Identifier: MIT
# FPGA Drive Recorder v1 compatibility: record --format fdrec writes its header byte for byte;
# verify, info and recover read fdrec files, including an interrupted one with a gap. Then the
# fdrec source on a user-space stand-in for the driver (fdrec_stub.c, LD_PRELOAD; the real
# driver cannot run here): its ioctls, the header it stamps, its usage errors, and recover's
# safety with a generator that starts at 0 every run.
. "$(dirname "$0")/lib.sh"

f="$T/r.dat"
expect_rc 0 "$NVT" record -q --format fdrec --rate 100MB --size 64M "$f"
python3 - "$f" <<'PY' || fail "fdrec header layout"
import struct, sys
h = open(sys.argv[1], "rb").read(4096)
magic, ver, size, beat, flags, design = struct.unpack_from("<8s5I", h, 0)
src_clk, rate, start, stop, data, drops, first = struct.unpack_from("<7Q", h, 28)
assert magic == b"FDREC\0\0\0" and ver == 1 and size == 4096 and beat == 16, (magic, ver)
assert flags == 3, flags                 # TPG | COMPLETE
assert rate == 100000000 and data == 64 << 20 and drops == 0
lo, hi = struct.unpack_from("<QQ", open(sys.argv[1], "rb").read(4096 + 16), 4096)
assert lo == first and hi == first ^ 0xFFFFFFFFFFFFFFFF, (first, lo)  # the run's own start
assert 0 < start < stop
assert h[84:90] == b"nvtape" and h[180:] == bytes(3916)
import os
assert os.path.getsize(sys.argv[1]) == 4096 + data
PY
ok "record --format fdrec: header matches fdrec_file.h field by field"

expect_rc 0 "$NVT" verify "$f"
grep -q "FPGA Drive Recorder v1" "$T/out" || fail "verify does not name the format"
expect_rc 0 "$NVT" info --json "$f"
grep -q '"format":"fdrec"' "$T/out" || fail "info --json format"
expect_rc 0 "$NVT" play --rate 200MB "$f"
[ "$(field beats)" = $((64 * 1048576 / 16)) ] && [ "$(field stop_reason)" = end ] || fail "play of an fdrec file"
ok "verify, info and play read fdrec files"

# the TPG flag cleared: an fdrec file has no checksums, so its beats are still checked as the
# pattern they are (a damaged beat is found), and the altered header is a problem (exit 2)
cp "$f" "$T/noflag.rec"
printf '\x02' | dd of="$T/noflag.rec" bs=1 seek=20 conv=notrunc status=none
expect_rc 2 "$NVT" verify "$T/noflag.rec"
grep -q "PROBLEM: the header says the data is not the test pattern" "$T/out" &&
	[ "$(field beats)" = $((64 * 1048576 / 16)) ] && [ "$(field corrupt)" = 0 ] ||
	fail "a cleared TPG flag: $(cat "$T/out")"
printf 'X' | dd of="$T/noflag.rec" bs=1 seek=$((4096 + 32 * 1048576)) conv=notrunc status=none
expect_rc 2 "$NVT" verify "$T/noflag.rec"
[ "$(field corrupt)" = 1 ] || fail "a damaged beat of an fdrec file without its TPG flag: $(grep RESULT "$T/out")"
ok "fdrec with its TPG flag cleared: its beats checked as the pattern (a damaged one found), exit 2"

# an fdrec recording whose writer died: preallocated, no COMPLETE, a 4096-beat gap
g="$T/dead.dat"
python3 - "$g" <<'PY'
import struct, sys
beats = []
seq = 0
for n in range(65536):
    if n == 32768:
        seq += 4096
    beats.append(struct.pack("<QQ", seq, seq ^ 0xFFFFFFFFFFFFFFFF))
    seq += 1
hdr = bytearray(4096)
struct.pack_into("<8s5I", hdr, 0, b"FDREC\0\0\0", 1, 4096, 16, 1, 0x00010002)
struct.pack_into("<7Q", hdr, 28, 200000000, 1000000000, 1700000000000000000, 0, 0, 0, 0)
hdr[84:88] = b"uzev"
with open(sys.argv[1], "wb") as f:
    f.write(hdr)
    f.write(b"".join(beats))
    f.write(bytes(3 << 20))       # preallocated, never written
PY
expect_rc 2 "$NVT" verify -q "$g"
grep -q "PROBLEM: recording not finalized" "$T/out" || fail "incomplete fdrec not reported"
expect_rc 0 "$NVT" recover "$g"
[ "$(field data_bytes)" = $((65536 * 16)) ] || fail "fdrec recover length $(field data_bytes)"
[ "$(field drops)" = 4096 ] || fail "fdrec recover drop count"
expect_rc 2 "$NVT" verify "$g"
[ "$(field gap_beats)" = 4096 ] && [ "$(field drops_match)" = 1 ] && [ "$(field complete)" = 1 ] || fail "verify after fdrec recover"
python3 - "$g" <<'PY' || fail "recover must keep the fields nvtape does not model"
import struct, sys
h = open(sys.argv[1], "rb").read(4096)
assert struct.unpack_from("<I", h, 24)[0] == 0x00010002 and struct.unpack_from("<Q", h, 28)[0] == 200000000
assert h[84:88] == b"uzev" and struct.unpack_from("<I", h, 20)[0] == 3
PY
ok "interrupted fdrec file: recover trims the zero tail, counts the 4096-beat gap, keeps design and clock fields"
# an interrupted fdrec file cut off the 4 KiB grid (1000 bytes short of 1 MiB), with and without
# zeros after it: recover keeps every whole beat, not a byte less (the short last block was left
# out: 3096 valid bytes cut) and not the zeros of the block it ends in (63 corrupt beats)
for zeros in 0 20000; do
	c="$T/cut$zeros.nvt"
	expect_rc 0 "$NVT" record -q --format fdrec --size 1M "$c"
	python3 - "$c" "$zeros" <<'PY' || fail "cut the fdrec file"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    flags = struct.unpack_from("<I", f.read(24), 20)[0]
    f.seek(20)
    f.write(struct.pack("<I", flags & ~2))  # not COMPLETE: the writer died
    f.truncate(4096 + (1 << 20) - 1000)
    f.seek(0, 2)
    f.write(bytes(int(sys.argv[2])))
PY
	expect_rc 0 "$NVT" recover "$c"
	[ "$(field data_bytes)" = $(((1048576 - 1000) / 16 * 16)) ] || fail "fdrec cut off the grid, $zeros zeros: recover kept $(field data_bytes)"
	expect_rc 0 "$NVT" verify "$c"
	[ "$(field corrupt)" = 0 ] || fail "verify after recover: $(grep RESULT "$T/out")"
done
ok "interrupted fdrec file off the 4 KiB grid: recover keeps every whole beat, no zeros"

# ---- the fdrec source on the stand-in driver ----
stub="$T/fdrec_stub.so"
${CC:-cc} -std=gnu11 -O2 -shared -fPIC -o "$stub" "$(dirname "$0")/fdrec_stub.c" -ldl -pthread ||
	{ echo "SKIP: no C compiler for the stand-in driver (the parts above passed)"; exit 77; }
export FDREC_STUB_DEV="$T/fdrec0"
src="fdrec:$FDREC_STUB_DEV"
# an ASan build's runtime must come first in the preload list
pre="$(ldd "$NVT" | awk '/libasan/ { print $3 }')"
pre="${pre:+$pre }$stub"
srec() { expect_rc "$1" env LD_PRELOAD="$pre" "${@:2}"; }

srec 0 "$NVT" record --source "$src" --rate 100MB --duration 1 "$T/s.nvt"
grep -q "the generator runs at 99999999 bytes/s" "$T/err" || fail "the programmed rate is not reported: $(cat "$T/err")"
expect_rc 0 "$NVT" verify "$T/s.nvt"
[ "$(field result)" = pass ] && [ "$(field drop_count)" = 0 ] || fail "verify of an fdrec-source recording: $(grep RESULT "$T/out")"
expect_rc 0 "$NVT" info --json "$T/s.nvt"
python3 - "$T/out" <<'PY' || fail "fdrec source header: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
h, m = j["header"], j.get("meta", {})
assert h["first_seq"] == 0, h["first_seq"]            # START's first_seq, not a random one
assert h["rate_bps"] == 99999999, h["rate_bps"]        # the rate SET_RATE programmed
assert h["source_name"] == "fdrec", h
PY
ok "fdrec source: records through the driver's ioctls, first_seq 0 and the programmed rate in the header"

# a drop where the device held no buffer for 30 ms: at its place, the driver's count
FDREC_STUB_HOLD=5:30 srec 2 "$NVT" record -q --source "$src" --rate 100MB --duration 1 "$T/d.nvt"
d=$(field drops)
expect_rc 2 "$NVT" verify "$T/d.nvt"
[ "$d" -gt 0 ] && [ "$(field gap_beats)" = "$d" ] && [ "$(field gaps)" = 1 ] && [ "$(field drops_match)" = 1 ] ||
	fail "fdrec source drops: $d recorded, $(grep RESULT "$T/out")"
ok "fdrec source: the FIFO's $d dropped beats indexed at their place"

# a beat the DMA damaged is data, not a drop: the driver's FIFO counted none
FDREC_STUB_CORRUPT=3 srec 0 "$NVT" record -q --source "$src" --rate 100MB --duration 1 "$T/c.nvt"
[ "$(field drops)" = 0 ] || fail "a damaged beat taken for a drop: $(grep RESULT "$T/out")"
expect_rc 2 "$NVT" verify "$T/c.nvt"
[ "$(field corrupt)" = 1 ] && [ "$(field gaps)" = 0 ] || fail "verify of a damaged beat: $(grep RESULT "$T/out")"
ok "fdrec source: a damaged beat stays in the data (verify finds it), no drop counted"

# --format fdrec from the fdrec source: the design version and source clock from GET_INFO, the
# start time from START
FDREC_STUB_HOLD=5:30 srec 2 "$NVT" record -q --format fdrec --source "$src" --rate 100MB --duration 1 "$T/f.dat"
python3 - "$T/f.dat" <<'PY' || fail "fdrec header from the fdrec source"
import struct, sys, time
h = open(sys.argv[1], "rb").read(4096)
design, = struct.unpack_from("<I", h, 24)
src_clk, rate, start, stop, data, drops, first = struct.unpack_from("<7Q", h, 28)
assert design == 0x00010001, hex(design)
assert src_clk == 250000000, src_clk
assert rate == 99999999 and first == 0 and drops > 0, (rate, first, drops)
assert abs(start / 1e9 - time.time()) < 120 and start < stop, (start, stop)
PY
expect_rc 2 "$NVT" verify "$T/f.dat"
[ "$(field drops_match)" = 1 ] && [ "$(field corrupt)" = 0 ] || fail "verify of the fdrec file: $(grep RESULT "$T/out")"
ok "--format fdrec --source fdrec: design_version, src_clk_hz, start time and first_seq from the driver"

# what the driver cannot take is refused, with the fix
srec 64 "$NVT" record -q --source "$src" --chunk 1M --duration 1 "$T/u1.nvt"
grep -q "multiple of 2 MiB up to 62 MiB.*give e.g. --chunk 8M" "$T/err" || fail "--chunk 1M: $(cat "$T/err")"
srec 64 "$NVT" record -q --source "$src" --chunk 64M --duration 1 "$T/u2.nvt"
srec 64 "$NVT" record -q --source "$src" --chunks 65 --duration 1 "$T/u3.nvt"
grep -q "takes 2 to 64 buffers.*give --chunks 2..64" "$T/err" || fail "--chunks 65: $(cat "$T/err")"
FDREC_STUB_API=2 srec 1 "$NVT" record -q --source "$src" --duration 1 "$T/u4.nvt"
grep -q "the driver speaks API version 2, nvtape speaks version 1" "$T/err" || fail "API version 2: $(cat "$T/err")"
FDREC_STUB_CAPS=2 srec 1 "$NVT" record -q --source "$src" --duration 1 "$T/u5.nvt"
grep -q "capabilities 0x2: record (S2MM, 0x2) and the generator (TPG, 0x1)" "$T/err" || fail "no TPG: $(cat "$T/err")"
ok "fdrec source: chunks the driver cannot take are usage errors; another API version, a device without a generator refused"

# the sink: played into the device's checker, whose counts are the playback's
srec 0 "$NVT" play --sink "$src" "$T/s.nvt"
[ "$(field beats)" = $(($(hdr data_bytes "$T/s.nvt") / 16)) ] && [ "$(field corrupt)" = 0 ] || fail "play --sink fdrec: $(grep RESULT "$T/out")"
srec 0 "$NVT" play --sink "$src" "$T/d.nvt"
[ "$(field gap_beats)" = "$d" ] && [ "$(field gaps)" = 1 ] || fail "play --sink fdrec of drops: $(grep RESULT "$T/out")"
cp "$T/s.nvt" "$T/bad.nvt"
printf 'X' | dd of="$T/bad.nvt" bs=1 seek=$((4096 + 16 * 1048576 + 3)) conv=notrunc status=none
srec 2 "$NVT" play --sink "$src" "$T/bad.nvt"
[ "$(field corrupt)" = 1 ] || fail "a damaged beat at the device's checker: $(grep RESULT "$T/out")"
FDREC_STUB_CAPS=3 srec 1 "$NVT" play --sink "$src" "$T/s.nvt"
grep -q "cannot play into its checker (capabilities 0x3" "$T/err" || fail "play without MM2S: $(cat "$T/err")"
ok "fdrec sink: the checker's beats, gaps and a damaged beat are the playback's; a device without playback refused"

FDREC_STUB_STOP_FAILS=1 srec 1 "$NVT" play --sink "$src" "$T/s.nvt"
grep -q "PLAY_STOP failed (the checker's counts are unknown)" "$T/err" ||
	fail "a failed PLAY_STOP: $(cat "$T/err")"
FDREC_STUB_SHORT=3 srec 1 "$NVT" record -q --source "$src" --rate 100MB --duration 1 "$T/short.nvt"
grep -q "buffer [0-9]* holds 8388592 of 8388608 bytes: the packet ended early" "$T/err" ||
	fail "a short buffer without its flag: $(cat "$T/err")"
ok "a failed PLAY_STOP is a runtime error (exit 1), not gaps; a short buffer without its flag stops the recording"

# beats lost after the FIFO (a jump the driver did not count) stay data, through a crash too:
# recover takes the drops from the checkpoint's index, not from the jumps it finds
FDREC_STUB_SKIP=2 env LD_PRELOAD="$pre" "$NVT" record -q --source "$src" --rate 20MB "$T/odd.nvt" \
	>/dev/null 2>&1 &
pid=$!
wait_header "$T/odd.nvt" 3
kill -9 $pid
wait $pid 2>/dev/null
expect_rc 0 "$NVT" recover "$T/odd.nvt"
expect_rc 2 "$NVT" verify "$T/odd.nvt"
[ "$(field gap_beats)" = 11 ] && [ "$(field drop_count)" = 0 ] ||
	fail "a jump not counted as a drop, after recover: $(grep RESULT "$T/out")"
ok "fdrec: 11 beats lost after the FIFO stay a gap no drop explains, after kill -9 and recover (exit 2)"

# one opener: a second recorder is told the device is in use
env LD_PRELOAD="$pre" "$NVT" record -q --source "$src" --rate 20MB --duration 4 "$T/busy1.nvt" >/dev/null 2>&1 &
pid=$!
wait_header "$T/busy1.nvt" 1
srec 1 "$NVT" record -q --source "$src" --duration 1 "$T/busy2.nvt"
grep -q "is in use: the driver takes one opener at a time" "$T/err" || fail "second opener: $(cat "$T/err")"
wait $pid || fail "the first recorder failed"
ok "fdrec: a second opener is refused while a recording runs"

# recover with a generator that starts at 0 every run: an earlier, longer run's blocks on the
# same device continue this run's sequence exactly, so the pattern cannot tell them apart:
# only what the checkpoint and its checksums vouch for is kept
if [ "$(id -u)" = 0 ]; then
	make_loop 384M none
	raw=$DEV
	srec 0 "$NVT" record -q --force --source "$src" --rate 100MB --size 320M "$raw"
	env LD_PRELOAD="$pre" "$NVT" record -q --force --source "$src" --rate 50MB "$raw" >/dev/null 2>&1 &
	pid=$!
	# the new run's header (not the earlier one's: not complete) with 32 MiB durable
	for i in $(seq 600); do
		"$NVT" info --json "$raw" 2>/dev/null | python3 -c "
import json, sys
h = json.load(sys.stdin)['header']
sys.exit(0 if not h['complete'] and h['durable_bytes'] >= 32 << 20 else 1)" && break
		sleep 0.1
	done
	kill -9 $pid
	killed=$(date +%s%N)
	wait $pid 2>/dev/null
	start=$(hdr start_ns "$raw")
	expect_rc 0 "$NVT" recover "$raw"
	expect_rc 0 "$NVT" verify -q "$raw"
	kept=$(field bytes)
	# at most what this run's generator made by the kill (50 MB/s since its START), a chunk more
	most=$(((killed - start) / 20 + 8388608))
	[ "$kept" -ge 33554432 ] && [ "$kept" -le "$most" ] ||
		fail "recover kept $kept bytes: this run made at most $most (the earlier run's 320 MiB taken for its data?), at least 32 MiB were durable"
	ok "fdrec source killed over an earlier 320 MiB run from seq 0: recover keeps only this run ($kept bytes, made <= $most)"
	# the fdrec format on a device has no checkpoint to tell this run's blocks from the earlier
	# one's: recover says so
	expect_rc 0 "$NVT" record -q --force --format fdrec --size 8M "$raw"
	printf '\x01' | dd of="$raw" bs=1 seek=20 conv=notrunc status=none # not COMPLETE
	expect_rc 0 "$NVT" recover "$raw"
	grep -q "FPGA Drive Recorder file on a device has no checkpoint.*may run past what it recorded" "$T/err" ||
		fail "recover of an fdrec file on a device: $(cat "$T/err")"
	ok "recover of an fdrec-format file on a device says that its tail cannot be told from an earlier run's"
else
	echo "note: not root: the recover check over a loop device is left out"
fi
echo "fdrec: all passed"
