# The nvme engine: nvtape's own NVMe Write commands through io_uring passthrough on
# /dev/ng0n1; the recording is read back through the block layer (verify, play), so both paths
# must agree byte for byte.
. /suites/lib.sh
reset_drives
nvme_passthrough() {
	nvtape record -q --json --force --engine nvme --rate 200MB --duration 2 $D0 >/tmp/n.json || { cat /tmp/n.json; return 1; }
	b=$(sed -n 's/.*"bytes":\([0-9]*\),.*/\1/p' /tmp/n.json)
	echo "NVT-INFO nvme engine: $b bytes; $(sed -n 's/.*"engine":"\([^"]*\)".*/\1/p' /tmp/n.json)"
	nvtape verify -q $D0 >/tmp/v.out || { cat /tmp/v.out; return 1; }
	[ "$(field bytes </tmp/v.out)" = "$b" ] || return 1
	nvtape play -q --rate 400MB $D0 >/dev/null
}
check nvme-passthrough-record nvme_passthrough
