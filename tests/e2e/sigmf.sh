#!/bin/bash
# SPDX-License-Identifier: MIT
# SigMF export's honesty about the time axis and its in-place form's arithmetic: an fdrec
# recording with drops (it keeps their count, not their places) exports as SigMF with exit 2, a
# PROBLEM line and a "drops unplaced" annotation instead of a silently gapless capture; the
# in-place .sigmf-meta of a recording of every datatype leaves a whole number of samples from
# core:header_bytes to the file's end, as sigmf-python's loader maps and reshapes it.
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
echo "sigmf: all passed"
