# SPDX-License-Identifier: MIT
# Guest suite helpers: each check prints one NVT-CHECK line.
D0=/dev/nvme0n1
D1=/dev/nvme1n1
# the drive throttled to 512 KB/s by QEMU: one that stops responding
DH=$(for c in /sys/class/nvme/nvme*; do grep -q '^nvtapehung *$' $c/serial 2>/dev/null && echo /dev/$(basename $c)n1; done)
check() { # check NAME CMD...: PASS when CMD exits 0
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "$out" | grep '^NVT-INFO '
		echo "NVT-CHECK PASS $name"
	else
		echo "$out" | grep '^NVT-INFO '
		echo "NVT-CHECK FAIL $name"
		echo "$out" | grep -v '^NVT-INFO ' | tail -n 15 | sed 's/^/    /'
	fi
}
field() { sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }
# Put both drives back to a known state: nothing mounted, no array, no mapping, no superblock.
reset_drives() {
	umount_wait /mnt/rec 2>/dev/null
	for md in /dev/md[0-9]* /dev/md/*; do [ -b "$md" ] && mdadm --stop "$md" >/dev/null 2>&1; done
	dmsetup --noudevsync remove_all 2>/dev/null
	mdadm --zero-superblock $D0 $D1 2>/dev/null
	if grep -q " /mnt/rec " /proc/mounts || ls /sys/block/$(basename $D0)/holders/* >/dev/null 2>&1 ||
		ls /sys/block/$(basename $D1)/holders/* >/dev/null 2>&1; then
		echo "NVT-INFO reset_drives: something still holds the drives: $(ls /sys/block/*/holders/ 2>/dev/null | tr '\n' ' ')"
	fi
	return 0
}
# umount that waits: io_uring drops its registered files a moment after the process exits
umount_wait() {
	for i in $(seq 50); do umount "$1" 2>/dev/null && return 0; sleep 0.1; done
	umount "$1"
}
# on_md FS: md0 (RAID0, metadata 1.2, 512 KiB chunks) over both drives, FS on it, mounted at
# /mnt/rec; off_md undoes it
on_md() {
	mdadm --zero-superblock $D0 $D1 2>/dev/null
	yes | mdadm --create /dev/md0 --level=0 --metadata=1.2 --chunk=512 --raid-devices=2 --run $D0 $D1 >/dev/null 2>&1 || return 1
	case $1 in
	xfs) mkfs.xfs -f -q /dev/md0 ;;
	exfat) mkfs.exfat /dev/md0 >/dev/null ;;
	esac || return 1
	mkdir -p /mnt/rec
	mount -t $1 -o noatime /dev/md0 /mnt/rec
}
off_md() {
	umount_wait /mnt/rec
	mdadm --stop /dev/md0 >/dev/null
}
