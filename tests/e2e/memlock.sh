#!/bin/bash
# SPDX-License-Identifier: MIT
# Fixed buffers need locked memory: without CAP_IPC_LOCK and with a low memlock limit io_uring
# cannot register the ring, and nvtape says so once, with the fix, instead of silently running
# slower; with them (root) it says nothing and registers the ring.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }

expect_rc 0 setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock \
	bash -c "ulimit -l 1024 && exec '$NVT' record --size 64M --stats 0 '$T/low.nvt'"
[ "$(field fixed_bufs)" = 0 ] || fail "fixed buffers registered under a 1 MiB memlock limit?"
[ "$(grep -c 'fixed buffers are off' "$T/err")" = 1 ] || fail "no single note: $(cat "$T/err")"
grep -q "ulimit -l unlimited" "$T/err" && grep -q "limits.conf" "$T/err" || fail "the note lacks the fix"
ok "memlock limit: fixed buffers off, said once with the fix (ulimit -l, limits.conf)"

expect_rc 0 "$NVT" record --size 64M --stats 0 "$T/root.nvt"
[ "$(field fixed_bufs)" = 1 ] || fail "root did not register the ring"
! grep -q "fixed buffers are off" "$T/err" || fail "note printed although the ring is registered"
ok "root: the ring is registered as fixed buffers, no note"
echo "memlock: all passed"
