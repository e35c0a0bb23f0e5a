# SPDX-License-Identifier: MIT
# The FPGA Drive Recorder's driver, emulated by tests/vm/fdrec_emu: the module loads and
# refuses a second opener; its read() mode recorded with --source dev: and the sysfs loss
# counter (--drops-from) verifies beat by beat through the pattern's counter.
. /suites/lib.sh
reset_drives
SYS=/sys/class/misc/fdrec0
fdrec_load() {
	insmod /modules/fdrec_emu.ko fifo_depth=65536 rate_bps=2000000 || return 1
	for i in $(seq 50); do [ -c /dev/fdrec0 ] && break; sleep 0.1; done
	[ -c /dev/fdrec0 ] && [ "$(cat $SYS/version)" = 1 ]
}
check fdrec-load fdrec_load
fdrec_one_opener() {
	exec 3</dev/fdrec0 || return 1
	if cat /dev/fdrec0 >/dev/null 2>/tmp/busy.err; then
		exec 3<&-
		return 1
	fi
	exec 3<&-
	grep -qi busy /tmp/busy.err || { cat /tmp/busy.err; return 1; }
	# free again once the first opener closed
	dd if=/dev/fdrec0 of=/dev/null bs=4096 count=1 2>/dev/null
}
check fdrec-one-opener fdrec_one_opener
fdrec_read_mode() {
	echo 2000000 >$SYS/rate_bps || return 1
	nvtape record -q --force --source dev:/dev/fdrec0 --drops-from $SYS/drop_bytes \
		--chunk 1M --chunks 16 --duration 3 $D0 >/tmp/r.out
	rc=$?
	[ $rc = 0 ] || [ $rc = 2 ] || { cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	d=$(field drops </tmp/r.out)
	echo "NVT-INFO fdrec-read-mode: $b bytes at 2 MB/s, drops $d bytes (device: $(cat $SYS/drop_bytes))"
	# every byte the device lost is in the recording's drop count, and nothing else
	[ "$b" -ge 4000000 ] && [ "$d" = "$(cat $SYS/drop_bytes)" ] || return 1
	nvtape verify -q --check counter:u64le@0/16+1 $D0 >/tmp/v.out
	vrc=$?
	[ $vrc -le 2 ] && [ "$(field bytes </tmp/v.out)" = "$b" ] && [ "$(field corrupt </tmp/v.out)" = 0 ] ||
		{ cat /tmp/v.out; return 1; }
}
check fdrec-read-mode fdrec_read_mode
