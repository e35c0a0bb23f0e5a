# SPDX-License-Identifier: MIT
# nvtape setup: RAID0 + XFS + mount, a recording on it, refusal of an in-use device,
# declining leaves everything as it was, teardown.
. /suites/lib.sh
reset_drives
setup_raid0() {
	mdadm --zero-superblock $D0 $D1 2>/dev/null
	# not a terminal and no --yes: it asks nobody and changes nothing
	if nvtape setup --raid0 $D0 $D1 </dev/null 2>/tmp/s.err; then return 1; fi
	grep -q "DESTROY everything" /tmp/s.err && grep -q "give --yes" /tmp/s.err || { cat /tmp/s.err; return 1; }
	[ -b /dev/md0 ] && [ -e /sys/block/md0/md/level ] && return 1
	nvtape setup --raid0 --yes --chunk 512K --fs xfs --mount /mnt/rec $D0 $D1 || return 1
	grep -q " /mnt/rec xfs .*noatime" /proc/mounts || { cat /proc/mounts; return 1; }
	[ "$(cat /sys/block/md0/md/level)" = raid0 ] && [ "$(cat /sys/block/md0/md/chunk_size)" = 524288 ] || return 1
	if nvtape setup --single --yes $D0 2>/tmp/s.err; then return 1; fi
	grep -q "in use by md" /tmp/s.err || { cat /tmp/s.err; return 1; }
	nvtape record -q --rate 150MB --size 256M /mnt/rec/rec.nvt >/dev/null || return 1
	nvtape verify -q /mnt/rec/rec.nvt >/dev/null || return 1
	nvtape setup --teardown --mount /mnt/rec || return 1
	! grep -q " /mnt/rec " /proc/mounts && [ ! -e /sys/block/md0/md/level ]
}
check setup-raid0-xfs-teardown setup_raid0
