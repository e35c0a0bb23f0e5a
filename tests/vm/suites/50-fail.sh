# SPDX-License-Identifier: MIT
# A drive that fails mid-recording: one member of a stripe is switched to device-mapper's
# error target while nvtape writes. The recording must stop cleanly, name the failed member,
# exit 1, and keep everything acknowledged before the failure verifiable.
. /suites/lib.sh
reset_drives
drive_fails() {
	sectors=$(blockdev --getsz $D1)
	echo "0 $sectors linear $D1 0" | dmsetup --noudevsync create flaky || return 1
	[ -b /dev/mapper/flaky ] || dmsetup --noudevsync mknodes
	nvtape record -q --force --rate 150MB --duration 20 $D0 /dev/mapper/flaky >/tmp/f.out 2>/tmp/f.err &
	pid=$!
	sleep 3
	echo "0 $sectors error" | dmsetup --noudevsync load flaky
	dmsetup --noudevsync suspend --noflush flaky
	dmsetup --noudevsync resume flaky
	wait $pid
	rc=$?
	echo "NVT-INFO drive-fails: exit $rc, kept $(field bytes </tmp/f.out) bytes; $(grep -o 'failed on [^:]*' /tmp/f.err | head -n 1)"
	# the drive comes back (a new controller, a re-seated cable): what was kept must verify
	echo "0 $sectors linear $D1 0" | dmsetup --noudevsync load flaky
	dmsetup --noudevsync suspend --noflush flaky
	dmsetup --noudevsync resume flaky
	nvtape verify -q $D0 /dev/mapper/flaky >/tmp/v.out
	dmsetup --noudevsync remove flaky
	cat /tmp/f.err /tmp/v.out | tail -n 6
	[ $rc = 1 ] || return 1
	grep -q "failed on member 2, /dev/mapper/flaky (that drive failed)" /tmp/f.err || return 1
	[ "$(field complete </tmp/v.out)" = 1 ] && [ "$(field corrupt </tmp/v.out)" = 0 ] &&
		[ "$(field gaps </tmp/v.out)" = 0 ] && [ "$(field bytes </tmp/v.out)" -gt 100000000 ] &&
		[ "$(field bytes </tmp/v.out)" = "$(field bytes </tmp/f.out)" ]
}
check drive-fails-mid-recording drive_fails
