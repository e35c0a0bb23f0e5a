# SPDX-License-Identifier: MIT
# Striped raw over both namespaces, then md compatibility: the same members assembled by
# mdadm --build (no superblock) must present the recording unchanged on /dev/md0.
. /suites/lib.sh
stripe_raw() {
	nvtape record -q --force --rate 200MB --duration 2 $D0 $D1 >/tmp/s.out || return 1
	echo "NVT-INFO stripe-raw: $(field bytes </tmp/s.out) bytes, $(field mbps </tmp/s.out) MB/s"
	nvtape verify -q $D0 $D1 >/tmp/v.out || return 1
	nvtape play -q --rate 300MB $D0 $D1 >/dev/null
}
md_build() {
	mdadm --build /dev/md0 --level=0 --chunk=512 --raid-devices=2 $D0 $D1 || return 1
	nvtape verify -q /dev/md0 >/tmp/v.out
	rc=$?
	mdadm --stop /dev/md0 >/dev/null
	[ $rc = 0 ] && [ "$(field bytes </tmp/v.out)" = "$(field bytes </tmp/s.out)" ]
}
check stripe-raw stripe_raw
check md-build-reads-nvtape-stripe md_build
