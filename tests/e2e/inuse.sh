#!/bin/bash
# SPDX-License-Identifier: MIT
# Nothing in use is overwritten: a disk whose partition is mounted is refused even with --force
# (the device is claimed exclusively, as mkfs does), and a recording that is still being
# written can be neither recovered nor recorded over (the writer holds the file's lock).
. "$(dirname "$0")/lib.sh"
need_root
command -v sfdisk >/dev/null || { echo "SKIP: sfdisk (fdisk) missing"; exit 77; }

# a disk with an MBR partition at 1 MiB, ext4 on the partition, mounted
img=$(mktemp -p /dev/shm nvt-e2e.XXXXXX.img)
IMAGES+=("$img")
truncate -s 64M "$img"
echo 'start=2048, type=83' | sfdisk -q "$img" >/dev/null || fail "sfdisk"
disk=$(losetup -f --show -P "$img") || fail "losetup -P"
LOOPS+=("$disk")
part=/sys/class/block/$(basename "$disk")p1
for i in $(seq 10); do [ -e "$part/dev" ] && break; sleep 0.1; done
[ -e "$part/dev" ] || partx -a "$disk" 2>/dev/null # the scan at attach time can miss it here
for i in $(seq 20); do [ -e "$part/dev" ] && break; sleep 0.1; done
[ -e "$part/dev" ] || fail "the kernel did not scan the partition table of $disk"
if [ ! -b "${disk}p1" ]; then # no udev here: make the node ourselves
	IFS=: read -r maj min <"$part/dev"
	mknod "${disk}p1" b "$maj" "$min" || fail "mknod ${disk}p1"
	made_node=${disk}p1
	trap 'rm -f "$made_node"; cleanup' EXIT
fi
mkfs.ext4 -q -F "${disk}p1" >/dev/null || fail "mkfs.ext4 on ${disk}p1"
mkdir -p "$T/m"
mount "${disk}p1" "$T/m" || fail "mount"
MOUNTS=("$T/m" "${MOUNTS[@]+"${MOUNTS[@]}"}")
echo keep >"$T/m/data"
sync
before=$(dd if="$disk" bs=1M count=8 status=none | sha256sum)
expect_rc 1 "$NVT" record --force --size 4M "$disk"
grep -q "in use" "$T/err" || fail "no in-use message: $(cat "$T/err")"
after=$(dd if="$disk" bs=1M count=8 status=none | sha256sum)
[ "$before" = "$after" ] || fail "the disk under a mounted partition was written"
expect_rc 1 "$NVT" setup --single --yes --mount "$T/m2" "$disk"
grep -q "in use" "$T/err" || fail "setup --single on a disk with a mounted partition: $(cat "$T/err")"
[ "$before" = "$(dd if="$disk" bs=1M count=8 status=none | sha256sum)" ] || fail "setup wrote the disk"
umount "$T/m" && MOUNTS=("${MOUNTS[@]:1}")
fsck.ext4 -n "${disk}p1" >/dev/null 2>&1 || fail "the filesystem on ${disk}p1 is damaged"
ok "a disk with a mounted partition: record (even with --force) and setup refused, not a byte written, fsck clean"

# a live recording: recover and a second record are refused, the recording completes intact
f="$T/live.nvt"
"$NVT" record -q --rate 100MB --size 600M "$f" >"$T/live.out" 2>&1 &
pid=$!
wait_header "$f" 2
expect_rc 1 "$NVT" recover "$f"
grep -q "being written" "$T/err" || fail "recover of a live recording: $(cat "$T/err")"
expect_rc 1 "$NVT" record -q --size 8M "$f"
grep -q "being written" "$T/err" || fail "record over a live recording: $(cat "$T/err")"
wait $pid || fail "the live recording failed: $(cat "$T/live.out")"
expect_rc 0 "$NVT" verify "$f"
[ "$(field bytes)" = $((600 * 1048576)) ] && [ "$(field corrupt)" = 0 ] && [ "$(field gaps)" = 0 ] ||
	fail "the live recording was damaged: $(grep RESULT "$T/out")"
ok "a live recording: recover and a second record refused (exit 1), the recording verifies whole"
echo "inuse: all passed"
