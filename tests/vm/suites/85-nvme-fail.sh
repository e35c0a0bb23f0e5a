# SPDX-License-Identifier: MIT
# The nvme engine when a drive fails it: a drive that stops responding (QEMU throttles it to
# 512 KB/s, so a command takes far longer than --timeout) and the end of a namespace.
. /suites/lib.sh
reset_drives
nvme_hung() {
	[ -b "$DH" ] || { echo "no throttled drive"; return 1; }
	hung_ng=/dev/ng$(basename $DH | sed 's/^nvme//')
	t0=$(date +%s)
	nvtape record -q --force --engine nvme --chunk 1M --rate 100MB --duration 30 --timeout 2 $D0 $DH >/tmp/h.out 2>/tmp/h.err
	rc=$?
	t1=$(date +%s)
	kept=$(field bytes </tmp/h.out)
	echo "NVT-INFO hung drive: exit $rc after $((t1 - t0)) s, kept $kept bytes; $(grep -o 'failed on [^:]*' /tmp/h.err | head -n 1)"
	[ $rc = 1 ] || { cat /tmp/h.err /tmp/h.out; return 1; }
	grep -q "failed on $hung_ng (QEMU NVMe Ctrl, serial nvtapehung: stopped responding" /tmp/h.err || { cat /tmp/h.err; return 1; }
	[ $((t1 - t0)) -le 12 ] || return 1
	# the throttled drive finishes its queue; then what was kept must verify
	sleep 20
	nvtape verify -q $D0 $DH >/tmp/v.out
	tail -n 3 /tmp/v.out
	[ "$(field complete </tmp/v.out)" = 1 ] && [ "$(field corrupt </tmp/v.out)" = 0 ] &&
		[ "$(field gaps </tmp/v.out)" = 0 ] && [ "$(field bytes </tmp/v.out)" = "$kept" ] &&
		[ "$kept" -gt 0 ]
}
check nvme-drive-stops-responding nvme_hung
# open-ended recording on a raw namespace: it ends at the namespace's end, kept data verifies
nvme_end() {
	nvtape record -q --force --engine nvme --chunk 4M $D1 >/tmp/e.out 2>/tmp/e.err
	rc=$?
	echo "NVT-INFO end of namespace: exit $rc, $(field bytes </tmp/e.out) bytes, reason $(field stop_reason </tmp/e.out)"
	[ $rc = 1 ] && [ "$(field stop_reason </tmp/e.out)" = no-space ] || { cat /tmp/e.err /tmp/e.out; return 1; }
	# every written beat is there; the beats the source had captured beyond the end are
	# counted as dropped after the last beat (exit 2), as on the block path
	nvtape verify -q --engine nvme $D1 >/tmp/v.out
	[ $? = 2 ] && [ "$(field corrupt </tmp/v.out)" = 0 ] && [ "$(field gaps </tmp/v.out)" = 0 ] &&
		[ "$(field drops_match </tmp/v.out)" = 1 ] &&
		[ "$(field bytes </tmp/v.out)" = "$(field bytes </tmp/e.out)" ] || { cat /tmp/v.out; return 1; }
}
check nvme-end-of-namespace nvme_end
