# SPDX-License-Identifier: MIT
# The nvme engine: nvtape's own NVMe Write/Read commands through io_uring passthrough on
# /dev/ngXnY, on a raw namespace, a stripe over both, and files on XFS and exFAT volumes.
# Every recording is read back through both paths (the block layer and passthrough) and must
# agree beat for beat; md and the filesystems must see ordinary recordings.
. /suites/lib.sh
reset_drives
# verify_both EXPECTED-BYTES ARGS...: verify through the block layer and through passthrough
verify_both() {
	want=$1
	shift
	nvtape verify -q "$@" >/tmp/vb.out || { cat /tmp/vb.out; return 1; }
	[ "$(field bytes </tmp/vb.out)" = "$want" ] || { echo "block path: $(field bytes </tmp/vb.out) != $want"; return 1; }
	nvtape verify -q --engine nvme "$@" >/tmp/vn.out || { cat /tmp/vn.out; return 1; }
	[ "$(field bytes </tmp/vn.out)" = "$want" ] || { echo "passthrough: $(field bytes </tmp/vn.out) != $want"; return 1; }
}
nvme_raw() {
	nvtape record -q --json --force --engine nvme --rate 200MB --duration 2 /dev/ng0n1 >/tmp/n.json || { cat /tmp/n.json; return 1; }
	b=$(sed -n 's/.*"bytes":\([0-9]*\),.*/\1/p' /tmp/n.json)
	desc=$(sed -n 's/.*"engine":"\([^"]*\)".*/\1/p' /tmp/n.json)
	echo "NVT-INFO raw: $b bytes; $desc"
	# commands as large as the drive (MDTS) and the kernel (max_hw_sectors_kb, max_segments)
	# accept, never larger
	hw=$(cat /sys/block/nvme0n1/queue/max_hw_sectors_kb)
	segs=$(($(cat /sys/block/nvme0n1/queue/max_segments) * 4))
	want=$((hw < segs ? hw : segs))
	echo "$desc" | grep -q "commands <= $want KiB" || { echo "want commands <= $want KiB"; return 1; }
	verify_both "$b" $D0 || return 1
	nvtape play -q --engine nvme --rate 300MB $D0 >/tmp/p.out || { cat /tmp/p.out; return 1; }
	nvtape info $D0 >/tmp/i.out
	grep -q "written by      NVMe commands built by nvtape" /tmp/i.out &&
		grep -q "drive 0 .*QEMU NVMe Ctrl, serial nvtape0, firmware .*nsid 1, 512-byte LBAs" /tmp/i.out ||
		{ cat /tmp/i.out; return 1; }
}
check nvme-raw-record-verify-play nvme_raw
nvme_stripe() {
	nvtape record -q --force --engine nvme --rate 200MB --duration 2 $D0 $D1 >/tmp/s.out || { cat /tmp/s.out; return 1; }
	b=$(field bytes </tmp/s.out)
	echo "NVT-INFO stripe: $b bytes over /dev/ng0n1 + /dev/ng1n1"
	verify_both "$b" $D0 $D1 || return 1
	nvtape play -q --engine nvme --rate 300MB $D0 $D1 >/tmp/p.out 2>&1 || { cat /tmp/p.out; return 1; }
	# md presents the same recording
	mdadm --build /dev/md0 --level=0 --chunk=512 --raid-devices=2 $D0 $D1 || return 1
	nvtape verify -q /dev/md0 >/tmp/v.out
	rc=$?
	mdadm --stop /dev/md0 >/dev/null
	[ $rc = 0 ] && [ "$(field bytes </tmp/v.out)" = "$b" ] || { cat /tmp/v.out; return 1; }
	nvtape info $D0 $D1 >/tmp/i.out
	grep -q "drive 1 .*serial nvtape1" /tmp/i.out || { cat /tmp/i.out; return 1; }
}
check nvme-stripe-record-verify-play-md nvme_stripe
# a slow stream (20 KB/s: an 8 MiB chunk would take 7 minutes) through passthrough, striped,
# killed after three checkpoints: each wrote the part of the chunk being filled, so recover keeps
# all but the last interval, every byte covered by a checksum
nvme_slow_kill() {
	nvtape record -q --force --engine nvme --rate 20KB $D0 $D1 >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 300); do # this recording's fourth header: three checkpoints
		nvtape info --json $D0 $D1 >/tmp/k.json 2>/dev/null
		g=$(sed -n 's/.*"generation":\([0-9]*\).*/\1/p' /tmp/k.json)
		grep -q '"complete":false' /tmp/k.json && [ -n "$g" ] && [ "$g" -ge 4 ] && break
		sleep 0.1
	done
	# the time of day to the microsecond (busybox's date has no %N: it printed whole seconds)
	t=$(adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d.%06d", s, u }')
	kill -9 $pid
	wait $pid 2>/dev/null
	d=$(nvtape info --json $D0 $D1 | sed -n 's/.*"durable_bytes":\([0-9]*\).*/\1/p')
	s=$(nvtape info --json $D0 $D1 | sed -n 's/.*"start_ns":\([0-9]*\).*/\1/p')
	nvtape recover $D0 $D1 >/tmp/k.out || { cat /tmp/k.out; return 1; }
	b=$(field data_bytes </tmp/k.out)
	nvtape verify $D0 $D1 >/tmp/v.out || { cat /tmp/v.out; return 1; }
	grep -q "0 bytes not covered" /tmp/v.out || { cat /tmp/v.out; return 1; }
	lost=$(awk -v t="$t" -v s="$s" -v b="$b" 'BEGIN { printf "%.2f", (t - s / 1e9) - b / 20000 }')
	echo "NVT-INFO slow stream killed: checkpoint vouched for $d bytes, recover kept $b ($lost s of stream lost)"
	[ "$d" -gt 0 ] && [ "$d" -lt 1000000 ] && awk -v l="$lost" 'BEGIN { exit !(l >= 0 && l <= 1.5) }' ||
		{ cat /tmp/k.json /tmp/k.out /tmp/v.out; return 1; }
}
check nvme-slow-stream-kill nvme_slow_kill
# nvme_file FS: a recording file on FS over md RAID0, written through passthrough while mounted,
# at a rate far below what the emulated drives take even on a loaded host (no drops)
nvme_file() {
	reset_drives
	on_md $1 || return 1
	nvtape record --engine nvme --rate 80MB --size 200M /mnt/rec/r.nvt >/tmp/r.out 2>/tmp/r.err || { cat /tmp/r.err /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO file on $1 on md0: $b bytes at $(field mbps </tmp/r.out) MB/s; $(grep -o 'zero-filled[^;]*' /tmp/r.err | head -n 1)"
	# while mounted, the filesystem reads it as an ordinary recording
	verify_both "$b" /mnt/rec/r.nvt || return 1
	# a second recording reuses the file's blocks (no zero-fill); the first one's pages in the
	# page cache (read by verify) must not go back over what the second wrote beneath them
	nvtape record --force --engine nvme --rate 80MB --size 200M /mnt/rec/r.nvt >/tmp/r2.out 2>/tmp/r2.err || { cat /tmp/r2.err; return 1; }
	if grep -q "zero-fill" /tmp/r2.err; then echo "second recording zero-filled again"; cat /tmp/r2.err; return 1; fi
	off_md
	mdadm --assemble /dev/md0 $D0 $D1 >/dev/null 2>&1 || return 1
	mount -t $1 /dev/md0 /mnt/rec || return 1
	verify_both "$(field bytes </tmp/r2.out)" /mnt/rec/r.nvt || { nvtape info /mnt/rec/r.nvt; ls -l /mnt/rec; return 1; }
	nvtape play -q --engine nvme --rate 300MB /mnt/rec/r.nvt >/dev/null || return 1
	[ "$(stat -c %s /mnt/rec/r.nvt)" -lt $((220 << 20)) ] || { ls -l /mnt/rec; return 1; }
	off_md
}
check nvme-file-on-xfs-on-md0 nvme_file xfs
check nvme-file-on-exfat-on-md0 nvme_file exfat
# a file written through passthrough at a rate the drives cannot take: the drops are counted
# and their positions kept (the index fits in the blocks reserved with the file)
nvme_file_drops() {
	reset_drives
	on_md xfs || return 1
	nvtape record --engine nvme --rate 4GB --size 96M --chunk 1M --chunks 4 /mnt/rec/d.nvt >/tmp/d.out 2>/tmp/d.err
	rc=$?
	grep -q "unwritten extents zero-filled through the filesystem" /tmp/d.err || { echo "no zero-fill note"; cat /tmp/d.err; return 1; }
	nvtape verify -q /mnt/rec/d.nvt >/tmp/dv.out
	vrc=$?
	nvtape info --json /mnt/rec/d.nvt >/tmp/di.json
	echo "NVT-INFO file drops: record exit $rc, $(field drops </tmp/d.out) beats dropped in $(field drop_events </tmp/d.out) events; verify exit $vrc, drops_match $(field drops_match </tmp/dv.out), index $(grep -o '"index_bytes":[0-9]*' /tmp/di.json)"
	off_md
	[ $rc = 2 ] && [ $vrc = 2 ] && [ "$(field drops </tmp/d.out)" -gt 0 ] || { cat /tmp/d.err /tmp/dv.out; return 1; }
	[ "$(field drops_match </tmp/dv.out)" = 1 ] && [ "$(field corrupt </tmp/dv.out)" = 0 ] || { cat /tmp/dv.out; return 1; }
	grep -q '"index_bytes":[1-9]' /tmp/di.json || { echo "no drop index"; cat /tmp/d.err; return 1; }
	! grep -q "index could not be written" /tmp/d.err
}
check nvme-file-drops-keep-their-index nvme_file_drops
# refusals: each exits with the documented code and a message that names the fix
expect() { # expect CODE PATTERN CMD...
	code=$1 pat=$2
	shift 2
	"$@" >/tmp/x.out 2>&1
	rc=$?
	[ $rc = "$code" ] && grep -q "$pat" /tmp/x.out && return 0
	echo "exit $rc (want $code) from: $*"
	cat /tmp/x.out
	return 1
}
nvme_refusals() {
	reset_drives
	expect 64 "1 to 63" nvtape record --engine nvme --qd 64 --size 8M --force $D0 || return 1
	mkdir -p /tmp/t
	expect 64 "needs its length up front" nvtape record --engine nvme /tmp/t/r.nvt || return 1
	expect 1 "holds 4294967296 bytes" nvtape record --engine nvme --size 5G --force $D0 || return 1
	sectors=$(blockdev --getsz $D1)
	echo "0 $sectors linear $D1 0" | dmsetup --noudevsync create lin || return 1
	[ -b /dev/mapper/lin ] || dmsetup --noudevsync mknodes
	expect 1 "drives NVMe namespaces" nvtape record --engine nvme --size 8M --force /dev/mapper/lin
	rc=$?
	mkdir -p /mnt/x
	if [ $rc = 0 ] && mkfs.xfs -f -q /dev/mapper/lin && mount /dev/mapper/lin /mnt/x; then
		expect 1 "cannot reach its blocks" nvtape record --engine nvme --size 8M /mnt/x/r.nvt
		rc=$?
		umount_wait /mnt/x
	fi
	dmsetup --noudevsync remove lin
	[ $rc = 0 ] || return 1
	mkfs.xfs -f -q $D0 && mkdir -p /mnt/rec && mount $D0 /mnt/rec || return 1
	expect 1 "mounted" nvtape record --engine nvme --size 8M --force $D0
	rc=$?
	umount_wait /mnt/rec
	wipefs -a -q $D0
	return $rc
}
check nvme-refusals nvme_refusals
# A namespace recorded through passthrough is claimed: a second recording is refused. Its header
# is read from the drive, not from a page cached before the recording wrote it beneath the page
# cache: fd 3 holds the device open, so the zeroed block read before the start stays cached.
nvme_claim() {
	reset_drives
	dd if=/dev/zero of=$D0 bs=4096 count=1 oflag=direct status=none
	exec 3<$D0
	dd if=$D0 of=/dev/null bs=4096 count=1 status=none
	nvtape record -q --engine nvme --force --rate 20MB --duration 6 $D0 >/tmp/first.out 2>&1 &
	first=$!
	seen=0
	for i in $(seq 50); do
		nvtape info $D0 >/dev/null 2>&1 && { seen=1; break; }
		sleep 0.1
	done
	exec 3<&-
	rc=1
	if [ $seen = 0 ]; then
		echo "nvtape info never saw the live recording's header"
	elif ! kill -0 $first 2>/dev/null; then
		echo "the first recording ended before the second was tried"
	else
		expect 1 "in use" nvtape record --engine nvme --size 8M --force $D0
		rc=$?
	fi
	wait $first || { echo "the first recording failed"; cat /tmp/first.out; return 1; }
	nvtape verify -q $D0 >/dev/null || { echo "the first recording does not verify"; return 1; }
	return $rc
}
check nvme-claim nvme_claim
