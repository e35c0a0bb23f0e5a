#!/bin/bash
# SPDX-License-Identifier: MIT
# SigMF export's honesty about the time axis and its in-place form's arithmetic: an fdrec
# recording with drops (it keeps their count, not their places), or an nvtape one without its
# drop index, exports as SigMF with exit 2, a PROBLEM line and a "drops unplaced" annotation
# instead of a silently gapless capture; the in-place .sigmf-meta of a recording of every
# datatype leaves a whole number of samples from core:header_bytes to the file's end, as
# sigmf-python's loader maps and reshapes it, also after nvtape meta and recover rewrite the
# index; an index written unpadded (older nvtape) is named, with the fix.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3 # numpy and jsonschema are Debian packages (scripts/deps test)
$PY -c 'import numpy, jsonschema' 2>/dev/null || { echo "SKIP: python3-numpy, python3-jsonschema (scripts/deps test)"; exit 77; }
schema="$(dirname "$0")/sigmf-meta.schema.json"
jschema="$(dirname "$0")/../../docs/schema/export.json"

# fdrec files as the FPGA Drive Recorder writes them: 65536 beats, a 4096-beat gap at beat 32768
# that only the header's drop count records (FLAGS: 3 test pattern, 2 other data), or no gap
mkfdrec() { # FILE FLAGS GAP
	$PY - "$@" <<'PY'
import struct, sys
path, flags, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out, seq = [], 0
for n in range(65536):
    if n == 32768:
        seq += gap
    out.append(struct.pack("<QQ", seq, seq ^ 0xFFFFFFFFFFFFFFFF))
    seq += 1
hdr = bytearray(4096)
struct.pack_into("<8s5I", hdr, 0, b"FDREC\0\0\0", 1, 4096, 16, flags, 0x00010002)
struct.pack_into("<7Q", hdr, 28, 200000000, 400000000, 1700000000000000000,
                 1700000000100000000, 65536 * 16, gap, 0)
hdr[84:88] = b"uzev"
open(path, "wb").write(bytes(hdr) + b"".join(out))
PY
}
mkfdrec "$T/g.dat" 3 4096
mkfdrec "$T/o.dat" 2 4096
mkfdrec "$T/n.dat" 3 0
expect_rc 2 "$NVT" verify "$T/g.dat"
[ "$(field drop_count)" = 4096 ] && [ "$(field gap_beats)" = 4096 ] || fail "the fdrec file: $(grep RESULT "$T/out")"

for f in g o; do
	expect_rc 2 "$NVT" export --format sigmf -o "$T/$f" "$T/$f.dat"
	[ "$(field unplaced_samples)" = $((4096 * 16)) ] && [ "$(field captures)" = 1 ] ||
		fail "fdrec $f: $(grep RESULT "$T/out")"
	grep -q "^PROBLEM: the recording counts 65536 samples lost but does not keep where (an FPGA Drive Recorder file keeps only its drop count)" "$T/out" ||
		fail "fdrec $f: no PROBLEM line: $(cat "$T/out")"
	hint="only the samples before the first loss have a trusted time"
	[ $f = g ] && hint="for test-pattern data nvtape verify lists where the gaps are"
	grep -q "$hint" "$T/out" || fail "fdrec $f: the PROBLEM line does not say \"$hint\""
	cmp "$T/$f.sigmf-data" <(tail -c +4097 "$T/$f.dat") || fail "fdrec $f: the data"
	$PY - "$T/$f.sigmf-meta" "$schema" <<'PY' || fail "fdrec $f: SigMF metadata"
import json, sys
import jsonschema
m = json.load(open(sys.argv[1]))
jsonschema.validate(m, json.load(open(sys.argv[2])))
g, a = m["global"], m["annotations"]
assert g["core:datatype"] == "ru8" and g["nvtape:unplaced_samples"] == 65536, g
assert len(a) == 1 and a[0]["core:sample_start"] == 0 and a[0]["core:sample_count"] == 65536 * 16, a
assert a[0]["core:label"] == "drops unplaced" and "65536 samples were lost" in a[0]["core:comment"], a
PY
done
expect_rc 2 "$NVT" export --format sigmf-meta --json -o "$T/gm" "$T/g.dat"
$PY - "$T/out" "$jschema" <<'PY' || fail "fdrec sigmf-meta --json: $(cat "$T/out")"
import json, sys
import jsonschema
j = json.load(open(sys.argv[1]))
jsonschema.validate(j, json.load(open(sys.argv[2])))
assert j["exit"] == 2 and j["result"] == "fail" and j["unplaced_samples"] == 65536, j
PY
expect_rc 0 "$NVT" export --format sigmf -o "$T/n" "$T/n.dat"
[ "$(field unplaced_samples)" = 0 ] || fail "fdrec without drops: $(grep RESULT "$T/out")"
grep -q "drops unplaced" "$T/n.sigmf-meta" && fail "fdrec without drops has the annotation"
expect_rc 0 "$NVT" export -o "$T/raw.bin" "$T/g.dat"
ok "fdrec with a 4096-beat drop: SigMF exit 2, 65536 samples unplaced, annotated; without drops and raw: 0"

# an nvtape recording whose drop index is gone (cut off, the header made to match): its drops
# have no places either. A dev recording, ci16_le, 400 bytes (100 samples) lost after 131072
rm -f "$T/f" && mkfifo "$T/f"
echo 0 >"$T/cnt"
timeout 60 $PY "$(dirname "$0")/fifo_producer.py" "$T/f" "$T/cnt" "$T/expect.bin" w131072 d c400 p w131072 &
prod=$!
expect_rc 2 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" --chunk 64K --datatype ci16_le "$T/d.nvt"
wait $prod || fail "producer"
expect_rc 0 "$NVT" export --format sigmf -o "$T/d" "$T/d.nvt"
[ "$(field dropped_samples)" = 100 ] && [ "$(field unplaced_samples)" = 0 ] || fail "indexed drops: $(grep RESULT "$T/out")"
PYTHONPATH="$(dirname "$0")/../../python" $PY - "$T/d.nvt" <<'PY' || fail "cut the index"
import struct, sys
import nvtape
f = open(sys.argv[1], "r+b")
slots = bytearray(f.read(4096))
off, n = struct.unpack_from("<QQ", slots, 112)
assert n and struct.unpack_from("<Q", slots, 88)[0] == 400, "a drop count of 400 bytes"
for s in (0, 2048):
    struct.pack_into("<QQI", slots, s + 112, 0, 0, 0)
    struct.pack_into("<I", slots, s + 2044, nvtape.crc32c(bytes(slots[s:s + 2044])))
f.seek(0)
f.write(slots)
f.truncate(off)
PY
expect_rc 2 "$NVT" export --format sigmf -o "$T/d" "$T/d.nvt"
# the metadata went with the index: ru8, a sample a byte
[ "$(field dropped_samples)" = 0 ] && [ "$(field unplaced_samples)" = 400 ] || fail "no index: $(grep RESULT "$T/out")"
grep -q "^PROBLEM: the recording counts 400 samples lost but does not keep where (its drop index is missing)" "$T/out" ||
	fail "no index: $(cat "$T/out")"
grep -q '"nvtape:unplaced_samples": 400' "$T/d.sigmf-meta" || fail "no index: $(cat "$T/d.sigmf-meta")"
ok "an nvtape recording without its drop index: 400 bytes unplaced, exit 2 (0 with the index)"
# the in-place form: for every datatype nvtape takes, 1, 3 and 7 channels, the recording ends a
# whole number of samples after core:header_bytes, so sigmf-python's loader (np.memmap from
# header_bytes to the file's end, reshaped to samples x channels x 2 for complex integers) opens
# it, and its sample count (the bytes between header_bytes and trailing_bytes) is the range's
loader() { # META RECORDING LENGTH
	$PY - "$@" <<'PY'
import json, os, sys, warnings
import numpy as np
warnings.simplefilter("error")
m = json.load(open(sys.argv[1]))
path, length = sys.argv[2], int(sys.argv[3])
g, c = m["global"], m["captures"]
dt, ch = g["core:datatype"], g.get("core:num_channels", 1)
hb, tb = c[0]["core:header_bytes"], g.get("core:trailing_bytes", 0)
cplx, kind, bits = dt[0] == "c", dt[1], int(dt[2:].split("_")[0])
end = ">" if dt.endswith("_be") else "<"
comp = np.dtype(end + kind + str(bits // 8))
mapped = np.dtype(end + "c" + str(bits // 4)) if cplx and kind == "f" else comp
shape = (-1,) + ((ch,) if ch > 1 else ()) + ((2,) if cplx and kind != "f" else ())
ss = comp.itemsize * (2 if cplx else 1) * ch
size = os.path.getsize(path)
assert hb == 4096 and length % ss == 0, (hb, length, ss)
# the loader: the whole dataset from header_bytes to the end, reshaped to samples
a = np.memmap(path, dtype=mapped, mode="r", offset=hb).reshape(shape)
count, rem = divmod(size - hb - tb, ss)
assert rem == 0 and count == length // ss, (size, hb, tb, ss, length)
assert a.shape[0] * ss == size - hb and a.shape[0] >= count, (a.shape, size)
raw = open(path, "rb").read()
assert a[:count].tobytes() == raw[hb:size - tb], "the samples differ"
PY
}
types="ri8 ru8 ci8 cu8"
for r in r c; do for t in f64 f32 i32 i16 u32 u16; do for e in le be; do types="$types $r${t}_$e"; done; done; done
n=0
for dt in $types; do
	for ch in 1 3 7; do
		f="$T/t-$dt-$ch.nvt"
		"$NVT" record -q --size 256K --chunk 64K --datatype "$dt" --channels $ch "$f" >/dev/null 2>&1 || fail "record $dt x $ch"
		ss=$($PY -c "import sys; d=sys.argv[1]; print((1 if d[2]=='8' else int(d[2:4])//8) * (2 if d[0]=='c' else 1) * int(sys.argv[2]))" "$dt" $ch)
		len=$((262144 / ss * ss))
		expect_rc 0 "$NVT" export --format sigmf-meta --length $len -o "${f%.nvt}" "$f"
		grep -q "off a whole number" "$T/err" && fail "$dt x $ch: $(cat "$T/err")"
		loader "${f%.nvt}.sigmf-meta" "$f" $len || fail "$dt x $ch: the loader: $(cat "${f%.nvt}.sigmf-meta")"
		n=$((n + 1))
	done
done
expect_rc 0 "$NVT" verify "$T/t-ci16_le-3.nvt"
ok "sigmf-meta in place: $n recordings (every datatype, 1, 3, 7 channels) open with the loader's memmap and reshape"

# nvtape meta sets another sample size: the index is rewritten padded to it
f="$T/t-ci16_le-1.nvt"
expect_rc 0 "$NVT" meta "$f" core:datatype=cf64_le core:num_channels=5
expect_rc 0 "$NVT" export --format sigmf-meta --length $((262144 / 80 * 80)) -o "$T/t-meta" "$f"
loader "$T/t-meta.sigmf-meta" "$f" $((262144 / 80 * 80)) || fail "after nvtape meta"
expect_rc 0 "$NVT" verify "$f"
ok "nvtape meta core:datatype=cf64_le core:num_channels=5: the rewritten index pads to 80-byte samples"

# a recording whose index an older nvtape wrote unpadded (the same file with its index cut to its
# records, the header's length and CRCs made to match): export says so and names the fix
unpad() { # FILE [interrupted]: the index cut to its records (and the COMPLETE flag cleared)
	PYTHONPATH="$(dirname "$0")/../../python" $PY - "$@" <<'PY' || fail "unpad the index of $1"
import os, struct, sys
import nvtape
f = open(sys.argv[1], "r+b")
slots = bytearray(f.read(4096))
off, n = struct.unpack_from("<QQ", slots, 112)
f.seek(off)
ix = f.read(n)
used, = struct.unpack_from("<I", ix, 12)
pos = 16
for _ in range(used):
    pos += 16 + struct.unpack_from("<Q", ix, pos + 8)[0]
assert pos < n, (pos, n)  # it was padded
for s in (0, 2048):
    struct.pack_into("<QI", slots, s + 120, pos, nvtape.crc32c(ix[:pos]))
    if len(sys.argv) > 2:
        struct.pack_into("<I", slots, s + 20, struct.unpack_from("<I", slots, s + 20)[0] & ~1)
    struct.pack_into("<I", slots, s + 2044, nvtape.crc32c(bytes(slots[s:s + 2044])))
f.seek(0)
f.write(slots)
f.truncate(off + pos)
PY
}
f="$T/t-ri8-3.nvt"
unpad "$f"
expect_rc 0 "$NVT" verify "$f"
len=$((262144 / 3 * 3))
expect_rc 0 "$NVT" export --format sigmf-meta --length $len -o "$T/old" "$f"
grep -q "t-ri8-3.nvt ends [12] bytes off a whole number of 3-byte samples of ri8 after core:header_bytes.*nvtape meta .*t-ri8-3.nvt core:datatype=ri8 rewrites the index padded" "$T/err" ||
	fail "an unpadded index: no notice: $(cat "$T/err")"
loader "$T/old.sigmf-meta" "$f" $len 2>/dev/null && fail "the loader opened the unpadded file"
expect_rc 0 "$NVT" meta "$f" core:datatype=ri8
expect_rc 0 "$NVT" export --format sigmf-meta --length $len -o "$T/old" "$f"
grep -q "off a whole number" "$T/err" && fail "still off after nvtape meta: $(cat "$T/err")"
loader "$T/old.sigmf-meta" "$f" $len || fail "the loader after nvtape meta"
ok "an index written unpadded: export names the file, the bytes off and nvtape meta, which pads it"
# recover rewrites the index of an interrupted recording padded too
f="$T/t-cu16_be-7.nvt"
unpad "$f" interrupted
len=$((262144 / 28 * 28))
expect_rc 2 "$NVT" verify "$f"
grep -q "not finalized" "$T/out" || fail "not interrupted: $(cat "$T/out")"
expect_rc 0 "$NVT" recover "$f"
expect_rc 0 "$NVT" export --format sigmf-meta --length $len -o "$T/rec" "$f"
grep -q "off a whole number" "$T/err" && fail "off after recover: $(cat "$T/err")"
loader "$T/rec.sigmf-meta" "$f" $len || fail "the loader after recover"
ok "recover of an interrupted recording whose index was unpadded: padded to 28-byte samples"
echo "sigmf: all passed"
