# SPDX-License-Identifier: MIT
# exFAT at full speed: on Linux 6.1 an O_DIRECT write that extends an exFAT file silently
# becomes a buffered write; nvtape zero-fills the range first and then overwrites it. The
# figures (nvtape on exFAT, nvtape on XFS, a plain extending O_DIRECT write on exFAT) are
# printed; the check is that the exFAT recording is clean and >= 3x the extending speed. The
# speed runs keep no chunk checksums: under TCG their CRC32C, not the filesystem, would bound
# them (nvme-file-on-exfat-on-md0 records exFAT files with them).
. /suites/lib.sh
reset_drives
exfat_speed() {
	on_md exfat || return 1
	t0=$(date +%s)
	dd if=/dev/zero of=/mnt/rec/dd.bin bs=1M count=256 oflag=direct 2>/tmp/dd.err
	t1=$(date +%s)
	rm -f /mnt/rec/dd.bin
	nvtape record -q --checksum none --size 1G /mnt/rec/r.nvt >/tmp/e.out 2>/tmp/e.err || { echo "record exit $?"; cat /tmp/e.err /tmp/e.out; ls -la /mnt/rec; df /mnt/rec; off_md; return 1; }
	nvtape verify -q /mnt/rec/r.nvt >/tmp/v.out && nvtape play -q --rate 300MB /mnt/rec/r.nvt >/dev/null
	vrc=$?
	off_md
	on_md xfs || return 1
	nvtape record -q --checksum none --size 1G /mnt/rec/r.nvt >/tmp/x.out 2>&1 || { cat /tmp/x.out; off_md; return 1; }
	off_md
	dd=$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.1f", 268.435456 / (t > 0 ? t : 1) }')
	ex=$(field mbps </tmp/e.out)
	xf=$(field mbps </tmp/x.out)
	echo "NVT-INFO exFAT on md0: nvtape --rate max $ex MB/s ($(grep -o 'zero-filled[^,]*in [0-9.]* s' /tmp/e.err)); XFS on md0: $xf MB/s; extending O_DIRECT dd on exFAT: $dd MB/s"
	[ $vrc = 0 ] || return 1
	grep -q "zero-filled" /tmp/e.err || return 1
	# far above the extending path (10-20x slower on 6.1): at least 3x it
	awk -v e="$ex" -v d="$dd" 'BEGIN { exit !(e >= 3 * d) }'
}
check exfat-on-md0-full-speed exfat_speed
