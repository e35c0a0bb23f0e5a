#!/bin/bash
# SPDX-License-Identifier: MIT
# nvtape never writes over a device that carries something: every signature libblkid knows is
# refused without --force, named in the message, and not a byte of the device changes. Each
# kind is made by its own tool on a loop device.
. "$(dirname "$0")/lib.sh"
need_root
n=0
refused() { # refused NAME WORDS: record onto $DEV is refused, naming WORDS, nothing written
	local before
	before=$(dd if="$DEV" bs=1M count=2 status=none | sha256sum)
	expect_rc 1 "$NVT" record -q --size 8M "$DEV"
	grep -q "carries $2" "$T/err" || fail "$1: not recognized: $(cat "$T/err")"
	[ "$before" = "$(dd if="$DEV" bs=1M count=2 status=none | sha256sum)" ] || fail "$1: device written"
	n=$((n + 1))
	echo "ok: $1 refused: $(sed -n 's/.*carries \(.*\): recording onto.*/\1/p' "$T/err")"
}
fresh() { make_loop "${1:-64M}" none; }

fresh && cryptsetup luksFormat -q --type luks1 --iter-time 1 "$DEV" <<<"nvtape-test" >/dev/null 2>&1 ||
	fail "cryptsetup luksFormat"
refused "LUKS1" "a LUKS encrypted volume"
fresh && pvcreate -q -ff -y --config 'devices { obtain_device_list_from_udev=0 global_filter=["a|.*|"] }' "$DEV" >/dev/null 2>&1 ||
	fail "pvcreate"
refused "LVM physical volume" "an LVM physical volume"
fresh && mkswap -q "$DEV" >/dev/null || fail "mkswap"
refused "swap" "swap space"
fresh && echo 'label: gpt' | sfdisk -q "$DEV" >/dev/null || fail "sfdisk gpt"
refused "GPT" "a GPT partition table"
fresh && echo 'start=2048, type=83' | sfdisk -q "$DEV" >/dev/null || fail "sfdisk dos"
refused "MBR" "a DOS (MBR) partition table"
fresh 320M && mkfs.xfs -q -f "$DEV" >/dev/null || fail "mkfs.xfs"
refused "XFS" "an XFS filesystem"
fresh && mkfs.ext4 -q -F "$DEV" >/dev/null || fail "mkfs.ext4"
refused "ext4" "an ext2/3/4 filesystem"
fresh && mkfs.exfat "$DEV" >/dev/null 2>&1 || fail "mkfs.exfat"
refused "exFAT" "an exFAT filesystem"
fresh && mkfs.vfat "$DEV" >/dev/null 2>&1 || fail "mkfs.vfat"
refused "FAT" "a FAT filesystem"
mkdir -p "$T/iso/d" && echo data >"$T/iso/d/f"
xorriso -as mkisofs -quiet -o "$T/i.iso" "$T/iso" >/dev/null 2>&1 || fail "xorriso"
DEV=$(losetup -f --show "$T/i.iso") && LOOPS+=("$DEV") || fail "losetup iso"
refused "ISO9660" "an ISO9660 image"
if [ -e /proc/mdstat ]; then
	for meta in 0.90 1.2; do
		fresh && a=$DEV && fresh && b=$DEV
		mdadm --create /dev/md/nvtprobe --run -q --metadata=$meta --level=1 --raid-devices=2 \
			"$a" "$b" >/dev/null 2>&1 || fail "mdadm --create metadata $meta"
		mdadm --stop /dev/md/nvtprobe >/dev/null 2>&1
		DEV=$a
		refused "md member (metadata $meta)" "an md RAID superblock (metadata $meta"
	done
else
	echo "note: no md driver on this kernel: md members are checked in the guest suite"
fi
fresh && "$NVT" record -q --force --size 4M "$DEV" >/dev/null 2>&1 || fail "record onto a fresh device"
refused "nvtape recording" "an nvtape recording"
fresh && "$NVT" record -q --force --format fdrec --size 4M "$DEV" >/dev/null 2>&1 || fail "fdrec"
refused "fdrec recording" "an FPGA Drive Recorder recording"

expect_rc 0 "$NVT" record -q --force --size 8M "$DEV"
ok "--force overwrites a device that carries a recording (not one in use)"
echo "probe: $n kinds refused"
