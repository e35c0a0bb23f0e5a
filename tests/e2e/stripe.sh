#!/bin/bash
# SPDX-License-Identifier: MIT
# Striping over several members in the md RAID0 layout: record, verify, play, info, recover;
# the members reassembled with md's arithmetic give the same recording; an md data offset;
# drops on two throttled drives are counted and indexed like on one.
. "$(dirname "$0")/lib.sh"

reassemble() { # reassemble OUT STRIPE OFFSET MEMBER... : the logical image md would present
	python3 - "$@" <<'PY'
import sys
out, stripe, off, members = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
data = [open(m, "rb").read()[off:] for m in members]
rows = max(len(d) for d in data) // stripe + 1
with open(out, "wb") as f:
    for r in range(rows):
        for d in data:
            f.write(d[r * stripe:(r + 1) * stripe])
PY
}

m0="$T/m0.dat" m1="$T/m1.dat" m2="$T/m2.dat"
expect_rc 0 "$NVT" record -q --rate 200MB --duration 1.5 "$m0" "$m1" "$m2"
bytes=$(field bytes)
expect_rc 0 "$NVT" verify --stripe 512K "$m0" "$m1" "$m2"
[ "$(field bytes)" = "$bytes" ] && [ "$(field result)" = pass ] || fail "verify striped"
expect_rc 0 "$NVT" play --rate 400MB "$m0" "$m1" "$m2"
[ "$(field beats)" = $((bytes / 16)) ] || fail "play striped"
ok "3 members, 512 KiB stripes: record, verify, play ($bytes bytes)"

# md's view: chunk k on member k % 3 at (k / 3) * chunk
reassemble "$T/img" 524288 0 "$m0" "$m1" "$m2"
truncate -s "$(rec_end --stripe 512K "$m0" "$m1" "$m2")" "$T/img"
expect_rc 0 "$NVT" verify "$T/img"
[ "$(field bytes)" = "$bytes" ] || fail "reassembled image"
ok "the members reassembled in the md RAID0 layout are the same recording, byte for byte"

# member offset (mdadm's data offset) and another chunk size
expect_rc 0 "$NVT" record -q --force --stripe 64K --member-offset 1M --size 40M "$m0" "$m1"
expect_rc 0 "$NVT" verify --stripe 64K --member-offset 1M "$m0" "$m1"
[ "$(field bytes)" = 41943040 ] || fail "member offset"
head -c 4 "$m0" | cmp -s - <(printf '\0\0\0\0') || fail "the first MiB of a member must stay untouched"
reassemble "$T/img2" 65536 1048576 "$m0" "$m1"
truncate -s "$(rec_end --stripe 64K --member-offset 1M "$m0" "$m1")" "$T/img2"
expect_rc 0 "$NVT" verify "$T/img2"
expect_rc 1 "$NVT" verify --stripe 128K --member-offset 1M "$m0" "$m1"
grep -q "striped over 2 members with 64 KiB chunks, 1048576 bytes into each: give all 2 members with --stripe 64K --member-offset 1048576" "$T/err" || fail "geometry message"
expect_rc 1 "$NVT" verify --member-offset 1M "$m0"
grep -q "give all 2 members" "$T/err" || fail "one member alone"
ok "--stripe 64K --member-offset 1M: data starts 1 MiB into each member; a wrong geometry is refused"

# kill -9 on a stripe: recover per member
"$NVT" record -q --force --rate 100MB --size 2G "$m0" "$m1" >/dev/null 2>&1 &
pid=$!
sleep 2.3
kill -9 $pid
wait $pid 2>/dev/null
expect_rc 2 "$NVT" verify "$m0" "$m1"
expect_rc 0 "$NVT" recover "$m0" "$m1"
expect_rc 0 "$NVT" verify "$m0" "$m1"
ok "kill -9 on a stripe: recover trims every member, verify PASS ($(field bytes) bytes)"

expect_rc 0 "$NVT" info --json "$m0" "$m1"
grep -q '"complete":true' "$T/out" || fail "info on a stripe"

if [ "$(id -u)" = 0 ]; then
	make_loop 1G xfs
	d0=$DEV a=$MNT
	make_loop 1G xfs
	d1=$DEV b=$MNT
	make_cgroup 41943040 "$d0"
	set_limit "$CG" 41943040 "$d1"
	expect_rc 2 in_cgroup "$CG" "$NVT" record -q --rate 200MB --duration 2 --chunk 1M --chunks 8 "$a/s.dat" "$b/s.dat"
	drops=$(field drops)
	expect_rc 2 "$NVT" verify "$a/s.dat" "$b/s.dat"
	[ "$(field drops_match)" = 1 ] && [ "$(field gap_beats)" -gt 0 ] || fail "drops on a stripe"
	ok "two throttled drives: $drops drops, gap beats == drop count at the indexed positions"
fi
# the same file twice, by name or through a link: refused before anything is written
: >"$T/same.nvt"
ln -s "$T/same.nvt" "$T/link.nvt"
expect_rc 64 "$NVT" record --size 8M "$T/same.nvt" "$T/same.nvt"
grep -q "same file" "$T/err" || fail "same member twice: $(cat "$T/err")"
expect_rc 64 "$NVT" record --size 8M "$T/same.nvt" "$T/link.nvt"
grep -q "same file" "$T/err" || fail "a member and a link to it: $(cat "$T/err")"
expect_rc 64 "$NVT" record --size 8M "$T/new1.nvt" "$T/new1.nvt"
grep -q "given twice" "$T/err" || fail "a new file given twice: $(cat "$T/err")"
[ ! -s "$T/same.nvt" ] && [ ! -e "$T/new1.nvt" ] || fail "a refused stripe wrote something"
ok "the same file twice (by name or through a link) as two members: usage error, nothing written"
echo "stripe: all passed"
