# SPDX-License-Identifier: MIT
# Filesystems on md0: record a file, verify, play (XFS; exFAT for the record).
. /suites/lib.sh
reset_drives
fs_md() { # fs_md MKFS-COMMAND
	mdadm --zero-superblock $D0 $D1 2>/dev/null
	yes | mdadm --create /dev/md0 --level=0 --metadata=1.2 --chunk=512 --raid-devices=2 --run $D0 $D1 >/dev/null 2>&1 || return 1
	"$@" /dev/md0 >/dev/null 2>&1 || { mdadm --stop /dev/md0; return 1; }
	mkdir -p /mnt/rec
	mount -o noatime /dev/md0 /mnt/rec || { mdadm --stop /dev/md0; return 1; }
	nvtape record -q --rate 150MB --size 512M /mnt/rec/r.nvt >/tmp/f.out
	rc=$?
	echo "NVT-INFO $1 on md0: $(field mbps </tmp/f.out) MB/s"
	[ $rc = 0 ] && nvtape verify -q /mnt/rec/r.nvt >/dev/null && nvtape play -q /mnt/rec/r.nvt >/dev/null
	rc=$?
	umount_wait /mnt/rec
	mdadm --stop /dev/md0 >/dev/null
	return $rc
}
check xfs-on-md0 fs_md mkfs.xfs -f
