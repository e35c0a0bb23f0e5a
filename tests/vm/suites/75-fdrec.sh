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
# --source fdrec: nvtape's buffers registered with the driver, the test pattern at two rates
fdrec_clean() { # fdrec_clean RATE_BYTES
	nvtape record -q --force --source fdrec --rate "${1}B" --duration 2 --chunk 1M $D0 >/tmp/r.out ||
		{ cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-clean-$1: $b bytes, drops $(field drops </tmp/r.out), FIFO high-water $(field src_fifo_hwm </tmp/r.out) of $(field src_fifo_depth </tmp/r.out) beats (device: $(cat $SYS/fifo_hwm))"
	[ "$b" = $(($1 * 2)) ] && [ "$(field drops </tmp/r.out)" = 0 ] || return 1
	# the driver's FIFO as the live stats and the result show it
	[ "$(field src_fifo_depth </tmp/r.out)" = 65536 ] &&
		[ "$(field src_fifo_hwm </tmp/r.out)" = "$(cat $SYS/fifo_hwm)" ] || return 1
	nvtape verify -q $D0 >/tmp/v.out || { cat /tmp/v.out; return 1; }
	[ "$(field beats </tmp/v.out)" = $((b / 16)) ] && [ "$(field gaps </tmp/v.out)" = 0 ]
}
check fdrec-clean-2MB fdrec_clean 2000000
check fdrec-clean-5MB fdrec_clean 5000000
# a stripe of both drives through the file engine, then the nvme engine (passthrough) on two:
# the driver's buffers are the ring's chunks either way; the recording's metadata says what the
# device is (its source clock, FIFO depth, design version)
fdrec_stripe_nvme() {
	for eng in file nvme; do
		nvtape record -q --force --engine $eng --source fdrec --rate 5MB --duration 2 --chunk 1M \
			$D0 $D1 >/tmp/r.out || { cat /tmp/r.out; return 1; }
		b=$(field bytes </tmp/r.out)
		nvtape verify -q --engine $eng $D0 $D1 >/tmp/v.out || { cat /tmp/v.out; return 1; }
		echo "NVT-INFO fdrec-stripe ($eng engine): $b bytes over 2 drives, verify: $(field beats </tmp/v.out) beats, $(field gaps </tmp/v.out) gaps"
		[ "$b" = 10000000 ] && [ "$(field beats </tmp/v.out)" = 625000 ] && [ "$(field gaps </tmp/v.out)" = 0 ] || return 1
	done
	nvtape info --json $D0 $D1 >/tmp/i.json || return 1
	echo "NVT-INFO fdrec-meta: $(grep -o '"fdrec:[a-z_]*":"[^"]*"' /tmp/i.json | tr '\n' ' ')"
	grep -q "\"fdrec:src_clk_hz\":\"$(cat $SYS/src_clk_hz)\"" /tmp/i.json &&
		grep -q "\"fdrec:design_version\":\"$(cat $SYS/version)\"" /tmp/i.json &&
		grep -q '"fdrec:fifo_depth_beats":"65536"' /tmp/i.json &&
		grep -q '"fdrec:device":"/dev/fdrec0"' /tmp/i.json
}
check fdrec-stripe-and-nvme fdrec_stripe_nvme
# bench/fdrec's ceiling, a loop that only waits and releases: it receives what the device
# generates (rate x time, no drops)
fdrec_ceiling_loop() {
	echo 5000000 >$SYS/rate_bps || return 1
	fdrec_ceiling 2 1048576 32 >/tmp/c.out || { cat /tmp/c.out; return 1; }
	echo "NVT-INFO fdrec-ceiling: $(grep ^RESULT /tmp/c.out)"
	b=$(field bytes </tmp/c.out)
	want=$(awk -v s="$(field seconds </tmp/c.out)" 'BEGIN { printf "%d", s * 5000000 }')
	[ "$(field drops </tmp/c.out)" = 0 ] && [ "$b" -le "$want" ] && [ "$b" -ge $((want * 9 / 10)) ]
}
check fdrec-ceiling fdrec_ceiling_loop
# forced overflow: the drive QEMU throttles to 512 KB/s, a 4 MB ring, 2 MB/s for 10 s: the ring
# and the driver's 8 MB of buffers fill,
# the driver's FIFO overflows; verify's gap beats = the driver's drop_count = the index's
fdrec_overflow() {
	nvtape record -q --force --source fdrec --rate 2MB --duration 10 --chunk 1M --chunks 4 \
		--timeout 60 $DH >/tmp/r.out
	rc=$?
	[ $rc = 2 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	d=$(field drops </tmp/r.out)
	dc=$(cat $SYS/drop_count)
	echo "NVT-INFO fdrec-overflow: $(field bytes </tmp/r.out) bytes, drops $d beats in $(field drop_events </tmp/r.out) events, driver drop_count $dc, overflow $(cat $SYS/overflow)"
	[ "$d" -gt 0 ] && [ "$d" = "$dc" ] || return 1
	nvtape verify -q $DH >/tmp/v.out
	[ $? = 2 ] || { cat /tmp/v.out; return 1; }
	echo "NVT-INFO fdrec-overflow: verify gap_beats $(field gap_beats </tmp/v.out) drop_count $(field drop_count </tmp/v.out) drops_match $(field drops_match </tmp/v.out)"
	# the beats the FIFO dropped after the last recorded one (between the end and the
	# driver's stop) are drops at the end: no gap in the data
	[ "$(field gap_beats </tmp/v.out)" -le "$dc" ] && [ "$(field drop_count </tmp/v.out)" = "$dc" ] &&
		[ "$(field drops_match </tmp/v.out)" = 1 ] && [ "$(field corrupt </tmp/v.out)" = 0 ]
}
check fdrec-overflow fdrec_overflow
# Ctrl-C: the driver stops first, then every beat its DMA put in a buffer (the full ones not
# yet taken and the one it was filling) is in the recording, which verifies
fdrec_sigint() {
	nvtape record -q --force --source fdrec --rate 2MB --chunk 1M $D0 >/tmp/r.out &
	p=$!
	sleep 3
	kill -INT $p
	wait $p
	rc=$?
	[ $rc = 0 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-sigint: $b bytes = $((b / 16)) beats; driver: beats_out $(cat $SYS/beats_out), bufs_filled $(cat $SYS/bufs_filled), drop_count $(cat $SYS/drop_count)"
	[ "$b" -gt 0 ] && [ "$((b / 16))" = "$(cat $SYS/beats_out)" ] && [ "$(field drops </tmp/r.out)" = 0 ] ||
		return 1
	nvtape verify -q $D0 >/tmp/v.out && [ "$(field bytes </tmp/v.out)" = "$b" ]
}
check fdrec-sigint fdrec_sigint
# the DMA error flag: the recording stops with the error reported (exit 1), what came before verifies
fdrec_dma_error() {
	nvtape record -q --force --source fdrec --rate 2MB --chunk 1M $D0 >/tmp/r.out 2>&1 &
	p=$!
	sleep 2
	echo 1 >$SYS/inject_dma_error
	wait $p
	rc=$?
	grep -q "DMA error" /tmp/r.out && [ $rc = 1 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-dma-error: $b bytes kept, driver dma_errors $(cat $SYS/dma_errors)"
	nvtape verify -q $D0 >/tmp/v.out
	[ "$(field bytes </tmp/v.out)" = "$b" ] && [ "$(field corrupt </tmp/v.out)" = 0 ] &&
		[ "$(field gaps </tmp/v.out)" = 0 ] || { cat /tmp/v.out; return 1; }
}
check fdrec-dma-error fdrec_dma_error
# a second opener is refused with a message that says so
fdrec_busy() {
	exec 3</dev/fdrec0 || return 1
	nvtape record -q --force --source fdrec --rate 2MB --duration 1 $D0 >/tmp/r.out 2>&1
	rc=$?
	exec 3<&-
	[ $rc = 1 ] && grep -q "in use" /tmp/r.out || { echo "exit $rc"; cat /tmp/r.out; return 1; }
}
check fdrec-busy fdrec_busy
# play --sink fdrec: the device's checker takes every beat at its sink rate (1 MB/s, faster
# than nvtape feeds it: clean); then at 50 MB/s fed at 2 MB/s it runs dry: underflows, exit 2
fdrec_play() { # fdrec_play SINK_RATE PLAY_ARGS EXPECTED_EXIT
	echo "$1" >$SYS/chk_rate_bps || return 1
	nvtape play $2 --sink fdrec $D1 >/tmp/p.out 2>&1
	rc=$?
	u=$(field underflows </tmp/p.out)
	echo "NVT-INFO fdrec-play at $1 B/s: exit $rc, beats $(field beats </tmp/p.out) (device $(cat $SYS/chk_beats)), corrupt $(field corrupt </tmp/p.out), gaps $(field gaps </tmp/p.out), underflows $u (device $(cat $SYS/chk_underflows))"
	[ $rc = "$3" ] || { cat /tmp/p.out; return 1; }
	[ "$(field beats </tmp/p.out)" = $((B1 / 16)) ] && [ "$(field corrupt </tmp/p.out)" = 0 ] &&
		[ "$(field gaps </tmp/p.out)" = 0 ] && [ "$u" = "$(cat $SYS/chk_underflows)" ] || return 1
	if [ "$3" = 0 ]; then [ "$u" = 0 ]; else [ "$u" -gt 0 ]; fi
}
nvtape record -q --force --rate 2MB --duration 2 $D1 >/tmp/r1.out
B1=$(field bytes </tmp/r1.out)
check fdrec-play-clean fdrec_play 1000000 "" 0
check fdrec-play-underflow fdrec_play 50000000 "--rate 2MB" 2
rmmod fdrec_emu
