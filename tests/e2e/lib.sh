# SPDX-License-Identifier: MIT
# Helpers for the end-to-end tests: temp dirs, loop devices, blkio throttling, checks.
# Every test cleans up only what it created.
set -u
NVT=${NVTAPE:?NVTAPE must point at the nvtape binary}
T=$(mktemp -d -p "${NVT_TEST_DIR:-$PWD}" nvt-e2e.XXXXXX)
LOOPS=()
MOUNTS=()
IMAGES=()
CGROUPS=()

cleanup() {
	local m i c l
	# what the test started and did not end (a check failed while a recording ran): ended,
	# or it would run on after the test
	pkill -9 -P $$ 2>/dev/null
	for i in $(seq 20); do pgrep -P $$ >/dev/null || break; sleep 0.1; done
	for c in "${CGROUPS[@]+"${CGROUPS[@]}"}"; do # lift throttles, end what we left in them
		while read -r l _; do [ -n "$l" ] && echo "$l 0" >"$c/blkio.throttle.write_bps_device"; done <"$c/blkio.throttle.write_bps_device"
		for i in $(cat "$c/cgroup.procs"); do kill -9 "$i" 2>/dev/null; done
	done
	for m in "${MOUNTS[@]+"${MOUNTS[@]}"}"; do
		# a write still in flight (stall tests) keeps the mount busy for a few seconds
		for i in $(seq 40); do umount "$m" 2>/dev/null && break; sleep 0.25; done
	done
	for l in "${LOOPS[@]+"${LOOPS[@]}"}"; do losetup -d "$l" 2>/dev/null; done
	for i in "${IMAGES[@]+"${IMAGES[@]}"}"; do rm -f "$i"; done
	for c in "${CGROUPS[@]+"${CGROUPS[@]}"}"; do rmdir "$c" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}
ok() { echo "ok: $*"; }

need_root() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, cgroups)"; exit 77; }
}

# run CMD..., capture stdout in $T/out and stderr in $T/err, require exit code WANT
expect_rc() {
	local want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$T/out"; echo "--- stderr"; cat "$T/err"
		fail "$* -> exit $rc, want $want"
	fi
}

# value of KEY in the last RESULT line of $T/out
field() {
	grep '^RESULT' "$T/out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# value of a header field from nvtape info --json
# wait_header FILE GEN: until the recording being written to FILE has written header
# generation GEN (1: it started; 1 + n: n checkpoints), at most 60 s; a busy machine starts
# a recorder late, so tests wait for its progress instead of sleeping a fixed time
wait_header() {
	local i g
	for i in $(seq 600); do
		g=$("$NVT" info --json "$1" 2>/dev/null | grep -o '"generation":[0-9]*' | cut -d: -f2)
		[ -n "$g" ] && [ "$g" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "$1: header generation $2 not written within 60 s"
}

# rec_end FILE... (info's arguments): where a complete recording ends: its index's end, or
# header + data without one
rec_end() {
	"$NVT" info --json "$@" | python3 -c "
import json, sys
h = json.load(sys.stdin)['header']
print(h['index_offset'] + h['index_bytes'] if h['index_bytes'] else 4096 + h['data_bytes'])"
}

hdr() {
	"$NVT" info --json "$2" | python3 -c "import json,sys; print(json.load(sys.stdin)['header']['$1'])"
}

# make_loop SIZE FS -> sets DEV and MNT; image in /dev/shm (steady, O_DIRECT capable)
make_loop() {
	local img dev mnt
	img=$(mktemp -p /dev/shm nvt-e2e.XXXXXX.img)
	IMAGES+=("$img")
	truncate -s "$1" "$img"
	dev=$(losetup -f --show "$img") || fail "losetup"
	LOOPS+=("$dev")
	case "$2" in
	xfs) mkfs.xfs -q -f "$dev" >/dev/null || fail "mkfs.xfs" ;;
	ext4) mkfs.ext4 -q -F "$dev" >/dev/null || fail "mkfs.ext4" ;;
	none) DEV=$dev; MNT=; return ;;
	esac
	mnt="$T/mnt.$(basename "$dev")"
	mkdir -p "$mnt"
	mount "$dev" "$mnt" || fail "mount $dev"
	MOUNTS=("$mnt" "${MOUNTS[@]+"${MOUNTS[@]}"}")
	DEV=$dev
	MNT=$mnt
}

# make_cgroup WRITE_BPS DEV -> sets CG: a blkio cgroup limiting writes to DEV
make_cgroup() {
	CG=/sys/fs/cgroup/blkio/nvt-e2e.$$.$RANDOM
	mkdir "$CG" || fail "no blkio cgroup (cgroup v1 blkio controller needed)"
	CGROUPS+=("$CG")
	set_limit "$CG" "$1" "$2"
}
set_limit() { # set_limit CG WRITE_BPS DEV
	echo "$(lsblk -dno MAJ:MIN "$3" | tr -d ' ') $2" >"$1/blkio.throttle.write_bps_device"
}
in_cgroup() { # in_cgroup CG CMD...
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$@"
}
# throttled WRITE_BPS DEV CMD... : run CMD with its writes to DEV limited
throttled() {
	make_cgroup "$1" "$2"
	shift 2
	in_cgroup "$CG" "$@"
}
