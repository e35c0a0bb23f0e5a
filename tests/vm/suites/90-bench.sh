# SPDX-License-Identifier: MIT
# bench and speedtest on NVMe: speedtest over both drives at once shows each controller;
# bench record finds a rate through the passthrough engine and through a stripe.
. /suites/lib.sh
reset_drives
speedtest_nvme() {
	nvtape speedtest --force --size 256M $D0 $D1 >/tmp/s.out 2>/tmp/s.err || { cat /tmp/s.err /tmp/s.out; return 1; }
	echo "NVT-INFO speedtest: $(grep '^/dev/nvme0n1' /tmp/s.out | tr -s ' ')"
	echo "NVT-INFO speedtest: $(grep '^all at once' /tmp/s.out | tr -s ' ')"
	grep -q "^/dev/nvme0n1 .*every beat ok *nvme0" /tmp/s.out && grep -q "^/dev/nvme1n1 .*every beat ok *nvme1" /tmp/s.out
}
check speedtest-two-nvme-drives speedtest_nvme
bench_nvme() {
	nvtape bench record --force --engine nvme --size 256M --runs 1 --tolerance 10% $D0 >/tmp/b.out 2>/tmp/b.err || { cat /tmp/b.err /tmp/b.out; return 1; }
	echo "NVT-INFO bench --engine nvme: best $(field best_bps </tmp/b.out) B/s, unthrottled $(field unthrottled_mbps </tmp/b.out) MB/s"
	[ "$(field best_bps </tmp/b.out)" -gt 0 ] && grep -q "nvme engine" /tmp/b.out
}
check bench-record-nvme-engine bench_nvme
bench_stripe() {
	nvtape bench record --force --size 256M --runs 1 --tolerance 10% --no-sweep $D0 $D1 >/tmp/b.out 2>/tmp/b.err || { cat /tmp/b.err /tmp/b.out; return 1; }
	echo "NVT-INFO bench on a stripe: unthrottled $(field unthrottled_mbps </tmp/b.out) MB/s"
	grep -q "stripe" /tmp/b.out
}
check bench-record-stripe bench_stripe
