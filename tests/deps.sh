#!/bin/bash
# SPDX-License-Identifier: MIT
# scripts/deps while another apt holds apt's locks (unattended-upgrades on a new machine): it
# says who holds them, waits, and installs once they are free. Runs against a private apt
# (APT_CONFIG: its own dpkg status copy, lists, cache, no sources) and a dpkg-query view
# (DPKG_ADMINDIR) in which help2man is missing, so nothing on the machine changes and no
# network is needed: apt-get update has no source to fetch, and the install finds help2man
# already in apt's status. Needs root (scripts/deps installs only as root).
# Usage: deps.sh [SCRIPTS-DIR]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
deps=${1:-$top/scripts}/deps
[ "$(id -u)" = 0 ] || { echo "SKIP: scripts/deps installs only as root"; exit 77; }
command -v lslocks >/dev/null || { echo "SKIP: no lslocks (util-linux)"; exit 77; }
py=$(command -v python3) || { echo "SKIP: no python3 to hold a lock"; exit 77; }
dpkg-query -W -f='${Status}' help2man 2>/dev/null | grep -q "install ok installed" ||
	{ echo "SKIP: help2man is not installed (the test hides an installed package)"; exit 77; }
tmp=$(mktemp -d /tmp/nvtape-deps-test.XXXXXX)
holders=()
# shellcheck disable=SC2154 # p is the trap's own loop variable
trap 'for p in "${holders[@]+"${holders[@]}"}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	echo "--- scripts/deps stderr"
	cat "$tmp/err"
	exit 1
}

mkdir -p "$tmp/apt/dpkg/updates" "$tmp/apt/state/lists/partial" "$tmp/apt/cache/archives/partial" \
	"$tmp/apt/parts" "$tmp/apt/log" "$tmp/query/updates" "$tmp/apt/sources.list.d"
cp /var/lib/dpkg/status "$tmp/apt/dpkg/status"
: >"$tmp/apt/sources.list"
cat >"$tmp/apt.conf" <<EOF
Dir::Etc::Parts "$tmp/apt/parts/";
Dir::Etc::Main "/dev/null";
Dir::Etc::sourcelist "$tmp/apt/sources.list";
Dir::Etc::sourceparts "$tmp/apt/sources.list.d/";
Dir::State "$tmp/apt/state/";
Dir::State::lists "lists/";
Dir::State::status "$tmp/apt/dpkg/status";
Dir::Cache "$tmp/apt/cache/";
Dir::Log "$tmp/apt/log/";
EOF
# dpkg-query's view: the status without help2man's stanza
awk -v RS= -v ORS='\n\n' '!/^Package: help2man\n/' /var/lib/dpkg/status >"$tmp/query/status"
export APT_CONFIG=$tmp/apt.conf DPKG_ADMINDIR=$tmp/query
dpkg-query -W -f='${Status}' help2man 2>/dev/null | grep -q "install ok installed" &&
	fail "the private dpkg view still has help2man"
frontend=$tmp/apt/dpkg/lock-frontend
lists=$tmp/apt/state/lists/lock

# hold LOCK for SECONDS as apt does (a POSIX write lock); prints the holder's PID when held
hold() {
	"$py" - "$1" "$2" <<'PY' &
import fcntl, os, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX)
print(os.getpid(), flush=True)
time.sleep(float(sys.argv[2]))
PY
	holders+=($!)
}
wait_held() { # wait_held FILE: until lslocks shows it locked
	for _ in $(seq 100); do
		lslocks -n -r -o PATH | grep -qx "$1" && return 0
		sleep 0.05
	done
	fail "the lock on $1 was never taken"
}

passed=0
# 1. the lists' lock held 3 s (apt-get update does not wait for it by itself), then the
# frontend lock 3 s more: scripts/deps names the holder, waits, and succeeds
hold "$lists" 3 >"$tmp/pid1"
hold "$frontend" 6 >"$tmp/pid2"
wait_held "$lists"
wait_held "$frontend"
t0=$(date +%s%N)
"$deps" build >"$tmp/out" 2>"$tmp/err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc = 0 ] || fail "scripts/deps build exited $rc with apt's lock held for 6 s"
grep -q "nvtape: installing help2man" "$tmp/err" || fail "help2man was not missing"
grep -q "nvtape: waiting for apt's lock: PID $(cat "$tmp/pid1") (python3) holds $lists" "$tmp/err" ||
	grep -q "nvtape: waiting for apt's lock: PID $(cat "$tmp/pid2") (python3) holds $frontend" "$tmp/err" ||
	fail "no message naming the holder while waiting"
grep -q "nvtape: apt's lock is free" "$tmp/err" || fail "no message when the lock came free"
[ "$ms" -ge 5500 ] || fail "scripts/deps returned after $ms ms, before the lock holder let go"
passed=$((passed + 1))
echo "ok: scripts/deps waited $ms ms for apt's locks, naming the holder, then installed"

# 2. nothing held: no waiting, no message
"$deps" build >"$tmp/out" 2>"$tmp/err" || fail "scripts/deps build with no lock held"
grep -q "waiting" "$tmp/err" && fail "a wait message without a lock held"
passed=$((passed + 1))
echo "ok: no lock held: no wait"
echo "deps: $passed passed"
