#!/bin/bash
# SPDX-License-Identifier: MIT
# Metadata: record's options land in the index (info, info --json, nvtape meta); the test
# pattern says what it is; nvtape meta sets and removes keys without touching the data (the
# data's checksums still match, the file ends at its index); a recording killed with -9 keeps
# its metadata through recover; wrong options and edits are usage errors (64), an interrupted
# or fdrec recording cannot be edited (1); chunk times follow the data.
. "$(dirname "$0")/lib.sh"

head -c 5000000 /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --chunk 1M --sample-rate 2.4e6 --datatype ci16_le \
	--center-freq 433.92e6 --channels 2 --description 'a test: é' --author someone \
	--meta antenna=dipole '$T/m.nvt' <'$T/in.bin'"
expect_rc 0 "$NVT" meta "$T/m.nvt"
cat >"$T/want" <<'W'
core:sample_rate=2400000
core:datatype=ci16_le
core:frequency=433920000
core:num_channels=2
core:description=a test: é
core:author=someone
antenna=dipole
RESULT result=pass keys_set=0 exit=0
W
cmp "$T/out" "$T/want" || { diff "$T/out" "$T/want"; fail "meta after record"; }
expect_rc 0 "$NVT" info "$T/m.nvt"
grep -q "^    core:datatype          ci16_le$" "$T/out" || fail "info shows the metadata"
ok "record --sample-rate/--datatype/--center-freq/--channels/--description/--author/--meta: kept, shown by meta and info"

end0=$(rec_end "$T/m.nvt")
expect_rc 0 "$NVT" meta "$T/m.nvt" core:author= site=lab "core:description=changed = twice"
expect_rc 0 "$NVT" meta --json "$T/m.nvt"
python3 - "$T/out" <<'PY' || fail "meta after the edit"
import json, sys
m = json.load(open(sys.argv[1]))["meta"]
assert "core:author" not in m and m["site"] == "lab" and m["core:description"] == "changed = twice", m
assert m["core:datatype"] == "ci16_le" and list(m)[-1] == "core:description", m
PY
[ "$(stat -c %s "$T/m.nvt")" = "$(rec_end "$T/m.nvt")" ] || fail "the file does not end at its index"
expect_rc 0 "$NVT" verify "$T/m.nvt"
[ "$(field chunks_good)" = 5 ] && [ "$(field complete)" = 1 ] || fail "verify after the edit: $(grep ^RESULT "$T/out")"
"$NVT" play -q --sink stdout "$T/m.nvt" 2>/dev/null | cmp - "$T/in.bin" || fail "the data changed"
[ "$(hdr generation "$T/m.nvt")" -gt 2 ] || fail "the header was not rewritten"
ok "meta KEY= removes, KEY=VALUE sets (a value may hold '='): data, checksums and length intact (end $end0 -> $(rec_end "$T/m.nvt"))"

# the test pattern says what it is
expect_rc 0 "$NVT" record -q --rate 160MB --size 8M "$T/t.nvt"
expect_rc 0 "$NVT" meta "$T/t.nvt"
grep -qx "nvtape:beat=u64le seq, u64le ~seq" "$T/out" && grep -qx "core:datatype=ru8" "$T/out" &&
	grep -qx "core:sample_rate=160000000" "$T/out" || { cat "$T/out"; fail "test pattern metadata"; }
ok "the test pattern: its beat layout, bytes (ru8) and its rate in bytes per second (160 MB/s)"

# usage errors and what cannot be edited
expect_rc 64 "$NVT" record -q --datatype cf33 "$T/x.nvt"
expect_rc 64 "$NVT" record -q --sample-rate -5 "$T/x.nvt"
expect_rc 64 "$NVT" record -q --channels 0 "$T/x.nvt"
expect_rc 64 "$NVT" record -q --meta "bad key=1" "$T/x.nvt"
expect_rc 64 "$NVT" record -q --description "$(printf 'two\nlines')" "$T/x.nvt"
[ ! -e "$T/x.nvt" ] || fail "a refused option left a recording"
expect_rc 64 "$NVT" meta "$T/m.nvt" core:datatype=cf33
expect_rc 64 "$NVT" meta "$T/m.nvt" a=1 "$T/t.nvt"
expect_rc 0 "$NVT" record -q --format fdrec --size 1M "$T/f.nvt"
expect_rc 1 "$NVT" meta "$T/f.nvt" a=1
grep -q "no index to keep metadata in" "$T/err" || fail "fdrec message"
ok "bad --datatype, --sample-rate, --channels, --meta key, a two-line value, a bad edit: 64; fdrec: 1"

# killed with -9: the checkpoint's index carries the metadata; recover keeps it; an interrupted
# recording cannot be edited before recover
rm -f "$T/f" && mkfifo "$T/f"
echo 0 >"$T/cnt"
timeout 60 python3 "$(dirname "$0")/fifo_producer.py" "$T/f" "$T/cnt" "$T/expect.bin" w131072 d s20 &
prod=$!
"$NVT" record -q --source dev:"$T/f" --chunk 64K --meta run=42 "$T/k.nvt" >/dev/null 2>&1 &
pid=$!
for i in $(seq 300); do
	[ "$(hdr durable_bytes "$T/k.nvt" 2>/dev/null)" = 131072 ] && break
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
expect_rc 1 "$NVT" meta "$T/k.nvt" run=43
grep -q "run nvtape recover first" "$T/err" || fail "interrupted recording message"
kill $prod 2>/dev/null
wait $prod 2>/dev/null
expect_rc 0 "$NVT" recover "$T/k.nvt"
expect_rc 0 "$NVT" meta "$T/k.nvt"
grep -qx "run=42" "$T/out" || fail "metadata lost by recover"
ok "killed with -9: the metadata survives in the checkpoint's index and through recover"
# SigMF's numbers hold what can be real (meta and record --meta alike); the file is untouched
cp "$T/t.nvt" "$T/v.nvt"
sum=$(sha256sum <"$T/v.nvt")
for kv in core:num_channels=0 core:num_channels=65537 core:num_channels=1152921504606846976 \
	core:num_channels=1.5 core:sample_rate=-1 core:sample_rate=0 core:sample_rate=inf \
	core:sample_rate=0x10 core:frequency=nan core:frequency=1e999 core:datatype=cf33; do
	expect_rc 64 "$NVT" meta "$T/v.nvt" "$kv"
	grep -q "${kv%%=*}" "$T/err" || { cat "$T/err"; fail "meta $kv: the message does not name the key"; }
	expect_rc 64 "$NVT" record -q --size 4K --meta "$kv" "$T/y.nvt"
done
[ "$(sha256sum <"$T/v.nvt")" = "$sum" ] || fail "a refused value changed the file"
[ ! -e "$T/y.nvt" ] || fail "record --meta with a refused value left a recording"
expect_rc 0 "$NVT" meta -q "$T/v.nvt" core:num_channels=65536 core:sample_rate=2.4e6 core:frequency=-1e3
ok "meta and record --meta: num_channels 0, > 2^16, not whole; sample_rate <= 0, inf, hex; frequency nan, out of range; a bad datatype: 64"

# a key too long, or with a character a key cannot have, is named as such (it was taken for a
# FILE: "the FILEs come first" or "cannot open")
long=$(printf 'k%.0s' $(seq 70))
expect_rc 64 "$NVT" meta "$T/v.nvt" "$long=1"
grep -q "a key is 1-64 characters of \[A-Za-z0-9_:-\]; this one has 70" "$T/err" || { cat "$T/err"; fail "a 70-character key"; }
expect_rc 64 "$NVT" meta "$T/v.nvt" "bad key=1"
grep -q "not ' '" "$T/err" || { cat "$T/err"; fail "a key with a space"; }
ok "meta: a key too long or with a bad character: 64, naming the key's problem"

# info shows what a recording says, not what it would make a terminal do
expect_rc 0 "$NVT" meta -q "$T/v.nvt" "note=$(printf 'a\033]0;pwned\007b\302\233c')"
expect_rc 0 "$NVT" info "$T/v.nvt"
grep -qF 'a\x1b]0;pwned\x07b\xc2\x9bc' "$T/out" || { cat -v "$T/out"; fail "info: the value shown escaped"; }
LC_ALL=C grep -q "$(printf '[\033\007]')" "$T/out" && fail "info wrote a control character"
expect_rc 0 script -qec "'$NVT' meta '$T/v.nvt'" /dev/null
tr -d '\r' <"$T/out" | grep -qxF 'note=a\x1b]0;pwned\x07b\xc2\x9bc' || { cat -v "$T/out"; fail "meta on a terminal: not escaped"; }
expect_rc 0 "$NVT" meta "$T/v.nvt"
grep -q "^note=a$(printf '\033')]0;pwned" "$T/out" || { cat -v "$T/out"; fail "meta into a pipe: the value changed"; }
ok "info (and meta on a terminal) show control characters as \\xNN; meta into a pipe keeps the value"
echo "meta: all passed"
