#!/bin/bash
# SPDX-License-Identifier: MIT
# python/nvtape.py, the pure-Python reader, against recordings the CLI makes: header fields
# equal `nvtape info --json`'s, the data equals the file's bytes, drop events equal the index,
# chunk checksums are read and checked as verify checks them,
# interrupted, striped and fdrec recordings, damaged headers refused clearly, check's exit codes,
# the same results from every way of computing CRC32C, check's progress on a terminal.
. "$(dirname "$0")/lib.sh"

PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: numpy is missing (python3-numpy)"; exit 77; }
export PYTHONPATH PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
PYTHONPATH="$(cd "$(dirname "$0")/../../python" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
NVTPY="$PYTHONPATH/nvtape.py"
[ -f "$NVTPY" ] || NVTPY="$(cd "$(dirname "$0")/../../python" && pwd)/nvtape.py"

# same FILE... [-- INFO-OPTIONS...]: the Python reader's header and drop events equal
# `nvtape info --json`'s (members of a stripe: several FILEs; Recording's keyword arguments
# in $KW, e.g. KW="member_offset=1048576")
same() {
	local files=() opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$1"); shift; done
	[ $# -gt 0 ] && shift && opts=("$@")
	"$NVT" info --json "${opts[@]+"${opts[@]}"}" "${files[@]}" >"$T/info.json" ||
		fail "nvtape info ${files[*]}"
	"$PY" - "$T/info.json" "${files[@]}" <<'PY' || fail "Python reader differs from info --json for ${files[*]}"
import json, os, sys
import nvtape
j = json.load(open(sys.argv[1]))
files = sys.argv[2:]
r = nvtape.Recording(files if len(files) > 1 else files[0], **eval("dict(%s)" % os.environ.get("KW", "")))
bad = {k: (r.header.get(k), v) for k, v in j["header"].items() if r.header.get(k) != v}
assert not bad, "fields differ (python, info): %s" % bad
assert set(r.header) == set(j["header"]), set(r.header) ^ set(j["header"])
ev = [dict(e._asdict()) for e in r.drop_events()]
assert ev == j["drop_events"], (ev[:3], j["drop_events"][:3])
assert r.valid_bytes == j["header"]["valid_bytes"] and r.complete == j["header"]["complete"]
PY
}

# a complete test-pattern recording
f="$T/tpg.nvt"
expect_rc 0 "$NVT" record -q --size 24M --chunk 1M "$f"
same "$f"
"$PY" - "$f" <<'PY' || fail "data memmap of a test-pattern recording"
import sys
import numpy as np
import nvtape
r = nvtape.Recording(sys.argv[1])
d = r.data()
assert isinstance(d, np.memmap) and d.dtype == np.uint8 and len(d) == r.valid_bytes == 24 << 20
raw = open(sys.argv[1], "rb").read()
assert d.tobytes() == raw[4096:4096 + r.valid_bytes]
b = r.data(dtype="<u8").reshape(-1, 2)
assert (b[:, 1] == ~b[:, 0]).all() and b[0, 0] == r.first_seq
assert (np.diff(b[:, 0].astype(np.int64)) == 1).all()
assert r.read(1000, 5000) == raw[4096 + 1000:4096 + 6000]
try:
    r.read(r.valid_bytes - 10, 11)
    raise SystemExit("read past valid_bytes accepted")
except ValueError:
    pass
PY
expect_rc 0 "$PY" "$NVTPY" check "$f"
grep -q "RESULT pass exit=0" "$T/out" || fail "check output"
expect_rc 0 "$PY" -m nvtape info "$f"
grep -q "complete; 25165824 valid data bytes" "$T/out" || fail "info summary"
ok "test pattern: header == info --json, memmap == the file's data bytes, beats check clean"

# a stdin recording: the bytes that went in
head -c 10000001 /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --chunk 1M --chunks 4 '$T/s.nvt' <'$T/in.bin'"
same "$T/s.nvt"
"$PY" - "$T/s.nvt" "$T/in.bin" <<'PY' || fail "stdin recording bytes"
import sys
import nvtape
r = nvtape.Recording(sys.argv[1])
want = open(sys.argv[2], "rb").read()
assert r.data().tobytes() == want and r.read() == want
assert r.header["source"] == "stdin" and r.beat_bytes == 1
PY
expect_rc 0 "$PY" "$NVTPY" check "$T/s.nvt"
grep -q "chunk CRC32C: [0-9]* chunks checked, 0 bad" "$T/out" || fail "check of a byte stream"
ok "stdin: 10000001 bytes read back equal the input; check exit 0"

# an fdrec file
expect_rc 0 "$NVT" record -q --format fdrec --size 8M "$T/f.rec"
same "$T/f.rec"
"$PY" - "$T/f.rec" <<'PY' || fail "fdrec"
import sys
import nvtape
r = nvtape.Recording(sys.argv[1])
assert r.format == "fdrec" and r.complete and r.valid_bytes == 8 << 20
assert r.data().tobytes() == open(sys.argv[1], "rb").read()[4096:]
PY
expect_rc 0 "$PY" "$NVTPY" check "$T/f.rec"
ok "fdrec: header == info --json, data read, check exit 0"

# a stripe of two files: read() == play --sink stdout; data() points at read()
m0="$T/m0.nvt" m1="$T/m1.nvt"
expect_rc 0 "$NVT" record -q --stripe 64K --member-offset 1M --size 20M "$m0" "$m1"
KW="member_offset=1048576" same "$m0" "$m1" -- --stripe 64K --member-offset 1M
"$NVT" play -q --sink stdout --stripe 64K --member-offset 1M "$m0" "$m1" >"$T/play.bin" ||
	fail "play --sink stdout of the stripe"
"$PY" - "$T/play.bin" "$m0" "$m1" <<'PY' || fail "stripe read"
import sys
import nvtape
want = open(sys.argv[1], "rb").read()
r = nvtape.Recording(sys.argv[2:], member_offset=1 << 20)
assert r.valid_bytes == len(want) == 20 << 20 and r.stripe == 65536 and r.member_offset == 1 << 20
assert r.read(0, r.valid_bytes) == want
assert r.read(65536 - 100, 200000) == want[65536 - 100:65536 - 100 + 200000]
try:
    r.data()
    raise SystemExit("data() of a stripe accepted")
except ValueError as e:
    assert "read(offset, length)" in str(e), e
try:
    nvtape.Recording(sys.argv[2:], stripe=128 << 10, member_offset=1 << 20)
    raise SystemExit("a wrong stripe accepted")
except ValueError as e:
    assert "striped over 2 members with 64 KiB chunks, 1048576 bytes into each" in str(e), e
try:
    nvtape.Recording(sys.argv[2], member_offset=1 << 20)
    raise SystemExit("one member alone accepted")
except ValueError as e:
    assert "give all the members" in str(e), e
PY
expect_rc 1 "$PY" "$NVTPY" check "$m0" "$m1"
grep -q "bad magic" "$T/err" || fail "check of members without their offset"
expect_rc 0 "$PY" "$NVTPY" check --member-offset 1M "$m0" "$m1"
grep -q "beats 1310720, gaps 0" "$T/out" || fail "check of the stripe"
ok "stripe of 2 (64K, 1M into each): read() == play --sink stdout, data() refused, check exit 0"

# interrupted (kill -9): valid_bytes == durable_bytes
k="$T/k.nvt"
"$NVT" record -q --rate 50MB --size 2G "$k" >/dev/null 2>&1 &
pid=$!
wait_header "$k" 3
kill -9 $pid
wait $pid 2>/dev/null
same "$k"
"$PY" - "$k" <<'PY' || fail "interrupted recording"
import os, sys
import nvtape
r = nvtape.Recording(sys.argv[1])
assert not r.complete and r.valid_bytes == r.durable_bytes > 0, r.header
assert len(r.data()) == r.durable_bytes < os.path.getsize(sys.argv[1]) - 4096
PY
expect_rc 2 "$PY" "$NVTPY" check "$k"
grep -q "PROBLEM: recording not finalized" "$T/out" || fail "check of an interrupted recording"
grep -q "gaps 0 (0 beats), corrupt 0, backward 0" "$T/out" || fail "checkpointed beats"
ok "kill -9: valid_bytes == durable_bytes ($(hdr durable_bytes "$k")), check exit 2 (not finalized)"

# damaged headers: one copy (torn) still opens, both copies refused, a header claiming more
# data than the file holds refused; ValueError with a clear message each time
"$PY" - "$f" "$T" <<'PY' || fail "damaged headers"
import shutil, struct, sys
import nvtape
src, t = sys.argv[1], sys.argv[2]
def copy(name, patches):
    p = "%s/%s" % (t, name)
    shutil.copyfile(src, p)
    with open(p, "r+b") as fh:
        for off, b in patches:
            fh.seek(off)
            fh.write(b)
    return p
def refused(p, words):
    try:
        nvtape.Recording(p)
    except ValueError as e:
        assert words in str(e), (p, str(e))
        return str(e)
    raise SystemExit("%s opened" % p)
gen = nvtape.Recording(src).generation
newer = (gen % 2) * 2048
blk = open(src, "rb").read(4096)
flip = lambda off: (off, bytes([blk[off] ^ 0x40]))
r = nvtape.Recording(copy("torn.nvt", [flip(newer + 100)]))
assert r.header_torn and r.generation == gen - 1, r.header  # one generation older
r = nvtape.Recording(copy("torn-old.nvt", [flip(2048 - newer + 100)]))
assert r.header_torn and r.generation == gen
print(refused(copy("both.nvt", [flip(100), flip(2148)]), "both copies of the header are damaged"))
# a header (valid CRCs) claiming twice the data: both slots rewritten consistently
def claim(data_bytes, flags=None):
    out = bytearray(blk)
    for s in (0, 2048):
        struct.pack_into("<Q", out, s + 72, data_bytes)
        struct.pack_into("<Q", out, s + 80, data_bytes)
        if data_bytes != 24 << 20:  # the index (chunk checksums) after the real data: none
            struct.pack_into("<QQI", out, s + 112, 0, 0, 0)
        if flags is not None:
            struct.pack_into("<I", out, s + 20, flags)
        struct.pack_into("<I", out, s + 2044, nvtape.crc32c(bytes(out[s:s + 2044])))
    return bytes(out)
print(refused(copy("long.nvt", [(0, claim(48 << 20))]), "truncated or copied incompletely"))
print(refused(copy("long-inc.nvt", [(0, claim(48 << 20, 0))]), "beyond the end of the file"))
print(refused(copy("huge.nvt", [(0, claim((1 << 64) - 4096))]), "overflow"))
r = nvtape.Recording(copy("ok.nvt", [(0, claim(24 << 20))]))  # the rewrite itself is sound
assert r.valid_bytes == 24 << 20
PY
expect_rc 1 "$PY" "$NVTPY" check "$T/both.nvt"
grep -q "both copies of the header are damaged" "$T/err" || fail "check message, both copies"
expect_rc 0 "$PY" "$NVTPY" check "$T/torn-old.nvt"
expect_rc 0 "$PY" -m nvtape info "$T/torn.nvt"
grep -q "one header copy is damaged" "$T/out" || fail "info of a torn header"
expect_rc 1 "$PY" "$NVTPY" check "$T/long.nvt"
ok "torn copy opens (header_torn), both copies or a header claiming too much: ValueError, exit 1"

# a version 1 header (one copy, CRC at 4092) and an index written here (one drop event after
# the last beat): the C reader and the Python reader must agree on both
"$PY" - "$f" "$T" <<'PY' || fail "writing a version 1 header and an index"
import struct, sys
import nvtape
src, t = sys.argv[1], sys.argv[2]
raw = open(src, "rb").read()
gen = nvtape.Recording(src).generation
slot = raw[(gen % 2) * 2048:(gen % 2) * 2048 + 2048]
v1 = bytearray(4096)
v1[:1560] = slot[:1560]
struct.pack_into("<I", v1, 8, 1)
struct.pack_into("<I", v1, 4092, nvtape.crc32c(bytes(v1[:4092])))
open(t + "/v1.nvt", "wb").write(bytes(v1) + raw[4096:])
data_bytes = 24 << 20  # the recording's own index (its chunk checksums) is replaced
idx = b"NVTINDEX" + struct.pack("<II", 1, 1) + struct.pack("<IIQ", 1, 24, 24) + \
    struct.pack("<3Q", data_bytes, 777, 123456789)
blk = bytearray(raw[:4096])
for s in (0, 2048):
    struct.pack_into("<QQ", blk, s + 88, 777, 1)                      # drop_count, drop_events
    struct.pack_into("<QQI", blk, s + 112, 4096 + data_bytes, len(idx), nvtape.crc32c(idx))
    struct.pack_into("<I", blk, s + 2044, nvtape.crc32c(bytes(blk[s:s + 2044])))
open(t + "/idx.nvt", "wb").write(bytes(blk) + raw[4096:4096 + data_bytes] + idx)
bad = bytearray(idx)
bad[-1] ^= 1
open(t + "/badidx.nvt", "wb").write(bytes(blk) + raw[4096:4096 + data_bytes] + bytes(bad))
PY
same "$T/v1.nvt"
[ "$(hdr version "$T/v1.nvt")" = 1 ] || fail "version 1 header"
expect_rc 0 "$PY" "$NVTPY" check "$T/v1.nvt"
same "$T/idx.nvt"
"$PY" - "$T/idx.nvt" "$T/badidx.nvt" <<'PY' || fail "drop index"
import sys
import nvtape
r = nvtape.Recording(sys.argv[1])
assert r.drop_events() == [nvtape.DropEvent(24 << 20, 777, 123456789)], r.drop_events()
try:
    nvtape.Recording(sys.argv[2]).drop_events()
    raise SystemExit("a damaged index accepted")
except ValueError as e:
    assert "index CRC mismatch" in str(e), e
PY
expect_rc 2 "$PY" "$NVTPY" check "$T/idx.nvt"
grep -q "PROBLEM: 777 beats missing in 1 events" "$T/out" || fail "check of drops after the end"
grep -q "do not match" "$T/out" && fail "777 beats after the end must match the drop count"
expect_rc 1 "$PY" "$NVTPY" check "$T/badidx.nvt"
grep -q "index CRC mismatch" "$T/err" || fail "check of a damaged index"
ok "version 1 header and a drop index: same as info --json; a damaged index CRC refused (exit 1)"

# chunk checksums: the Python reader reads the same spans verify checks, finds none bad in a
# clean stdin recording (the last chunk shorter, not a whole number of 4 KiB blocks) and exactly
# the chunk holding a flipped bit; check exits 2 with the chunk named
head -c 3500007 /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "'$NVT' record -q --force --source stdin --chunk 1M '$T/s.nvt' <'$T/in.bin'"
"$PY" - "$T/s.nvt" <<'PY' || fail "chunk checksums of a clean recording"
import sys
import nvtape
r = nvtape.Recording(sys.argv[1])
c = r.chunk_crcs()
assert [(x.data_offset, x.length) for x in c] == [(0, 1 << 20), (1 << 20, 1 << 20), (2 << 20, 1 << 20), (3 << 20, 3500007 - (3 << 20))], c
assert all(x.chunks == 1 for x in c) and r.verify_checksums() == []
assert c[3].crc32c == nvtape.crc32c(r.read(3 << 20))
PY
expect_rc 0 "$PY" "$NVTPY" check "$T/s.nvt"
"$PY" -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(4096 + 2500000); b = f.read(1)
f.seek(4096 + 2500000); f.write(bytes([b[0] ^ 1]))' "$T/s.nvt"
"$PY" - "$T/s.nvt" <<'PY' || fail "a flipped byte"
import sys
import nvtape
bad = nvtape.Recording(sys.argv[1]).verify_checksums()
assert len(bad) == 1 and bad[0][0].data_offset == 2 << 20 and bad[0][1] != bad[0][0].crc32c, bad
PY
expect_rc 2 "$PY" "$NVTPY" check "$T/s.nvt"
grep -q "^BAD CHUNK at data offset 2097152, 1048576 bytes" "$T/out" || fail "check names the bad chunk"
expect_rc 2 "$NVT" verify "$T/s.nvt"
grep -q "^BAD CHUNK at data offset 2097152 " "$T/out" || fail "verify disagrees"
ok "chunk checksums: the spans verify checks; a clean recording passes, a flipped byte's chunk found (check exit 2, as verify)"

# metadata and chunk times: meta() equals nvtape meta's, data() takes its dtype from
# core:datatype (complex int16 as (re, im) records), chunk_times() rise with the data
head -c 4000000 /dev/urandom >"$T/iq.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --chunk 1M --datatype ci16_le --sample-rate 1e6 --meta site=lab '$T/iq.nvt' <'$T/iq.bin'"
"$PY" - "$T/iq.nvt" "$T/iq.bin" <<'PY' || fail "metadata, dtype and chunk times"
import sys, time
import numpy as np
import nvtape
r = nvtape.Recording(sys.argv[1])
assert r.meta() == {"core:datatype": "ci16_le", "core:sample_rate": "1000000", "site": "lab"}, r.meta()
d = r.data()
want = np.frombuffer(open(sys.argv[2], "rb").read(), dtype=[("re", "<i2"), ("im", "<i2")])
assert d.dtype == want.dtype and (d == want).all() and len(d) == 1000000
t = r.chunk_times()
assert [o for o, _ in t] == [0, 1 << 20, 2 << 20, 3 << 20], t
assert all(a[1] <= b[1] for a, b in zip(t, t[1:])) and abs(t[0][1] / 1e9 - time.time()) < 600, t
assert nvtape.sigmf_dtype("cf32_le") == np.complex64 and nvtape.sigmf_dtype("ci16") is None
PY
ok "metadata, a memmap in the dtype core:datatype names (ci16_le), chunk times at every chunk"

# the three ways to compute CRC32C (the crc32c module, numpy, pure Python) give the same
# checksums and find the same bad chunk; check reads the data once and gives the same report
# with each; the beat check gives the same result fed in pieces of any size as a beat-by-beat
# reference, for data with gaps, corrupt beats and backward jumps
engines=$("$PY" -c 'import nvtape; print(" ".join(nvtape.crc_engines()))')
case " $engines " in *" crc32c "*) ;; *) echo "note: no crc32c module (python3-crc32c): its path is not compared" ;; esac
"$PY" - "$T/s.nvt" <<'PY' || fail "CRC32C engines disagree"
import os, sys
import nvtape
r = nvtape.Recording(sys.argv[1])
engines = nvtape.crc_engines()
assert engines[-2:] == ["numpy", "python"], engines
res = {e: r.verify_checksums(engine=e) for e in engines}
assert all(v == res["python"] for v in res.values()), res
assert len(res["python"]) == 1 and res["python"][0][0].data_offset == 2 << 20, res
seen = []
r.verify_checksums(engine="python", batch=1 << 20, on_data=lambda o, b: seen.append((o, bytes(b))))
assert [o for o, _ in seen] == [0, 1 << 20, 2 << 20, 3 << 20]
assert b"".join(b for _, b in seen) == r.read(), "on_data pieces"
data = os.urandom(100003)
want = nvtape._crc32c_py(data)
assert nvtape.crc32c(data) == want and nvtape.crc32c(data[7:], nvtape.crc32c(data[:7])) == want
if "crc32c" in engines:
    import crc32c
    assert crc32c.crc32c(data[7:], crc32c.crc32c(data[:7])) == want
try:
    r.verify_checksums(engine="sse")
    raise SystemExit("an unknown engine accepted")
except RuntimeError as e:
    assert "not available" in str(e), e
PY
for e in $engines; do
	expect_rc 2 "$PY" "$NVTPY" check --crc "$e" "$T/s.nvt"
	grep -q "^chunk CRC32C: 4 chunks checked, 1 bad (computed with $e)$" "$T/out" || fail "check --crc $e"
	sed "s/ (computed with $e)//" "$T/out" >"$T/check-$e.out"
done
for e in $engines; do
	cmp -s "$T/check-$e.out" "$T/check-python.out" ||
		fail "check --crc $e and --crc python differ: $(diff "$T/check-$e.out" "$T/check-python.out")"
done
expect_rc 64 "$PY" "$NVTPY" check --crc sse "$T/s.nvt"
"$PY" - "$f" <<'PY' || fail "the beat check fed in pieces"
import random, struct, sys
import numpy as np
import nvtape
src = nvtape.Recording(sys.argv[1])
beats = np.frombuffer(src.read(0, 1 << 20), dtype="<u8").reshape(-1, 2).copy()
first = int(beats[0, 0])
keep = np.ones(len(beats), dtype=bool)
keep[[0, 1, 500, 501, 502, 20000, 65535]] = False  # gaps, one at the very start
b = beats[keep].copy()
b[100, 1] ^= np.uint64(4)         # a corrupt beat
b[30000, 0] = b[29999, 0]        # a repeated sequence number (backward), its ~seq kept right
b[30000, 1] = ~b[30000, 0]
b[40000:40002] = b[39990:39992]  # a jump back
data = b.tobytes() + b"\x01\x02\x03"  # and a tail that is not a whole beat

def reference(data, first_seq):
    prev, r = (first_seq - 1) % (1 << 64), {"beats": 0, "gaps": [], "corrupt": 0, "backward": 0, "first_seen": None}
    for off in range(0, len(data) - len(data) % 16, 16):
        lo, hi = struct.unpack_from("<QQ", data, off)
        r["beats"] += 1
        if hi != lo ^ 0xFFFFFFFFFFFFFFFF:
            r["corrupt"] += 1
            continue
        if r["first_seen"] is None:
            r["first_seen"] = lo
        d = (lo - prev) % (1 << 64)
        if d == 0 or d >= 1 << 63:
            r["backward"] += 1
        elif d > 1:
            r["gaps"].append((off, d - 1))
        prev = lo
    r["tail"] = len(data) % 16
    return r

want = reference(data, first)
assert want["corrupt"] == 1 and want["backward"] == 2 and len(want["gaps"]) >= 4, want
rng = random.Random(7)
for sizes in ([len(data)], [16] * 3 + [len(data)], [1, 15, 17, 4095, 262145, 1 << 20],
              [rng.randrange(1, 70000) for _ in range(200)]):
    c, at = nvtape._BeatCheck(first), 0
    for n in sizes:
        c.feed(data[at:at + n])
        at += n
    c.feed(data[at:])
    got = c.result()
    assert got == want, (sizes[:5], {k: (got[k], want[k]) for k in want if got[k] != want[k]})
PY
ok "CRC32C with $engines: the same checksums, the same bad chunk, the same check report; the beat check fed in any pieces == a beat-by-beat reference"

# progress: on stderr when it is a terminal, nothing when it is not
expect_rc 0 "$PY" "$NVTPY" check "$f"
[ -s "$T/err" ] && fail "check wrote to a stderr that is not a terminal: $(cat "$T/err")"
if command -v script >/dev/null; then
	script -qec "'$PY' '$NVTPY' check '$f' >'$T/tty.out'" /dev/null >"$T/tty.err" </dev/null ||
		fail "check on a terminal"
	grep -q "checking $f: 24 of 24 MiB (100 %), [0-9]* MB/s" "$T/tty.err" ||
		fail "no progress on a terminal: $(cat -v "$T/tty.err")"
	grep -q "RESULT pass exit=0" "$T/tty.out" || fail "check on a terminal: $(cat "$T/tty.out")"
	ok "check shows its progress on a terminal's stderr, and nothing elsewhere"
else
	echo "skipped: no script(1) to give check a terminal"
fi

expect_rc 64 "$PY" "$NVTPY"
expect_rc 64 "$PY" "$NVTPY" check
expect_rc 64 "$PY" "$NVTPY" verify "$f"
expect_rc 64 "$PY" "$NVTPY" check --bogus "$f"
expect_rc 1 "$PY" "$NVTPY" check "$T/no-such-file.nvt"
ok "usage errors exit 64, a missing file 1"

# drops: needs root and a throttled loop device (the cgroup v1 blkio controller)
if [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/blkio ]; then
	make_loop 512M xfs
	d="$MNT/d.nvt"
	expect_rc 2 throttled 52428800 "$DEV" "$NVT" record -q --rate 150MB --duration 2 --chunk 1M --chunks 8 "$d"
	[ "$(field drops)" -gt 0 ] || fail "no drops recorded"
	same "$d"
	"$PY" - "$d" <<'PY' || fail "drop events"
import sys
import nvtape
r = nvtape.Recording(sys.argv[1])
ev = r.drop_events()
assert len(ev) == r.header["drop_events"] > 0 and sum(e.beats for e in ev) == r.drop_count
PY
	expect_rc 2 "$PY" "$NVTPY" check "$d"
	grep -q "PROBLEM: [0-9]* [a-z]* missing in" "$T/out" || fail "check of a recording with drops"
	grep -q "do not match" "$T/out" && fail "gaps do not match the drop index"
	ok "drops: drop_events() == info --json's, gaps match the index, check exit 2"
else
	echo "skipped: the recording with drops needs root and the cgroup v1 blkio controller"
fi
# a recording being written is told from one whose writer died, as nvtape info does: the writer's
# lock; a slow stream's checkpoints cover a part of a chunk (its own checksum)
lv="$T/live.nvt"
"$NVT" record -q --rate 20KB "$lv" >/dev/null 2>&1 &
lp=$!
wait_header "$lv" 3
expect_rc 0 "$PY" "$NVTPY" check "$lv"
grep -q "LIVE: being written by PID $lp" "$T/out" || { kill $lp; fail "check of a live recording: $(cat "$T/out")"; }
expect_rc 0 "$PY" -m nvtape info "$lv"
grep -q "LIVE: being written by PID $lp" "$T/out" || { kill $lp; fail "info of a live recording"; }
kill -9 $lp
wait $lp 2>/dev/null
expect_rc 2 "$PY" "$NVTPY" check "$lv"
grep -q "the writer died" "$T/out" && grep -q "chunk CRC32C: 1 chunks checked, 0 bad" "$T/out" ||
	fail "check of a dead writer's recording: $(cat "$T/out")"
ok "a live recording told from a dead one (the writer's lock); a part-chunk checkpoint's checksum checked"
echo "pyreader: all passed"
