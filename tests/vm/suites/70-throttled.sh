# SPDX-License-Identifier: MIT
# Two drives throttled to the same write rate (cgroup v2 io.max): the striped recording's
# sustained rate against one drive's, as a ratio in the summary (not a pass/fail timing);
# the check is only that both recordings verify.
. /suites/lib.sh
reset_drives
throttled_ratio() {
	cg=/sys/fs/cgroup
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || return 1
	grep -qw io $cg/cgroup.subtree_control || echo "+io" >$cg/cgroup.subtree_control || return 1
	mkdir -p $cg/nvt
	for d in $D0 $D1; do
		echo "$(cat /sys/block/$(basename $d)/dev) wbps=104857600" >$cg/nvt/io.max || return 1
	done
	read -r me _ </proc/self/stat # this (sub)shell: $$ would name the parent
	echo "$me" >$cg/nvt/cgroup.procs || return 1
	nvtape record -q --force --chunk 1M --size 300M $D0 >/tmp/one.out || return 1
	nvtape record -q --force --chunk 1M --size 600M $D0 $D1 >/tmp/two.out || return 1
	echo "$me" >$cg/cgroup.procs
	one=$(field mbps </tmp/one.out)
	two=$(field mbps </tmp/two.out)
	echo "NVT-INFO throttled to 100 MiB/s each: one drive $one MB/s, striped over two $two MB/s, ratio $(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }')"
	nvtape verify -q $D0 $D1 >/dev/null
}
check throttled-stripe-ratio throttled_ratio
