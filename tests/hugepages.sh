#!/bin/bash
# SPDX-License-Identifier: MIT
# The hugepages nvtape's scripts reserve are never left behind unsaid: scripts/hugepages N says
# how many it reserved and the command that gives them back (which does), --restore gives them
# back only when nobody changed the count since; scripts/demo (a small run) ends saying how many
# stay reserved and how, and its command gives them back. The count is restored at the end.
# Needs root (vm.nr_hugepages). Usage: hugepages.sh [SOURCE-DIR]
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ "$(id -u)" = 0 ] || { echo "SKIP: reserving hugepages needs root"; exit 77; }
nr=/proc/sys/vm/nr_hugepages
orig=$(cat "$nr")
tmp=$(mktemp -d "${NVT_TEST_DIR:-/tmp}/nvtape-hugepages.XXXXXX")
trap 'echo "$orig" >"$nr"; rm -rf "$tmp"' EXIT
free_pages() { awk '/HugePages_Free/ {print $2}' /proc/meminfo; }
fail() {
	echo "FAIL: $*"
	exit 1
}
# the command a message gives to hand the pages back: "give them back with: CMD"
give_back() { sed -n 's/.*give them back with: \(echo [0-9]* > \/proc\/sys\/vm\/nr_hugepages\)$/\1/p' "$1" | tail -n 1; }
passed=0

# 1. four more than are free: reserved, said, and the command said gives them back
before=$(cat "$nr")
want=$(($(free_pages) + 4))
"$top/scripts/hugepages" "$want" 2>"$tmp/err" || fail "scripts/hugepages $want"
now=$(cat "$nr")
[ "$now" -gt "$before" ] || { echo "SKIP: the kernel reserved no hugepage (memory too fragmented)"; exit 77; }
grep -q "nvtape: reserved $((now - before)) hugepages of 2 MiB ($((2 * (now - before))) MiB of RAM) for nvtape's ring: vm.nr_hugepages $before -> $now" "$tmp/err" ||
	{ cat "$tmp/err"; fail "scripts/hugepages did not say what it reserved"; }
cmd=$(give_back "$tmp/err")
[ "$cmd" = "echo $before > $nr" ] || { cat "$tmp/err"; fail "no command to give them back"; }
bash -c "$cmd"
[ "$(cat "$nr")" = "$before" ] || fail "'$cmd' did not give them back"
passed=$((passed + 1))
echo "ok: scripts/hugepages $want reserved $((now - before)), said so, and its command gave them back"

# 2. enough free already: nothing reserved, nothing said
"$top/scripts/hugepages" 0 2>"$tmp/err"
[ "$(cat "$nr")" = "$before" ] && ! [ -s "$tmp/err" ] || fail "scripts/hugepages 0 changed or said something"
passed=$((passed + 1))
echo "ok: nothing to reserve: nothing changed, nothing said"

# 3. --restore BEFORE SET (tests/run at its end): back to BEFORE while the count is SET; a count
# someone changed since is left alone, and said
"$top/scripts/hugepages" "$want" 2>/dev/null
set_to=$(cat "$nr")
"$top/scripts/hugepages" --restore "$before" "$set_to" 2>"$tmp/err"
[ "$(cat "$nr")" = "$before" ] && grep -q "gave back $((set_to - before)) hugepages" "$tmp/err" ||
	fail "--restore $before $set_to"
echo $((before + 2)) >"$nr"
"$top/scripts/hugepages" --restore "$before" "$set_to" 2>"$tmp/err"
[ "$(cat "$nr")" = $((before + 2)) ] && grep -q "left alone" "$tmp/err" ||
	fail "--restore lowered a count it had not set"
echo "$before" >"$nr"
"$top/scripts/hugepages" --restore x 1 2>/dev/null
[ $? = 64 ] || fail "--restore x: not a usage error"
passed=$((passed + 1))
echo "ok: --restore gives back what was set, leaves a count changed since alone"

# 4. the demo, 64 MiB, in a directory of its own: it ends saying what stays reserved and how to
# give it back (when it reserved any), and that command works
if [ -f "$top/build/build.ninja" ] && [ -x "$top/build/nvtape" ]; then
	(cd "$tmp" && "$top/scripts/demo" 64M) >"$tmp/demo.out" 2>&1 || { tail -30 "$tmp/demo.out"; fail "scripts/demo 64M"; }
	after=$(cat "$nr")
	if [ "$after" -gt "$before" ]; then
		grep -q "^nvtape demo: $((after - before)) hugepages of 2 MiB ($((2 * (after - before))) MiB of RAM) stay reserved for nvtape's ring (vm.nr_hugepages $before -> $after)" "$tmp/demo.out" ||
			{ tail -5 "$tmp/demo.out"; fail "the demo did not say what stays reserved"; }
		cmd=$(give_back "$tmp/demo.out")
		[ -n "$cmd" ] || fail "the demo gave no command to give the pages back"
		bash -c "$cmd"
		[ "$(cat "$nr")" = "$before" ] || fail "the demo's '$cmd' did not give them back"
		echo "ok: the demo said it leaves $((after - before)) hugepages reserved; its command gave them back"
	else
		grep -q "stay reserved" "$tmp/demo.out" && fail "the demo reserved nothing but says so"
		echo "ok: the demo found its hugepages free and says nothing of them"
	fi
	passed=$((passed + 1))
else
	echo "skipped: the demo needs the build in $top/build"
fi
echo "hugepages: $passed passed"
