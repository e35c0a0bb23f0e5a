#!/bin/bash
# SPDX-License-Identifier: MIT
# A storage that stops completing writes: the watchdog stops the recording, keeps what completed,
# finalizes the header and names the stalled side; exit 1.
. "$(dirname "$0")/lib.sh"
need_root

make_loop 1G xfs
f="$MNT/st.nvt"
# the drive works at 100 MB/s for 1.5 s, then all but stops (4 KB/s): the watchdog fires
make_cgroup 104857600 "$DEV"
in_cgroup "$CG" "$NVT" record -q --rate 20MB --duration 30 --chunk 1M --chunks 4 --qd 2 --timeout 1.5 "$f" >"$T/out" 2>"$T/err" &
pid=$!
sleep 1.5
set_limit "$CG" 4096 "$DEV"
# the watchdog fires ~1.5 s after the last progress, the drain gives up 1.5 s later and the
# header is finalized while the stuck writes are still in flight; then the drive comes back
sleep 6
set_limit "$CG" 0 "$DEV"
wait $pid
rc=$?
[ $rc = 1 ] || { cat "$T/out" "$T/err"; fail "exit $rc, want 1"; }
grep -q "storage completed no write for 1.5 s" "$T/err" || fail "stall message"
grep -q "writes never completed" "$T/err" || fail "the stuck writes are not reported"
[ "$(field stop_reason)" = stall ] || { cat "$T/out" "$T/err"; fail "reason"; }
kept=$(field bytes)
[ "$kept" -ge 20000000 ] || fail "kept only $kept bytes written before the drive stopped"
expect_rc 2 "$NVT" verify "$f"
[ "$(field complete)" = 1 ] && [ "$(field corrupt)" = 0 ] && [ "$(field gaps)" = 0 ] || fail "header after a stall"
[ "$(field bytes)" = "$kept" ] && [ "$(field drops_match)" = 1 ] || fail "accounting after a stall"
ok "drive stops after 1.5 s: exit 1 by the watchdog, header finalized, the $kept bytes written before are kept and clean"

# a stripe whose second member stops: the message names that member
make_loop 256M none
d1=$DEV
make_loop 256M none
d2=$DEV
make_cgroup 104857600 "$d2"
in_cgroup "$CG" "$NVT" record -q --rate 20MB --duration 30 --chunk 1M --chunks 4 --qd 2 --timeout 1.5 "$d1" "$d2" >"$T/out" 2>"$T/err" &
pid=$!
sleep 1.5
set_limit "$CG" 4096 "$d2"
sleep 6
set_limit "$CG" 0 "$d2"
wait $pid
rc=$?
[ $rc = 1 ] && grep -q "storage completed no write for 1.5 s" "$T/err" ||
	{ cat "$T/out" "$T/err"; fail "stripe stall: exit $rc"; }
grep -q "waiting on member 2, $d2: [0-9]* I/Os outstanding" "$T/err" || { cat "$T/err"; fail "the stalled member is not named"; }
grep -q "waiting on .*member 1," "$T/err" && { cat "$T/err"; fail "the member that answered is named"; }
ok "a stripe's second member stops: the watchdog names it ($(grep -o 'member 2, [^:]*: [0-9]* I/Os outstanding' "$T/err"))"
echo "stall: all passed"
