#!/bin/bash
# SPDX-License-Identifier: MIT
# nvtape export: raw ranges equal play --sink stdout's bytes; a time range extracts exactly the
# bytes between two chunk capture times; SigMF of a recording with drops shows each gap at its
# sample index as a jump of core:global_index, validates against a schema written from the
# SigMF 1.0 specification, and core:sha512 is the data file's; sigmf-meta describes the
# recording in place (header and trailing bytes); a changed chunk exports with exit 2.
. "$(dirname "$0")/lib.sh"
python3 -c 'import jsonschema' 2>/dev/null || { echo "SKIP: python3-jsonschema (scripts/deps test)"; exit 77; }

# a dev recording, complex int16 samples (4 bytes), 64 KiB chunks; 400 bytes (100 samples) lost
# after 131072 bytes and 12 (3 samples) after 262144, pauses between the writes
rm -f "$T/f" && mkfifo "$T/f"
echo 0 >"$T/cnt"
timeout 60 python3 "$(dirname "$0")/fifo_producer.py" "$T/f" "$T/cnt" "$T/expect.bin" \
	w131072 d c400 p w131072 d c412 p w131072 &
prod=$!
expect_rc 2 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" --chunk 64K --datatype ci16_le \
	--sample-rate 1e6 --center-freq 100e6 --meta antenna=dipole "$T/r.nvt"
wait $prod || fail "producer"

# raw: a range and the whole data, against play --sink stdout
"$NVT" play -q --sink stdout "$T/r.nvt" >"$T/all.bin" 2>/dev/null
expect_rc 0 "$NVT" export --offset 1000 --length 200000 -o "$T/part.bin" "$T/r.nvt"
cmp "$T/part.bin" <(tail -c +1001 "$T/all.bin" | head -c 200000) || fail "raw range differs"
expect_rc 0 bash -c "'$NVT' export -q '$T/r.nvt' >'$T/whole.bin'"
cmp "$T/whole.bin" "$T/all.bin" || fail "raw export differs from play"
ok "raw export: a range and the whole data equal play --sink stdout's bytes"

# a time range between chunk 1's and chunk 4's capture times: exactly those bytes
times=$(PYTHONPATH="$(dirname "$0")/../../python" /usr/bin/python3 -c '
import sys, nvtape
t = nvtape.Recording(sys.argv[1]).chunk_times()
print(t[1][1], t[4][1], t[1][0], t[4][0])' "$T/r.nvt") || fail "chunk times"
read -r t1 t4 o1 o4 <<<"$times"
iso=$(python3 -c "import datetime,sys; t=int(sys.argv[1]); print(datetime.datetime.fromtimestamp(t//10**9, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S') + '.%09dZ' % (t%10**9))" "$t1")
unix=$(python3 -c "import sys; t=int(sys.argv[1]); print('@%d.%09d' % (t // 10**9, t % 10**9))" "$t4")
expect_rc 0 "$NVT" export --from "$iso" --to "$unix" -o "$T/t.bin" "$T/r.nvt"
[ "$(field offset)" = "$o1" ] && [ "$(field bytes)" = $((o4 - o1)) ] ||
	fail "time range: $(grep ^RESULT "$T/out") want $o1 + $((o4 - o1))"
cmp "$T/t.bin" <(tail -c +$((o1 + 1)) "$T/all.bin" | head -c $((o4 - o1))) || fail "time range bytes"
expect_rc 64 "$NVT" export --from 1 --offset 5 -o "$T/x.bin" "$T/r.nvt"
expect_rc 64 "$NVT" export --from yesterday -o "$T/x.bin" "$T/r.nvt"
ok "--from (ISO 8601) .. --to (@UNIX): bytes $o1 to $o4, the chunks captured between those times"

# SigMF: the drops are capture boundaries whose global index jumps by the samples lost
expect_rc 0 "$NVT" export --format sigmf -o "$T/s" "$T/r.nvt"
cmp "$T/s.sigmf-data" "$T/all.bin" || fail "sigmf data"
python3 - "$T/s.sigmf-meta" "$T/s.sigmf-data" "$(dirname "$0")/sigmf-meta.schema.json" <<'PY' || fail "SigMF metadata"
import hashlib, json, sys
import jsonschema
m = json.load(open(sys.argv[1]))
jsonschema.validate(m, json.load(open(sys.argv[3])))
g, c, a = m["global"], m["captures"], m["annotations"]
assert g["core:datatype"] == "ci16_le" and g["core:sample_rate"] == 1e6, g
assert g["core:sha512"] == hashlib.sha512(open(sys.argv[2], "rb").read()).hexdigest()
assert g["nvtape:meta"] == {"antenna": "dipole"}, g
got = [(x["core:sample_start"], x["core:global_index"]) for x in c]
assert got == [(0, 0), (32768, 32868), (65536, 65639)], got
assert [x["core:sample_start"] for x in c] == sorted(x["core:sample_start"] for x in c)
assert all(x["core:frequency"] == 1e8 for x in c) and "core:datetime" in c[0], c
assert [x["core:sample_start"] for x in a] == [32768, 65536] and "100 samples" in a[0]["core:comment"], a
PY
ok "SigMF: gaps at samples 32768 (+100) and 65536 (+3) as global index jumps; schema, sha512, data"

# only the metadata, the recording described in place
expect_rc 0 "$NVT" export --format sigmf-meta -o "$T/r" "$T/r.nvt"
python3 - "$T/r.sigmf-meta" "$T/r.nvt" "$(dirname "$0")/sigmf-meta.schema.json" "$T/all.bin" <<'PY' || fail "SigMF in place"
import json, os, sys
import jsonschema
m = json.load(open(sys.argv[1]))
jsonschema.validate(m, json.load(open(sys.argv[3])))
g, c = m["global"], m["captures"]
n = os.path.getsize(sys.argv[4])
assert g["core:dataset"] == "r.nvt" and c[0]["core:header_bytes"] == 4096, (g, c[0])
assert g["core:trailing_bytes"] == os.path.getsize(sys.argv[2]) - 4096 - n, g
raw = open(sys.argv[2], "rb").read()
assert raw[4096:len(raw) - g["core:trailing_bytes"]] == open(sys.argv[4], "rb").read()
PY
expect_rc 64 "$NVT" export --format sigmf-meta -o "$T/sub/r" "$T/r.nvt"
ok "sigmf-meta: core:dataset r.nvt, header 4096 bytes, trailing bytes the index: nothing copied"

# a chunk changed on the medium: exported as it is, exit 2
python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(4096 + 70000); b = f.read(1)
f.seek(4096 + 70000); f.write(bytes([b[0] ^ 1]))' "$T/r.nvt"
expect_rc 2 "$NVT" export -o "$T/bad.bin" "$T/r.nvt"
[ "$(field chunks_bad)" = 1 ] || fail "bad chunk: $(grep ^RESULT "$T/out")"
expect_rc 64 "$NVT" export --format sigmf "$T/r.nvt"
expect_rc 64 "$NVT" export --offset 1 --format sigmf -o "$T/u" "$T/r.nvt"
expect_rc 64 "$NVT" export --offset 10M -o "$T/x.bin" "$T/r.nvt"
ok "a changed chunk: exit 2 (chunks_bad 1); SigMF without -o, off whole samples, a range beyond the data: 64"
# a stripe: the members are read through the layout like any recording
"$NVT" record -q --size 4M --chunk 1M --stripe 64K "$T/m0" "$T/m1" >/dev/null 2>&1 || fail "stripe record"
expect_rc 0 bash -c "'$NVT' export -q --stripe 64K --offset 100000 '$T/m0' '$T/m1' >'$T/se.bin'"
cmp "$T/se.bin" <("$NVT" play -q --sink stdout --stripe 64K "$T/m0" "$T/m1" 2>/dev/null | tail -c +100001) ||
	fail "stripe export differs"
ok "a stripe of two members: export from byte 100000 equals play's bytes"
echo "export: all passed"
