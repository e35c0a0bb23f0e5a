# SPDX-License-Identifier: MIT
# The FPGA Drive Recorder's driver, emulated by tests/vm/fdrec_emu with the driver's interface
# and semantics (API 1): every ioctl checked directly by fdrec_ioctl, the ceiling loop, then
# nvtape's fdrec source and sink on it (the generator starts at 0 at every START, STOP discards
# what was not collected, a close after a recording clears the driver's counters). The driver
# takes 2 MB-aligned buffers of 2 MB multiples that must be physically contiguous (at most 511
# DMA descriptors): the guest reserves hugepages for them, and nvtape records with 2 MiB chunks.
# (The driver has no read(): nvtape's dev: source is checked by tests/e2e/devsrc.sh.)
. /suites/lib.sh
reset_drives
SYS=/sys/class/misc/fdrec0
fdrec_load() {
	echo 192 >/proc/sys/vm/nr_hugepages
	hp=$(sed -n 's/^HugePages_Free: *//p' /proc/meminfo)
	echo "NVT-INFO fdrec: $hp free 2 MB hugepages"
	[ "$hp" -ge 160 ] || return 1
	insmod /modules/fdrec_emu.ko fifo_depth=65536 rate_bps=2000000 || return 1
	for i in $(seq 50); do [ -c /dev/fdrec0 ] && break; sleep 0.1; done
	[ -c /dev/fdrec0 ] && [ "$(cat $SYS/version)" = 1.1 ]
}
check fdrec-load fdrec_load
# every ioctl directly, with its error paths (a second opener, calls before registration,
# REGISTER_BUFS' limits, RELEASE of a buffer the driver owns, play before register...)
fdrec_ioctl_all() {
	fdrec_ioctl >/tmp/io.out 2>&1
	rc=$?
	echo "NVT-INFO fdrec-ioctl: $(grep -c '^ok ' /tmp/io.out) steps passed, $(grep -c '^FAIL ' /tmp/io.out) failed"
	[ $rc = 0 ] || { grep -v '^ok ' /tmp/io.out; return 1; }
}
check fdrec-ioctl fdrec_ioctl_all
# --source fdrec: nvtape's buffers registered with the driver, the test pattern at two rates
fdrec_clean() { # fdrec_clean RATE_BYTES
	nvtape record -q --force --source fdrec --rate "${1}B" --duration 2 --chunk 2M $D0 >/tmp/r.out ||
		{ cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-clean-$1: $b bytes, drops $(field drops </tmp/r.out), FIFO high-water $(field src_fifo_hwm </tmp/r.out) of $(field src_fifo_depth </tmp/r.out) beats"
	# 2 s of whole beats at the rate the driver programmed (rounded down from the one asked)
	want=$(($(cat $SYS/rate_bps) * 2 / 16 * 16))
	[ "$b" = "$want" ] && [ "$(field drops </tmp/r.out)" = 0 ] &&
		[ "$(field src_fifo_depth </tmp/r.out)" = 65536 ] || { echo "want $want bytes"; return 1; }
	# the generator started at 0 (the header's first_seq): verify checks every beat from it
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
		nvtape record -q --force --engine $eng --source fdrec --rate 5MB --duration 2 --chunk 2M \
			$D0 $D1 >/tmp/r.out || { cat /tmp/r.out; return 1; }
		b=$(field bytes </tmp/r.out)
		nvtape verify -q --engine $eng $D0 $D1 >/tmp/v.out || { cat /tmp/v.out; return 1; }
		echo "NVT-INFO fdrec-stripe ($eng engine): $b bytes over 2 drives, verify: $(field beats </tmp/v.out) beats, $(field gaps </tmp/v.out) gaps"
		[ "$b" = $(($(cat $SYS/rate_bps) * 2 / 16 * 16)) ] && [ "$(field beats </tmp/v.out)" = $((b / 16)) ] &&
			[ "$(field gaps </tmp/v.out)" = 0 ] || return 1
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
# generates (whole buffers, no drops, the sequence from first_seq 0 without a jump)
fdrec_ceiling_loop() {
	echo 5000000 >$SYS/rate_bps || return 1
	fdrec_ceiling 2 2097152 16 >/tmp/c.out || { cat /tmp/c.out; return 1; }
	echo "NVT-INFO fdrec-ceiling: $(grep ^RESULT /tmp/c.out)"
	b=$(field bytes </tmp/c.out)
	want=$(awk -v s="$(field seconds </tmp/c.out)" 'BEGIN { printf "%d", s * 5000000 }')
	[ "$(field drops </tmp/c.out)" = 0 ] && [ "$(field seq_errors </tmp/c.out)" = 0 ] &&
		[ "$(field first_seq </tmp/c.out)" = 0 ] && [ "$(field hugepages </tmp/c.out)" = 1 ] &&
		[ "$b" -le "$want" ] && [ "$b" -ge $((want - 2 * 2097152)) ]
}
check fdrec-ceiling fdrec_ceiling_loop
# forced overflow: the drive QEMU throttles to 512 KB/s, an 8 MB ring (the driver's buffers),
# 2 MB/s for 10 s: the ring fills, the driver's FIFO overflows; verify's gap beats are at most
# the drops nvtape took from the driver (the driver's count at the last buffer also holds beats
# dropped after it), and the index says the same
fdrec_overflow() {
	nvtape record -q --force --source fdrec --rate 2MB --duration 10 --chunk 2M --chunks 4 \
		--timeout 60 $DH >/tmp/r.out
	rc=$?
	[ $rc = 2 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	d=$(field drops </tmp/r.out)
	echo "NVT-INFO fdrec-overflow: $(field bytes </tmp/r.out) bytes, drops $d beats in $(field drop_events </tmp/r.out) events"
	[ "$d" -gt 0 ] || return 1
	nvtape verify -q $DH >/tmp/v.out
	[ $? = 2 ] || { cat /tmp/v.out; return 1; }
	echo "NVT-INFO fdrec-overflow: verify gap_beats $(field gap_beats </tmp/v.out) drop_count $(field drop_count </tmp/v.out) drops_match $(field drops_match </tmp/v.out)"
	[ "$(field gap_beats </tmp/v.out)" -gt 0 ] && [ "$(field gap_beats </tmp/v.out)" -le "$d" ] &&
		[ "$(field drop_count </tmp/v.out)" = "$d" ] &&
		[ "$(field drops_match </tmp/v.out)" = 1 ] && [ "$(field corrupt </tmp/v.out)" = 0 ]
}
check fdrec-overflow fdrec_overflow
# drops the device injects at a known point: exactly that many beats missing, found by verify
fdrec_injected_drops() {
	nvtape record -q --force --source fdrec --rate 2MB --duration 4 --chunk 2M $D0 >/tmp/r.out &
	p=$!
	sleep 1.5
	echo 5000 >$SYS/inject_drops
	wait $p
	rc=$?
	d=$(field drops </tmp/r.out)
	echo "NVT-INFO fdrec-injected-drops: exit $rc, $(field bytes </tmp/r.out) bytes, drops $d"
	[ $rc = 2 ] && [ "$d" = 5000 ] || { cat /tmp/r.out; return 1; }
	nvtape verify -q $D0 >/tmp/v.out
	[ $? = 2 ] && [ "$(field gap_beats </tmp/v.out)" = 5000 ] && [ "$(field gaps </tmp/v.out)" = 1 ] &&
		[ "$(field drops_match </tmp/v.out)" = 1 ] && [ "$(field corrupt </tmp/v.out)" = 0 ] ||
		{ cat /tmp/v.out; return 1; }
}
check fdrec-injected-drops fdrec_injected_drops
# Ctrl-C: every buffer nvtape took from the driver is in the recording, which verifies (the
# driver's STOP discards what was not collected: whole buffers only)
fdrec_sigint() {
	nvtape record -q --force --source fdrec --rate 2MB --chunk 2M $D0 >/tmp/r.out &
	p=$!
	sleep 4
	kill -INT $p
	wait $p
	rc=$?
	[ $rc = 0 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-sigint: $b bytes = $((b / 16)) beats"
	[ "$b" -gt 0 ] && [ $((b % 2097152)) = 0 ] && [ "$(field drops </tmp/r.out)" = 0 ] || return 1
	nvtape verify -q $D0 >/tmp/v.out && [ "$(field bytes </tmp/v.out)" = "$b" ] &&
		[ "$(field gaps </tmp/v.out)" = 0 ]
}
check fdrec-sigint fdrec_sigint
# the DMA error flag: the recording stops with the error reported (exit 1), what came before verifies
fdrec_dma_error() {
	nvtape record -q --force --source fdrec --rate 2MB --chunk 2M $D0 >/tmp/r.out 2>&1 &
	p=$!
	sleep 3
	echo 1 >$SYS/inject_dma_error
	wait $p
	rc=$?
	grep -q "DMA error" /tmp/r.out && [ $rc = 1 ] || { echo "exit $rc"; cat /tmp/r.out; return 1; }
	b=$(field bytes </tmp/r.out)
	echo "NVT-INFO fdrec-dma-error: $b bytes kept"
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
echo 0 >/proc/sys/vm/nr_hugepages
