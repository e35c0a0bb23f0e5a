# SPDX-License-Identifier: MIT
# A raw single NVMe namespace: record -> verify -> play, nothing in between.
. /suites/lib.sh
raw_single() {
	nvtape record -q --force --rate 150MB --duration 2 $D0 >/tmp/r.out || return 1
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO raw-single: $b bytes, $(field mbps </tmp/r.out) MB/s, io thread $(field io_cpu_s_per_gb </tmp/r.out) core-s/GB"
	nvtape verify -q $D0 >/tmp/v.out || return 1
	[ "$(field bytes </tmp/v.out)" = "$b" ] || return 1
	nvtape play -q --rate 300MB $D0 >/tmp/p.out || return 1
	[ "$(field beats </tmp/p.out)" = $((b / 16)) ]
}
check raw-single raw_single
