#!/bin/bash
# SPDX-License-Identifier: MIT
# Raw block devices: record, verify, play and recover with no filesystem; a device that carries
# a filesystem or a recording is refused unless --force; a mounted one always.
. "$(dirname "$0")/lib.sh"
need_root

make_loop 512M none
raw=$DEV
expect_rc 0 "$NVT" record -q --rate 200MB --duration 1 "$raw"
bytes=$(field bytes)
# the device node sits on devtmpfs; the recording does not live in memory
! grep -q "tmpfs" "$T/err" || fail "a raw device taken for tmpfs: $(cat "$T/err")"
expect_rc 0 "$NVT" verify "$raw"
[ "$(field bytes)" = "$bytes" ] && [ "$(field result)" = pass ] || fail "verify on a raw device"
expect_rc 0 "$NVT" play --rate 400MB "$raw"
[ "$(field beats)" = $((bytes / 16)) ] || fail "play on a raw device"
expect_rc 0 "$NVT" info --json "$raw"
ok "record, verify, play, info on a raw device ($bytes bytes)"

expect_rc 1 "$NVT" record -q --size 16M "$raw"
grep -q "carries an nvtape recording: recording onto it would destroy it; give --force" "$T/err" || fail "recording not protected"
expect_rc 0 "$NVT" record -q --force --size 16M "$raw"
ok "a device holding a recording is refused without --force, overwritten with it"

# the writer dies: recover works on a device (no truncation possible)
"$NVT" record -q --force --rate 100MB "$raw" >/dev/null 2>&1 &
pid=$!
sleep 2.3
kill -9 $pid
wait $pid 2>/dev/null
expect_rc 0 "$NVT" recover "$raw"
expect_rc 0 "$NVT" verify -q "$raw"
ok "kill -9 on a raw device: recover + verify PASS ($(field bytes) bytes)"

# an earlier, longer recording's blocks stay on the device: they must not pass as the killed
# run's data (every run starts its pattern at a sequence of its own)
expect_rc 0 "$NVT" record -q --force --size 200M "$raw"
"$NVT" record -q --force --rate 100MB "$raw" >/dev/null 2>&1 &
pid=$!
sleep 0.6
kill -9 $pid
wait $pid 2>/dev/null
expect_rc 0 "$NVT" recover "$raw"
expect_rc 0 "$NVT" verify -q "$raw"
[ "$(field bytes)" -lt 150000000 ] || fail "recover took the earlier run's blocks for new data ($(field bytes) bytes)"
ok "killed after 0.6 s over an earlier 200 MiB recording: recover keeps only this run ($(field bytes) bytes)"

expect_rc 1 "$NVT" record -q --force --size 1G "$raw"
grep -q "holds 536870912 bytes, the recording needs" "$T/err" || fail "size check on a device"
ok "--size larger than the device is refused"

mkfs.ext4 -q -F "$raw" >/dev/null
expect_rc 1 "$NVT" record -q --size 16M "$raw"
grep -q "carries an ext2/3/4 filesystem" "$T/err" || fail "ext4 not recognized"
mkfs.xfs -q -f "$raw" >/dev/null
expect_rc 1 "$NVT" record -q --size 16M "$raw"
grep -q "carries an XFS filesystem" "$T/err" || fail "XFS not recognized"
mount "$raw" "$T/m" 2>/dev/null || { mkdir -p "$T/m" && mount "$raw" "$T/m"; }
MOUNTS=("$T/m" "${MOUNTS[@]}")
expect_rc 1 "$NVT" record -q --force --size 16M "$raw"
grep -q "mounted at $T/m" "$T/err" || fail "mounted device with --force"
ok "filesystems recognized and refused; a mounted device is refused even with --force"
echo "rawdev: all passed"
