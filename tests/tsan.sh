#!/bin/bash
# SPDX-License-Identifier: MIT
# ThreadSanitizer over the threaded paths: the library, the CLI and the examples built with
# -fsanitize=thread, then the ring and push-API unit tests, the end-to-end tests of recording
# with drops (and verify), playback with underflows, Ctrl-C and SIGTERM, the storage and the
# input watchdogs, the examples' push and pull APIs, the stdin and dev sources, counter checks
# and recover (the e2e scripts themselves, which meson points at this build's nvtape), and small
# bench and two-target speedtest runs with a Ctrl-C of bench and play. Any ThreadSanitizer report
# fails it, whether or not the test around it noticed. Root runs the loop-device tests (else
# skipped).
# NVT_TSAN_DIR: the build directory (default build-tsan).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
b=${NVT_TSAN_DIR:-build-tsan}
t_start=$(date +%s)

if [ -f "$b/build.ninja" ]; then
	meson configure "$b" -Db_sanitize=thread -Dbuildtype=debug -Dwerror=true >/dev/null
else
	meson setup "$b" -Db_sanitize=thread -Dbuildtype=debug -Dwerror=true >"$b.setup.log" 2>&1 ||
		{ cat "$b.setup.log"; exit 1; }
	rm -f "$b.setup.log"
fi
ninja -C "$b" >"$b/tsan-build.log" 2>&1 || { tail -40 "$b/tsan-build.log"; exit 1; }

log=$top/$b/tsan-logs
work=$top/$b/tsan-work
rm -rf "$log" "$work"
mkdir -p "$log" "$work"
# every report goes to a file per process ($log/tsan.PID), and the process exits 66 at once
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 log_path=$log/tsan"

# The TSan runtime wants its fixed memory layout; with more ASLR bits than it knows
# (vm.mmap_rnd_bits above 28 on newer kernels) it stops with "unexpected memory mapping".
# Then everything runs without address randomization (inherited by every child), which
# leaves the system setting alone.
if ! "$b/nvtape" --version >/dev/null 2>"$work/probe.err"; then
	if [ -z "${NVT_TSAN_NORAND:-}" ] && grep -q "unexpected memory mapping" "$log"/tsan.* "$work/probe.err" 2>/dev/null; then
		echo "tsan: the TSan runtime needs address randomization off here: setarch -R"
		NVT_TSAN_NORAND=1 exec setarch "$(uname -m)" -R "$0" "$@"
	fi
	cat "$work/probe.err" "$log"/tsan.* 2>/dev/null
	echo "FAILED: the ThreadSanitizer build does not run"
	exit 1
fi

failed=0
step() { # step NAME CMD...
	if "${@:2}"; then echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi
}
# expect "WANT..." CMD...: CMD's exit code is one of WANT (66, a TSan report, never is)
expect() {
	local want=$1 rc
	shift
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	case " $want " in *" $rc "*) return 0 ;; esac
	echo "--- stdout"; tail -20 "$work/out"; echo "--- stderr"; tail -20 "$work/err"
	echo "$* -> exit $rc, want one of: $want"
	return 1
}
# interrupt WANT AFTER CMD...: Ctrl-C (SIGINT) after AFTER seconds, exit code WANT
interrupt() {
	local want=$1 after=$2 pid rc
	shift 2
	"$@" >"$work/out" 2>"$work/err" &
	pid=$!
	sleep "$after"
	kill -INT $pid
	wait $pid
	rc=$?
	[ "$rc" = "$want" ] && return 0
	echo "--- stderr"; tail -20 "$work/err"
	echo "$* (SIGINT after $after s) -> exit $rc, want $want"
	return 1
}

N=$top/$b/nvtape
# the ring in hugepages, as tests/run has it: its fallback, ordinary memory pre-faulted with a
# memset, takes TSan seconds per 256 MiB (the shadow of every byte), past the e2e tests' timing
"$top/scripts/hugepages" 256
# the unit tests minus the one that measures the source's rate to 0.5 %, which an
# instrumented build cannot hold (the other unit tests have no threads but cost nothing)
step "unit tests (ring, push API)" env NVT_TEST_SKIP=test_tpg_rate_and_pacing \
	meson test -C "$b" --suite unit --num-processes 1 --print-errorlogs
step "e2e: drops, play_drives, signal, stall, stdin, devsrc, counter, api, crash" \
	meson test -C "$b" --suite e2e drops play_drives signal stall stdin devsrc counter api crash \
	--num-processes 1 --print-errorlogs --timeout-multiplier 2
# a slow stream: every checkpoint writes the part of the chunk the source is still filling
step "record, a slow stream (checkpoints write the chunk being filled)" \
	expect 0 "$N" record -q --rate 20KB --duration 3.5 "$work/slow.nvt"
# bench: a rate is found (0) or not even the lowest passed (2: the instrumented checker is
# slow); both ran every thread to its end
step "bench record" expect "0 2" "$N" bench record -q --size 32M --runs 1 --chunk 1M --chunks 8 \
	--tolerance 25% "$work/b.nvt"
step "bench play" expect "0 2" "$N" bench play -q --size 32M --runs 1 --chunk 1M --chunks 8 \
	--tolerance 25% "$work/b.nvt"
step "bench record, Ctrl-C" interrupt 1 2 "$N" bench record -q --size 1G --runs 1 --chunk 1M \
	--chunks 8 "$work/b.nvt"
step "speedtest, two targets" expect 0 "$N" speedtest -q --size 64M --chunk 1M --chunks 8 \
	"$work/s1.nvt" "$work/s2.nvt"
step "play, Ctrl-C" interrupt 1 1.5 "$N" play --rate 20MB --chunk 1M "$work/s1.nvt"

reports=$(find "$log" -type f | wc -l)
if [ "$reports" != 0 ]; then
	cat "$log"/*
	echo "FAILED: ThreadSanitizer reported in $reports processes (reports above)"
	failed=$((failed + 1))
fi
echo "tsan: $failed failed, $reports processes with ThreadSanitizer reports, $(($(date +%s) - t_start)) s"
[ "$failed" = 0 ] && rm -rf "$work"
[ "$failed" = 0 ]
