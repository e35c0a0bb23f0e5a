#!/bin/bash
# SPDX-License-Identifier: MIT
# The drop index is made durable with every checkpoint: a recording of real data (the dev source
# on a FIFO, drops from a --drops-from counter) killed with -9 keeps, after recover, every drop
# event the last checkpoint covered, at its position, whether the file grows (the index ahead of
# the data), has a size (the index in slots after it) or is a raw device (slots at its end); data
# writes that catch up with the index wait for a checkpoint to move it on (a tiny margin), and a
# crash at any moment then still finds an intact index.
. "$(dirname "$0")/lib.sh"
need_root
rm -f "$T/f" && mkfifo "$T/f"

produce() {
	timeout 60 python3 "$(dirname "$0")/fifo_producer.py" "$T/f" "$T/cnt" "$T/expect.bin" "$@" &
	prod=$!
}

# events FILE -> "offset:beats ..." of info --json (the checkpoint's index while incomplete)
events() {
	"$NVT" info --json "$1" 2>"$T/info.err" | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join("%d:%d" % (e["data_offset"], e["beats"]) for e in j.get("drop_events") or []))'
}
durable() { hdr durable_bytes "$1"; }

# killed TARGET LABEL RECORD-OPTS...: three 128 KiB writes with two drops (500 @131072,
# 10 @262144) between them, a checkpoint covering all, kill -9, recover
killed() {
	local tgt=$1 label=$2 pid i ev
	shift 2
	echo 0 >"$T/cnt"
	produce w131072 d c500 p w131072 d c510 p w131072 d s20
	"$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" --chunk 64K --chunks 4 "$@" \
		--force "$tgt" >"$T/rec.out" 2>"$T/rec.err" &
	pid=$!
	for i in $(seq 300); do
		[ "$(durable "$tgt" 2>/dev/null)" = 393216 ] && [ "$(events "$tgt")" = "131072:500 262144:10" ] && break
		sleep 0.1
	done
	ev=$(events "$tgt")
	[ "$ev" = "131072:500 262144:10" ] || { cat "$T/rec.err" "$T/info.err"; fail "$label: the checkpoint's index holds '$ev'"; }
	kill -9 $pid
	wait $pid 2>/dev/null
	kill $prod 2>/dev/null
	wait $prod 2>/dev/null
	expect_rc 0 "$NVT" recover "$tgt"
	[ "$(field data_bytes)" = 393216 ] && [ "$(field drops)" = 510 ] || fail "$label: recover $(grep ^RESULT "$T/out")"
	ev=$(events "$tgt")
	[ "$ev" = "131072:500 262144:10" ] || fail "$label: after recover the index holds '$ev'"
	"$NVT" play -q --sink stdout "$tgt" 2>/dev/null | cmp - <(head -c 393216 "$T/expect.bin") ||
		fail "$label: data differs after recover"
	expect_rc 2 "$NVT" verify "$tgt"
	[ "$(field drop_count)" = 510 ] || fail "$label: verify $(grep ^RESULT "$T/out")"
	ok "$label: killed with -9, recover keeps both drop events at their positions (500 @131072, 10 @262144) and the data"
}

killed "$T/grow.nvt" "a growing file"
killed "$T/size.nvt" "a file with --size 64M" --size 64M
idx=$(hdr index_offset "$T/size.nvt")
[ "$idx" -ge 397312 ] || fail "the recovered index at $idx"
make_loop 96M none
killed "$DEV" "a raw device"

# data catching up with the index: a margin of 0 (the index just past the ring's worth of data)
# makes writes wait for a checkpoint to move it on again and again; a kill at any moment finds
# an intact index (its CRC checked by info and recover) holding the first drop
echo 0 >"$T/cnt"
produce w65536 d c77 p t40 s20
NVT_TEST_INDEX_MARGIN=0 "$NVT" record -q --source dev:"$T/f" --drops-from "$T/cnt" --chunk 64K \
	--chunks 4 "$T/m.nvt" >"$T/rec.out" 2>"$T/rec.err" &
pid=$!
for i in $(seq 600); do
	[ "$(durable "$T/m.nvt" 2>/dev/null)" -ge $((8 << 20)) ] 2>/dev/null && break
	sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null
kill $prod 2>/dev/null
wait $prod 2>/dev/null
cp=$(durable "$T/m.nvt")
[ "$cp" -ge $((8 << 20)) ] || fail "margin 0: checkpoint at $cp bytes"
ev=$(events "$T/m.nvt")
case "$ev" in "65536:77"*) ;; *) cat "$T/info.err"; fail "margin 0: the checkpoint's index holds '$ev'" ;; esac
expect_rc 0 "$NVT" recover "$T/m.nvt"
kept=$(field data_bytes)
case "$(events "$T/m.nvt")" in "65536:77"*) ;; *) fail "margin 0: after recover '$(events "$T/m.nvt")'" ;; esac
"$NVT" play -q --sink stdout "$T/m.nvt" 2>/dev/null | cmp -n 65536 - "$T/expect.bin" || fail "margin 0: data before the drop"
ok "data writes waiting for the index to move on: killed at a $cp-byte checkpoint, the index intact, recover kept $kept bytes and the drop @65536"
echo "ckptindex: all passed"
