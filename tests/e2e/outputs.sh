#!/bin/bash
# SPDX-License-Identifier: MIT
# Nothing a user types destroys a recording: record refuses a file that holds anything unless
# --force (saying what it holds), never writes through a symlink, and export never writes over
# its input or another recording, writes under a temporary name renamed once whole, and leaves
# nothing behind when interrupted. Export reads metadata defensively: numbers out of range are
# refused with a message, invalid UTF-8 still gives valid JSON; SigMF's rate and datatype agree.
. "$(dirname "$0")/lib.sh"

sum() { sha256sum "$1" | cut -d' ' -f1; }
no_parts() { # no temporary export file left in DIR
	! compgen -G "$1/*.part-*" >/dev/null || fail "a temporary file was left: $(ls "$1")"
}
# craft FILE OLD NEW: replace the bytes OLD by NEW (same length) inside the index of a complete
# recording, with the index CRC and every valid header copy's CRC made to match again: a META
# record no nvtape command would write
craft() {
	python3 - "$@" <<'PY'
import os, struct, sys
path, old, new = sys.argv[1], os.fsencode(sys.argv[2]), os.fsencode(sys.argv[3])
assert len(old) == len(new)
def crc32c(b):
    crc = 0xFFFFFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF
f = bytearray(open(path, "rb").read())
off, n = struct.unpack_from("<QQ", f, 112)
ix = f[off:off + n]
assert ix.count(old) == 1, "the text to replace is not in the index once"
ix = ix.replace(old, new)
f[off:off + n] = ix
for s in (0, 2048):
    slot = f[s:s + 2048]
    if slot[:8] == b"NVTAPE\0\0" and crc32c(slot[:2044]) == struct.unpack_from("<I", slot, 2044)[0]:
        struct.pack_into("<I", f, s + 128, crc32c(ix))
        struct.pack_into("<I", f, s + 2044, crc32c(f[s:s + 2044]))
open(path, "wb").write(f)
PY
}

# ---- record: an existing file is kept unless --force
expect_rc 0 "$NVT" record -q --size 8M "$T/keep.nvt"
before=$(sum "$T/keep.nvt")
expect_rc 1 "$NVT" record -q --size 16M "$T/keep.nvt"
grep -q "keep.nvt holds a complete nvtape recording (8388608 data bytes, started 2[0-9-]* [0-9:]* UTC)" "$T/err" &&
	grep -q -- "--force" "$T/err" || fail "record over a recording: $(cat "$T/err")"
[ "$(sum "$T/keep.nvt")" = "$before" ] || fail "the recording was changed"
printf 'my notes\n' >"$T/notes.txt"
expect_rc 1 "$NVT" record -q --size 16M "$T/notes.txt"
grep -q "notes.txt holds a file of 9 bytes" "$T/err" || fail "record over a text file: $(cat "$T/err")"
[ "$(cat "$T/notes.txt")" = "my notes" ] || fail "the text file was changed"
expect_rc 0 "$NVT" record -q --force --size 4M "$T/keep.nvt"
[ "$(field bytes)" = 4194304 ] || fail "--force did not record"
: >"$T/empty.nvt"
expect_rc 0 "$NVT" record -q --size 4M "$T/empty.nvt"
ok "record: a recording or a text file refused (exit 1, what it holds named, --force named, unchanged); --force overwrites, an empty file is used"

# an interrupted recording and an fdrec one are named as such
"$NVT" record -q --rate 50MB --size 1G "$T/cut.nvt" >/dev/null 2>&1 &
pid=$!
wait_header "$T/cut.nvt" 2
kill -9 $pid
wait $pid 2>/dev/null
# the dead writer's io_uring lets go of the file (and its lock) a moment after the process ends
for i in $(seq 100); do flock -n -s "$T/cut.nvt" true && break; sleep 0.1; done
expect_rc 1 "$NVT" record -q --size 4M "$T/cut.nvt"
grep -q "holds an interrupted nvtape recording ([0-9]* data bytes at its last checkpoint" "$T/err" ||
	fail "record over an interrupted recording: $(cat "$T/err")"
expect_rc 0 "$NVT" record -q --format fdrec --size 4M "$T/fd.bin"
expect_rc 1 "$NVT" record -q --size 4M "$T/fd.bin"
grep -q "holds a complete FPGA Drive Recorder (fdrec) recording" "$T/err" || fail "record over fdrec: $(cat "$T/err")"
ok "record: an interrupted nvtape recording and an fdrec recording are named in the refusal"

# stripe members: one that holds data refuses the whole stripe, nothing written
expect_rc 0 "$NVT" record -q --size 8M "$T/s0" "$T/s1"
s0=$(sum "$T/s0") s1=$(sum "$T/s1")
: >"$T/n0"
expect_rc 1 "$NVT" record -q --size 8M "$T/n0" "$T/s1"
grep -q "s1 holds a file of" "$T/err" || fail "stripe member: $(cat "$T/err")"
[ "$(sum "$T/s1")" = "$s1" ] && [ ! -s "$T/n0" ] || fail "a refused stripe wrote something"
expect_rc 1 "$NVT" record -q --size 8M "$T/s0" "$T/s1"
[ "$(sum "$T/s0")" = "$s0" ] || fail "member 0 was changed"
expect_rc 0 "$NVT" record -q --force --size 8M "$T/s0" "$T/s1"
ok "record: a stripe with a member that holds data is refused whole; --force records over it"

# ---- record: never through a symlink (one planted at the output path)
printf 'secret\n' >"$T/victim"
chmod 600 "$T/victim"
ln -s "$T/victim" "$T/planted.nvt"
for f in "" --force; do
	expect_rc 1 "$NVT" record -q $f --size 4M "$T/planted.nvt"
	grep -q "planted.nvt is a symbolic link to $T/victim" "$T/err" || fail "symlink $f: $(cat "$T/err")"
	[ "$(cat "$T/victim")" = secret ] && [ -L "$T/planted.nvt" ] || fail "written through a symlink ($f)"
done
ln -s "$T/nothing-here" "$T/dangling.nvt"
expect_rc 1 "$NVT" record -q --size 4M "$T/dangling.nvt"
grep -q "is a symbolic link" "$T/err" && [ ! -e "$T/nothing-here" ] || fail "a dangling symlink was followed"
ok "record: a symlink at the output (to a 0600 file, or dangling) is refused even with --force, its target untouched"

# ---- export: never over its input or another recording
expect_rc 0 "$NVT" record -q --size 32M "$T/self.nvt"
self=$(sum "$T/self.nvt")
ln "$T/self.nvt" "$T/hard.nvt"
ln -s "$T/self.nvt" "$T/sym.nvt"
for o in self.nvt hard.nvt sym.nvt; do
	expect_rc 1 "$NVT" export --length 16M -o "$T/$o" "$T/self.nvt"
	grep -q "is the recording being exported" "$T/err" || fail "export -o $o: $(cat "$T/err")"
done
expect_rc 1 "$NVT" export --length 16M -o "$T/self.nvt" "$T/sym.nvt"
grep -q "is the recording being exported" "$T/err" || fail "export through a link: $(cat "$T/err")"
cp "$T/self.nvt" "$T/x.sigmf-data"
expect_rc 1 "$NVT" export --format sigmf -o "$T/x" "$T/x.sigmf-data"
grep -q "is the recording being exported" "$T/err" || fail "sigmf data onto its input: $(cat "$T/err")"
expect_rc 1 "$NVT" export -o "$T/s1" "$T/s0" "$T/s1"
grep -q "the same file as its member" "$T/err" || fail "export onto a stripe member: $(cat "$T/err")"
bash -c "'$NVT' export '$T/self.nvt' >>'$T/self.nvt'" 2>"$T/err"
[ $? = 1 ] && grep -q "the output is the recording being exported" "$T/err" || fail "stdout appended to the input: $(cat "$T/err")"
expect_rc 1 "$NVT" export -o "$T/keep.nvt" "$T/self.nvt"
grep -q "keep.nvt holds a complete nvtape recording" "$T/err" || fail "export over another recording: $(cat "$T/err")"
[ "$(sum "$T/self.nvt")" = "$self" ] && [ "$(sum "$T/x.sigmf-data")" = "$self" ] || fail "an input was changed"
no_parts "$T"
ok "export: the input (by name, hard link, symlink, SigMF data name, stripe member, appended stdout) and another recording refused (exit 1), nothing changed"

# an existing plain file is replaced whole; the export goes through a temporary name
printf 'old\n' >"$T/plain.bin"
expect_rc 0 "$NVT" export --length 1M -o "$T/plain.bin" "$T/self.nvt"
[ "$(stat -c %s "$T/plain.bin")" = 1048576 ] || fail "the plain file was not replaced"
cmp -s "$T/plain.bin" <(tail -c +4097 "$T/self.nvt" | head -c 1048576) || fail "export data"
no_parts "$T"
ok "export: an existing plain file is replaced once the export is whole, no temporary file left"

# ---- export: ranges
expect_rc 64 "$NVT" export --length 0 -o "$T/z.bin" "$T/self.nvt"
grep -q -- "--length 0 exports nothing" "$T/err" || fail "--length 0: $(cat "$T/err")"
expect_rc 64 "$NVT" export --from 1 --to 0.1 -o "$T/z.bin" "$T/self.nvt"
grep -q -- "--to must lie after --from" "$T/err" || fail "inverted range: $(cat "$T/err")"
expect_rc 64 "$NVT" export --offset 32M -o "$T/z.bin" "$T/self.nvt"
grep -q "holds no data" "$T/err" || fail "empty range at the end: $(cat "$T/err")"
[ ! -e "$T/z.bin" ] || fail "a refused range left a file"
# packets: 1000, 1 ms apart from @1700000000.000001
python3 "$(dirname "$0")/../net/mkpcap.py" "$T/in.pcap" 1000 1000000
expect_rc 0 "$NVT" record -q --source pcap:"$T/in.pcap" "$T/pk.nvt"
expect_rc 64 "$NVT" export --format pcap --from 1 --to 0.1 -o "$T/z.pcap" "$T/pk.nvt"
grep -q -- "--to must lie after --from" "$T/err" || fail "pcap, inverted range: $(cat "$T/err")"
expect_rc 64 "$NVT" export --format pcap --from 0.5 --to @1700000000.1 -o "$T/z.pcap" "$T/pk.nvt"
grep -q "the time range is empty" "$T/err" || fail "pcap, inverted relative/absolute range: $(cat "$T/err")"
expect_rc 64 "$NVT" export --format pcapng --from 5 -o "$T/z.pcap" "$T/pk.nvt"
grep -q "no packet lies in that range: nothing was exported (the recording's 1000 packets span 0.999 s)" "$T/err" ||
	fail "pcap, a range after the last packet: $(cat "$T/err")"
[ ! -e "$T/z.pcap" ] || fail "a refused packet range left a file"
expect_rc 0 "$NVT" export --format pcap --from 0.1 --to 0.2 -o "$T/z.pcap" "$T/pk.nvt"
[ "$(field packets)" = 100 ] || fail "pcap --from 0.1 --to 0.2: $(grep RESULT "$T/out")"
ok "export: --length 0, --from after --to (raw and pcap, relative or mixed), a range at the end or after the last packet: usage errors (64), no file"

# ---- SigMF: units agree; numbers from metadata range-checked; invalid UTF-8 escaped
sigmf() { # sigmf FILE KEY: a global value of FILE.sigmf-meta (valid JSON)
	python3 -c "import json,sys; print(json.load(open(sys.argv[1], encoding='utf-8'))['global'].get(sys.argv[2]))" "$1.sigmf-meta" "$2"
}
expect_rc 0 "$NVT" record -q --rate 160MB --size 8M "$T/p.nvt"
expect_rc 0 "$NVT" export --format sigmf -o "$T/p" "$T/p.nvt"
[ "$(sigmf "$T/p" core:datatype)" = ru8 ] && [ "$(sigmf "$T/p" core:sample_rate)" = 160000000 ] ||
	fail "test pattern: $(cat "$T/p.sigmf-meta")"
expect_rc 0 "$NVT" record -q --rate 160MB --datatype ci16_le --channels 2 --size 8M "$T/pc.nvt"
expect_rc 0 "$NVT" export --format sigmf -o "$T/pc" "$T/pc.nvt"
[ "$(sigmf "$T/pc" core:datatype)" = ci16_le ] && [ "$(sigmf "$T/pc" core:sample_rate)" = 20000000 ] &&
	[ "$(sigmf "$T/pc" core:num_channels)" = 2 ] || fail "test pattern as ci16_le x 2: $(cat "$T/pc.sigmf-meta")"
head -c 4M /dev/urandom >"$T/in.bin"
expect_rc 0 bash -c "'$NVT' record -q --source stdin --sample-rate 2e6 --datatype cf32_le '$T/st.nvt' <'$T/in.bin'"
expect_rc 0 "$NVT" export --format sigmf -o "$T/st" "$T/st.nvt"
[ "$(sigmf "$T/st" core:datatype)" = cf32_le ] && [ "$(sigmf "$T/st" core:sample_rate)" = 2000000 ] ||
	fail "stdin with a datatype: $(cat "$T/st.sigmf-meta")"
# a test-pattern recording made before the datatype was kept: its rate counted beats
expect_rc 0 "$NVT" record -q --rate 160MB --size 8M "$T/old.nvt"
craft "$T/old.nvt" "core:datatype=ru8
core:sample_rate=160000000" "nvtape:x=ru8000000
core:sample_rate=10000000"
expect_rc 0 "$NVT" export --format sigmf -o "$T/old" "$T/old.nvt"
[ "$(sigmf "$T/old" core:sample_rate)" = 160000000 ] && grep -q "counts beats" "$T/err" ||
	fail "an older test-pattern recording: $(cat "$T/old.sigmf-meta" "$T/err")"
ok "SigMF: the test pattern in bytes per second with ru8 (or in the samples of a given datatype), stdin as given, an older recording's beat rate converted"

# core:num_channels x the sample size wrapping to 0 (SIGFPE before), other numbers out of range
expect_rc 0 "$NVT" record -q --size 8M --datatype cf64_le --description 01234567890123456789 "$T/ch.nvt"
craft "$T/ch.nvt" "core:description=01234567890123456789" "core:num_channels=1152921504606846976"
expect_rc 1 "$NVT" export --format sigmf -o "$T/ch" "$T/ch.nvt"
grep -q "core:num_channels is \"1152921504606846976\", not a whole number from 1 to 65535" "$T/err" ||
	fail "num_channels: $(cat "$T/err")"
for kv in "core:sample_rate=-5" "core:sample_rate=1e999" "core:frequency=nan" "core:sample_rate=fast"; do
	expect_rc 0 "$NVT" record -q --force --size 8M --description 01234567890123456789 "$T/n.nvt"
	pad=$(printf '%*s' $((37 - ${#kv})) '') # spaces, which strtod skips
	craft "$T/n.nvt" "core:description=01234567890123456789" "${kv%%=*}=${pad}${kv#*=}"
	expect_rc 1 "$NVT" export --format sigmf -o "$T/n" "$T/n.nvt"
	grep -q "${kv%%=*} is \" *${kv#*=}\", not a" "$T/err" || fail "$kv: $(cat "$T/err")"
done
[ ! -e "$T/ch.sigmf-data" ] && [ ! -e "$T/n.sigmf-meta" ] || fail "a refused export left files"
no_parts "$T"
ok "SigMF: num_channels 2^60 with cf64_le, a negative, infinite, NaN or non-numeric rate or frequency: exit 1 with the key named, no crash, no file"

# invalid UTF-8 in a metadata value: the .sigmf-meta is still valid JSON
expect_rc 0 "$NVT" record -q --size 8M --description "caf-x-y-z" --meta antenna=dipole-abc "$T/u8.nvt"
craft "$T/u8.nvt" "caf-x-y-z" "$(printf 'caf\xe9\xff\xc0\xaf\xed\xa0')"
craft "$T/u8.nvt" "dipole-abc" "$(printf 'dip\xf4\x90\x80\x80ol\x7f')"
expect_rc 0 "$NVT" export --format sigmf -o "$T/u8" "$T/u8.nvt"
[ "$(sigmf "$T/u8" core:description)" = "$(printf 'caf\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd')" ] ||
	fail "invalid UTF-8: $(cat "$T/u8.sigmf-meta")"
python3 -c "import json,sys; m=json.load(open(sys.argv[1], encoding='utf-8'))['global']['nvtape:meta']; assert m['antenna'] == 'dip\ufffd\ufffd\ufffd\ufffdol\x7f', m" "$T/u8.sigmf-meta" ||
	fail "invalid UTF-8 in another key"
ok "SigMF: invalid UTF-8 in metadata (bad bytes, overlong, surrogate, past U+10FFFF) becomes U+FFFD: the JSON parses"

# ---- export interrupted: nothing left behind, an existing output untouched
need_root
make_loop 128M ext4
expect_rc 0 "$NVT" record -q --size 64M "$MNT/big.nvt" # O_DIRECT: nothing of it in the page cache
make_cgroup 0 "$DEV"
echo "$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ') 8388608" >"$CG/blkio.throttle.read_bps_device"
interrupt() { # interrupt SIGNAL PART-GLOB CMD...: run CMD reading at 8 MiB/s, signal it mid-way
	local sig=$1 glob=$2 i
	shift 2
	# in_cgroup inline: $! must be the process that becomes the export, not a subshell
	bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@" >"$T/out" 2>"$T/err" &
	pid=$!
	for i in $(seq 600); do compgen -G "$glob" >/dev/null && break; sleep 0.01; done
	compgen -G "$glob" >/dev/null || fail "no temporary output appeared: $(cat "$T/err")"
	sleep 0.3
	kill -"$sig" $pid
	wait $pid
	rc=$?
}
interrupt INT "$T/big.bin.part-*" "$NVT" export -o "$T/big.bin" "$MNT/big.nvt"
[ $rc = 1 ] && grep -q "interrupted by a signal after [0-9]* of 67108864 bytes: the partial export was removed" "$T/err" &&
	grep -q "result=error exit=1" "$T/out" || fail "SIGINT: exit $rc, $(cat "$T/err" "$T/out")"
[ ! -e "$T/big.bin" ] || fail "a partial export was left"
no_parts "$T"
printf 'keep\n' >"$T/big.bin"
interrupt TERM "$T/big.bin.part-*" "$NVT" export --offset 16M -o "$T/big.bin" "$MNT/big.nvt"
[ $rc = 1 ] && [ "$(cat "$T/big.bin")" = keep ] || fail "SIGTERM with an existing output: exit $rc, $(cat "$T/err")"
no_parts "$T"
interrupt INT "$T/sg.sigmf-data.part-*" "$NVT" export --format sigmf --offset 32M -o "$T/sg" "$MNT/big.nvt"
[ $rc = 1 ] && [ ! -e "$T/sg.sigmf-data" ] && [ ! -e "$T/sg.sigmf-meta" ] || fail "SigMF interrupted: exit $rc, $(ls "$T")"
no_parts "$T"
# to standard output: what was written stays, and is said to be partial
bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$NVT" export --offset 40M "$MNT/big.nvt" >"$T/so.bin" 2>"$T/err" &
pid=$!
for i in $(seq 600); do [ -s "$T/so.bin" ] && break; sleep 0.01; done
kill -INT $pid
wait $pid
rc=$?
[ $rc = 1 ] && grep -q "interrupted by a signal after [0-9]* of 25165824 bytes: the output holds only the part written so far" "$T/err" ||
	fail "SIGINT, raw to standard output: exit $rc, $(cat "$T/err")"
ok "export interrupted (SIGINT, SIGTERM; raw and SigMF): exit 1 with a message, the partial output removed, an existing one kept; to standard output the part written is said to be partial"
echo "outputs: all passed"
