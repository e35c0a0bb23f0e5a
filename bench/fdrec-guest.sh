# SPDX-License-Identifier: MIT
# Guest side of bench/fdrec (runs inside the QEMU guest of tests/vm/run): the emulated FPGA Drive
# Recorder driver (tests/vm/fdrec_emu) read by fdrec_ceiling (wait for a filled buffer, hand it
# back: the ceiling) and by nvtape's fdrec source into the null engine and onto an NVMe drive,
# (with and without chunk checksums) at each programmed rate, alternating order each round. One NVT-BENCH line per run:
# NAME RATE_BPS ROUND MBPS DROPS CPU_S IO_CPU_S BYTES (CPU_S: the whole process; IO_CPU_S:
# nvtape's I/O thread, the ceiling's whole loop).
. /suites/lib.sh
reset_drives
set -- $(cat /suites/bench.args)
rounds=${1:-3}
secs=${2:-4}
shift 2
rates=${*:-50000000 200000000 500000000}
SYS=/sys/class/misc/fdrec0
echo 96 >/proc/sys/vm/nr_hugepages # the driver takes 2 MB-aligned, contiguous buffers
insmod /modules/fdrec_emu.ko fifo_depth=262144 || exit 1
for i in $(seq 50); do [ -c /dev/fdrec0 ] && break; sleep 0.1; done
val() { sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }
ceiling() { # ceiling RATE ROUND
	fdrec_ceiling "$secs" 2097152 16 >/tmp/c.out || { cat /tmp/c.out; return 1; }
	echo "NVT-BENCH ceiling $1 $2 $(val mbps </tmp/c.out) $(val drops </tmp/c.out) $(val cpu_s </tmp/c.out) $(val cpu_s </tmp/c.out) $(val bytes </tmp/c.out)"
}
rec() { # rec NAME RATE ROUND ARGS...
	name=$1 rate=$2 r=$3
	shift 3
	nvtape record -q --force --source fdrec --duration "$secs" --chunk 2M --chunks 16 "$@" >/tmp/r.out 2>/tmp/r.err
	rc=$?
	[ $rc -le 2 ] || { cat /tmp/r.err; return 1; }
	echo "NVT-BENCH $name $rate $r $(val mbps </tmp/r.out) $(val drops </tmp/r.out) $(val proc_cpu_s </tmp/r.out) $(val io_cpu_s </tmp/r.out) $(val bytes </tmp/r.out)"
}
echo "NVT-INFO bench/fdrec: $rounds rounds of $secs s at rates $rates B/s, 16 buffers of 2 MiB, FIFO 262144 beats (4 MiB)"
for r in $(seq $rounds); do
	for rate in $rates; do
		echo "$rate" >$SYS/rate_bps
		if [ $((r % 2)) = 1 ]; then order="ceiling null nosum nvme"; else order="nvme nosum null ceiling"; fi
		for w in $order; do
			case $w in
			ceiling) ceiling $rate $r ;;
			null) rec nvtape-null $rate $r --engine null --rate ${rate}B /tmp/null.nvt ;;
			nosum) rec nvtape-null-nosum $rate $r --engine null --checksum none --rate ${rate}B /tmp/null.nvt ;;
			nvme) rec nvtape-nvme0n1 $rate $r --rate ${rate}B $D0 ;;
			esac
		done
	done
done
rmmod fdrec_emu
echo 0 >/proc/sys/vm/nr_hugepages
