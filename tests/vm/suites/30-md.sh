# SPDX-License-Identifier: MIT
# An array made by mdadm --create --metadata=1.2: nvtape writes its members directly past md's
# data offset; md assembles it and presents the recording unchanged. With the array active,
# its members are refused.
. /suites/lib.sh
reset_drives
md_create() {
	mdadm --zero-superblock $D0 $D1 2>/dev/null
	yes | mdadm --create /dev/md0 --level=0 --metadata=1.2 --chunk=512 --raid-devices=2 --run $D0 $D1 >/dev/null 2>&1 || return 1
	off=$(mdadm --examine $D0 | sed -n 's/.*Data Offset : \([0-9]*\) sectors.*/\1/p')
	echo "NVT-INFO md data offset $off sectors"
	[ -n "$off" ] || return 1
	nvtape record -q --size 64M /tmp/x.nvt >/dev/null 2>&1
	# in use: refused
	if nvtape record -q --force --member-offset $((off * 512)) --size 64M $D0 $D1 2>/tmp/e.txt; then return 1; fi
	grep -q "in use by md" /tmp/e.txt || { cat /tmp/e.txt; return 1; }
	mdadm --stop /dev/md0 >/dev/null || return 1
	# the members carry md superblocks: refused without --force
	if nvtape record -q --member-offset $((off * 512)) --size 64M $D0 $D1 2>/tmp/e.txt; then return 1; fi
	grep -q "md RAID superblock" /tmp/e.txt || { cat /tmp/e.txt; return 1; }
	nvtape record -q --force --member-offset $((off * 512)) --rate 200MB --duration 2 $D0 $D1 >/tmp/s.out || { cat /tmp/s.out; return 1; }
	mdadm --assemble /dev/md0 $D0 $D1 || return 1
	nvtape verify -q /dev/md0 >/tmp/v.out
	rc=$?
	[ $rc = 0 ] || cat /tmp/v.out
	mdadm --stop /dev/md0 >/dev/null
	[ $rc = 0 ] && [ "$(field bytes </tmp/v.out)" = "$(field bytes </tmp/s.out)" ]
}
check md-create-member-offset md_create
# metadata 0.90 keeps its superblock at the end of the member: found there all the same, and
# refused without --force; an active array holds its members even against --force
md_090() {
	reset_drives
	yes | mdadm --create /dev/md0 --level=linear --metadata=0.90 --raid-devices=2 --run $D0 $D1 >/tmp/md.out 2>&1 || { cat /tmp/md.out; return 1; }
	if nvtape record -q --force --size 8M $D0 2>/tmp/e.txt; then echo "held member written"; mdadm --stop /dev/md0; return 1; fi
	grep -q "in use" /tmp/e.txt || { cat /tmp/e.txt; mdadm --stop /dev/md0; return 1; }
	mdadm --stop /dev/md0 >/dev/null || return 1
	if nvtape record -q --size 8M $D0 2>/tmp/e.txt; then echo "0.90 member written"; return 1; fi
	echo "NVT-INFO md 0.90 member: $(grep -o 'carries [^:]*' /tmp/e.txt)"
	grep -q "md RAID superblock (metadata 0.90" /tmp/e.txt || { cat /tmp/e.txt; return 1; }
	mdadm --zero-superblock $D0 $D1
}
check md-0.90-member-refused md_090
