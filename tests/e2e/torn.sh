#!/bin/bash
# SPDX-License-Identifier: MIT
# A checkpoint header write torn by a power cut: two consecutive header blocks taken from a
# live recording, then every sector-granular prefix of the newer one written over the older
# one (what a drive with 512-byte atomic writes can leave). Each state must open, name the
# generation it read, vouch for at least the older checkpoint, and recover to a clean
# recording: a torn header costs at most one checkpoint.
. "$(dirname "$0")/lib.sh"

f="$T/live.nvt"
"$NVT" record -q --rate 8MB --size 96M "$f" >/dev/null 2>&1 &
pid=$!
# sample the header block until two consecutive checkpoint generations were seen
python3 - "$f" "$T" <<'PY' || { kill -9 $pid; fail "no two consecutive checkpoint headers seen"; }
import struct, sys, time
f, t = sys.argv[1], sys.argv[2]
seen = {}
deadline = time.time() + 20
while time.time() < deadline:
    try:
        with open(f, "rb") as fh:
            blk = fh.read(4096)
    except FileNotFoundError:
        blk = b""
    if len(blk) == 4096:
        gens = [struct.unpack_from("<Q", blk, s + 1560)[0] for s in (0, 2048)]
        g = max(gens)
        if g >= 2 and g not in seen:
            seen[g] = blk
        for g in sorted(seen):
            if g + 1 in seen and g >= 3:
                open(t + "/prev.blk", "wb").write(seen[g])
                open(t + "/next.blk", "wb").write(seen[g + 1])
                print(g)
                sys.exit(0)
    time.sleep(0.02)
sys.exit(1)
PY
kill -9 $pid
wait $pid 2>/dev/null
gen_prev=$(python3 -c "import struct; b=open('$T/prev.blk','rb').read(); print(max(struct.unpack_from('<Q', b, s + 1560)[0] for s in (0, 2048)))")
ok "two consecutive header blocks of a live recording: generations $gen_prev and $((gen_prev + 1))"

hdr_of() { # hdr_of FILE: generation durable_bytes header_torn of the header block in FILE
	"$NVT" info --json "$1" | python3 -c "import json,sys; h=json.load(sys.stdin)['header']; print(h['generation'], h['durable_bytes'], h['header_torn'])"
}
head -c 4096 "$T/prev.blk" >"$T/p.nvt" && tail -c +4097 "$f" >>"$T/p.nvt"
read -r _ durable_prev _ < <(hdr_of "$T/p.nvt")
cp "$T/next.blk" "$T/n.nvt" && tail -c +4097 "$f" >>"$T/n.nvt"
read -r _ durable_next _ < <(hdr_of "$T/n.nvt")
[ "$durable_next" -gt "$durable_prev" ] || fail "the newer checkpoint vouches for more ($durable_prev, $durable_next)"
rm -f "$T/p.nvt" "$T/n.nvt"

worst=0
for k in 0 1 2 3 4 5 6 7 8; do
	g="$T/torn$k.nvt"
	cp "$f" "$g"
	python3 - "$g" "$T/prev.blk" "$T/next.blk" "$k" <<'PY'
import os, sys
g, prev, nxt, k = sys.argv[1], open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read(), int(sys.argv[4])
fd = os.open(g, os.O_WRONLY)
os.pwrite(fd, prev, 0)
os.pwrite(fd, nxt[:512 * k], 0)
os.close(fd)
PY
	read -r gen durable torn < <(hdr_of "$g") || fail "torn prefix of $k sectors: info failed"
	case $gen in "$gen_prev" | $((gen_prev + 1))) ;; *) fail "prefix $k: generation $gen" ;; esac
	[ "$durable" -ge "$durable_prev" ] || fail "prefix $k: vouches for $durable < $durable_prev"
	expect_rc 0 "$NVT" recover "$g"
	kept=$(field data_bytes)
	[ "$kept" -ge "$durable" ] || fail "prefix $k: recover kept $kept < $durable"
	expect_rc 0 "$NVT" verify -q "$g"
	[ "$(field corrupt)" = 0 ] && [ "$(field bytes)" = "$kept" ] || fail "prefix $k: verify after recover"
	loss=$((durable_next - durable))
	[ "$loss" -gt "$worst" ] && worst=$loss
	echo "  prefix $k/8 sectors: read generation $gen (other copy damaged: $torn), vouches for $durable, recovered $kept"
	rm -f "$g"
done
ok "9 torn header states: each opened and recovered cleanly; worst checkpoint loss $worst bytes (one checkpoint: $((durable_next - durable_prev)))"
