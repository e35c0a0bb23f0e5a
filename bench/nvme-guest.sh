# SPDX-License-Identifier: MIT
# Guest side of bench/nvme (runs inside the QEMU guest of tests/vm/run): NVMe passthrough
# (nvtape's nvme engine) against nvtape's block engine and fio's io_uring_cmd engine, same
# command size and queue depth, alternating order each round. Prints one NVT-BENCH line per
# run: NAME DIR ROUND MBPS CPU_S IO_CPU_S BYTES (CPU_S: the whole process; IO_CPU_S: nvtape's
# I/O thread, fio's whole job). The block engine runs twice: with the same I/O size and queue
# depth, and with its defaults (8 MiB I/Os that the kernel splits, 8 in flight).
. /suites/lib.sh
reset_drives
set -- $(cat /suites/bench.args)
rounds=${1:-5}
size_m=${2:-1024}
# the command size nvtape's nvme engine uses on one namespace: what the kernel and the drive
# accept (max_hw_sectors_kb from MDTS, max_segments pages); everyone gets the same
hw=$(cat /sys/block/nvme0n1/queue/max_hw_sectors_kb)
segs=$(( $(cat /sys/block/nvme0n1/queue/max_segments) * 4 ))
bs_k=$(( hw < segs ? hw : segs ))
qd=32
val() { sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }
# fio's JSON: the first VALUE of KEY at the given nesting
fio_num() { grep -o "\"$1\" : [0-9.]*" | head -n 1 | sed 's/.* : //'; }
run_fio() { # run_fio write|read ROUND
	fio --name=pt --ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --rw=$1 \
		--bs=${bs_k}k --iodepth=$qd --fixedbufs=1 --registerfiles=1 --offset=2g --size=${size_m}m \
		--output-format=json >/tmp/fio.json 2>/tmp/fio.err || { cat /tmp/fio.err; return 1; }
	sect=$(sed -n "/\"$1\" : {/,/}/p" /tmp/fio.json)
	bw=$(echo "$sect" | fio_num bw_bytes)
	rt=$(fio_num job_runtime </tmp/fio.json)
	usr=$(fio_num usr_cpu </tmp/fio.json)
	sys=$(fio_num sys_cpu </tmp/fio.json)
	cpu=$(awk -v u="$usr" -v s="$sys" -v t="$rt" 'BEGIN { printf "%.4f", (u + s) / 100 * t / 1000 }')
	echo "NVT-BENCH fio-io_uring_cmd $1 $2 $(awk -v b="$bw" 'BEGIN { printf "%.1f", b / 1e6 }') $cpu $cpu $((size_m << 20))"
}
run_rec() { # run_rec NAME ROUND ENGINE-ARGS...
	name=$1 r=$2
	shift 2
	nvtape record -q --force --rate max --size ${size_m}M "$@" $D0 >/tmp/r.out 2>/tmp/r.err || { cat /tmp/r.err; return 1; }
	echo "NVT-BENCH $name write $r $(val mbps </tmp/r.out) $(val proc_cpu_s </tmp/r.out) $(val io_cpu_s </tmp/r.out) $(val bytes </tmp/r.out)"
}
run_play() { # run_play NAME ROUND ENGINE-ARGS...
	name=$1 r=$2
	shift 2
	nvtape play -q --sink null --rate max "$@" $D0 >/tmp/p.out 2>/tmp/p.err || { cat /tmp/p.err; return 1; }
	rc=$(val read_cpu_s </tmp/p.out)
	sc=$(val sink_cpu_s </tmp/p.out)
	echo "NVT-BENCH $name read $r $(val read_mbps </tmp/p.out) $(awk -v a="$rc" -v b="$sc" 'BEGIN { printf "%.4f", a + b }') $rc $(val bytes </tmp/p.out)"
}
nvme() { "$1" nvtape-nvme "$2" --engine nvme --qd $qd; }
block() { "$1" nvtape-block "$2" --engine file --chunk ${bs_k}K --chunks 64 --qd $qd; }
block8() { "$1" nvtape-block-8M "$2" --engine file; }
echo "NVT-BENCH-CONF $bs_k $qd"
echo "NVT-INFO bench: $rounds rounds of ${size_m} MiB, commands ${bs_k} KiB, qd $qd, /dev/ng0n1 ($(cat /sys/block/nvme0n1/queue/max_hw_sectors_kb) KiB max_hw_sectors, $(cat /sys/block/nvme0n1/queue/max_segments) segments)"
for r in $(seq $rounds); do
	if [ $((r % 2)) = 1 ]; then order="nvme block block8 fio"; else order="fio block8 block nvme"; fi
	for w in $order; do
		case $w in
		fio) run_fio write $r ;;
		*) $w run_rec $r ;;
		esac
	done
	for w in $order; do
		case $w in
		fio) run_fio read $r ;;
		*) $w run_play $r ;;
		esac
	done
done
