#!/bin/bash
# SPDX-License-Identifier: MIT
# bench and speedtest against known drives: loop devices throttled by the blkio cgroup.
# bench record / bench play find rates within 10 % of what fio measures on the same throttled
# device; a throttle lowered mid-run (a synthetic SLC cache cliff) is found at the amount
# written when it happened; speedtest runs two drives at once and its read-back catches a
# corrupted block; the HTML report renders in headless Chromium with every plot. The target
# files they create are removed at the end, files that were there never.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_root
cd "$T"

# the target files: one bench or speedtest created is removed at the end (said on stderr),
# kept with --keep (and by speedtest --write, for a later --read); a file that was there before
# is never removed
small=(--size 32M --chunk 1M --chunks 4)
expect_rc 0 "$NVT" bench record --no-sweep "${small[@]}" "$T/new.nvt"
[ ! -e "$T/new.nvt" ] || fail "bench record left the file it created"
grep -q "removed $T/new.nvt (created by this bench; --keep keeps it)" "$T/err" || fail "bench did not say it removed its file"
expect_rc 0 "$NVT" bench play --no-sweep "${small[@]}" "$T/new.nvt"
[ ! -e "$T/new.nvt" ] || fail "bench play left the file it created"
expect_rc 0 "$NVT" bench record --no-sweep --keep "${small[@]}" "$T/new.nvt"
[ -s "$T/new.nvt" ] && grep -q "kept $T/new.nvt ([0-9]* bytes, created by this bench): --keep" "$T/err" ||
	fail "bench --keep did not keep its file, or did not say so"
expect_rc 0 "$NVT" bench record --no-sweep --force "${small[@]}" "$T/new.nvt"
[ -s "$T/new.nvt" ] || fail "bench removed a file that existed before it"
grep -q "removed\|kept" "$T/err" && fail "bench spoke of removing a file it did not create"
rm -f "$T/new.nvt"
expect_rc 0 "$NVT" speedtest --size 16M --chunk 1M "$T/s1.nvt" "$T/s2.nvt"
[ ! -e "$T/s1.nvt" ] && [ ! -e "$T/s2.nvt" ] || fail "speedtest left the files it created"
[ "$(grep -c "removed $T/s[12].nvt (created by this speedtest" "$T/err")" = 2 ] || fail "speedtest did not say it removed its files"
expect_rc 0 "$NVT" speedtest --write --size 16M --chunk 1M "$T/s1.nvt"
[ -s "$T/s1.nvt" ] && grep -q "kept $T/s1.nvt .*left for nvtape speedtest --read" "$T/err" ||
	fail "speedtest --write must keep its file for --read, and say so"
expect_rc 0 "$NVT" speedtest --read --chunk 1M "$T/s1.nvt"
[ -s "$T/s1.nvt" ] || fail "speedtest --read removed a file it did not create"
expect_rc 0 "$NVT" speedtest --force --size 16M --chunk 1M "$T/s1.nvt"
[ -s "$T/s1.nvt" ] || fail "speedtest removed a file that existed before it"
expect_rc 0 "$NVT" speedtest --keep --size 16M --chunk 1M "$T/s3.nvt"
[ -s "$T/s3.nvt" ] || fail "speedtest --keep removed its file"
rm -f "$T/s1.nvt" "$T/s3.nvt"
ok "bench and speedtest remove the target files they created (--keep and speedtest --write keep them), never one that was there"

make_loop 1G none
dev=$DEV
majmin=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
make_cgroup 83886080 "$dev" # 80 MiB/s writes
cg=$CG
mbps() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['jobs'][0]['$1']['bw_bytes']/1e6)" "$2"; }
within() { # within A B PCT: |A-B| <= PCT % of B
	python3 -c "import sys; a,b,p=map(float,sys.argv[1:]); sys.exit(abs(a-b) > p/100*b)" "$@"
}

# what fio says the throttled device takes: sequential 1 MiB O_DIRECT writes, 4 in flight.
# libaio: fio's io_uring engine gets only half of a blk-throttle limit on a loop device here
# (42 of 84 MB/s; psync and libaio get all of it, and so does nvtape's io_uring path)
in_cgroup "$cg" fio --name=w --filename="$dev" --rw=write --bs=1M --iodepth=4 --ioengine=libaio \
	--direct=1 --size=240M --output-format=json >fio-w.json 2>fio.err || { cat fio.err; fail "fio write"; }
fio_w=$(mbps write fio-w.json)
expect_rc 0 in_cgroup "$cg" "$NVT" bench record --force --size 320M --chunk 1M --chunks 4 --runs 1 \
	--tolerance 4% --report "$T/bench.html" "$dev"
best=$(field best_bps)
best_mb=$(python3 -c "print($best / 1e6)")
grep -q "FAIL" "$T/err" || fail "the sweep never failed a rate: the range did not bracket the drive"
grep -q "plan: at most [0-9]* runs" "$T/err" && grep -q "GB written at most" "$T/err" &&
	grep -q "more at most" "$T/err" || { cat "$T/err"; fail "bench did not print its plan and estimate"; }
within "$best_mb" "$fio_w" 10 || fail "bench record found $best_mb MB/s, fio writes $fio_w MB/s"
ok "bench record: $best_mb MB/s passed (fio writes $fio_w MB/s on the same throttled device)"

# playback: reads throttled the same way
echo "$majmin 0" >"$cg/blkio.throttle.write_bps_device"
echo "$majmin 83886080" >"$cg/blkio.throttle.read_bps_device"
in_cgroup "$cg" fio --name=r --filename="$dev" --rw=read --bs=1M --iodepth=4 --ioengine=libaio \
	--direct=1 --size=240M --output-format=json >fio-r.json 2>fio.err || { cat fio.err; fail "fio read"; }
fio_r=$(mbps read fio-r.json)
expect_rc 0 in_cgroup "$cg" "$NVT" bench play --force --size 320M --chunk 1M --chunks 4 --runs 1 \
	--tolerance 4% "$dev"
best_mb=$(python3 -c "print($(field best_bps) / 1e6)")
within "$best_mb" "$fio_r" 10 || fail "bench play found $best_mb MB/s, fio reads $fio_r MB/s"
ok "bench play: $best_mb MB/s passed without an underflow (fio reads $fio_r MB/s)"
echo "$majmin 0" >"$cg/blkio.throttle.read_bps_device"

# a cache cliff: 200 MiB/s until ~300 MB are on the device, then 50 MiB/s
stat_bytes() { echo $(($(awk '{print $7}' "/sys/block/$(basename "$dev")/stat") * 512)); }
echo "$majmin 209715200" >"$cg/blkio.throttle.write_bps_device"
base=$(stat_bytes)
in_cgroup "$cg" "$NVT" bench record --no-sweep --json --force --size 640M --chunk 1M --chunks 4 \
	"$dev" >cliff.json 2>cliff.err &
pid=$!
switched=
for i in $(seq 400); do
	done_b=$(($(stat_bytes) - base))
	if [ "$done_b" -ge 300000000 ]; then
		echo "$majmin 52428800" >"$cg/blkio.throttle.write_bps_device"
		switched=$done_b
		break
	fi
	sleep 0.02
done
wait $pid || { cat cliff.err; fail "bench --no-sweep exit $?"; }
[ -n "$switched" ] || fail "the cliff test never reached 300 MB"
python3 - cliff.json "$switched" <<'PY' || fail "cache cliff"
import json, sys
j = json.load(open(sys.argv[1])); sw = int(sys.argv[2]); c = j["cliff"]
print(f"cliff found={c['found']} at {c['cliff_bytes']/1e6:.0f} MB (throttle lowered at {sw/1e6:.0f} MB), "
      f"burst {c['burst_bps']/1e6:.0f} MB/s, sustained {c['sustained_bps']/1e6:.0f} MB/s, warning '{c['warning']}'")
s = j["unthrottled"]["series"]
rates = [round((b1 - b0) / (t1 - t0) / 1e6) for t0, t1, b0, b1 in zip(s["t_s"], s["t_s"][1:], s["bytes"], s["bytes"][1:]) if t1 > t0]
assert c["found"], f"no cliff in MB/s per interval {rates}"
assert abs(c["cliff_bytes"] - sw) <= 0.15 * sw, "cliff position"
assert 150e6 < c["burst_bps"] < 240e6 and 40e6 < c["sustained_bps"] < 62e6, "levels"
PY
ok "cache cliff found where the throttle fell, burst and sustained rates right"
echo "$majmin 0" >"$cg/blkio.throttle.write_bps_device"

# the write budget: one smaller than a run is refused up front; the search stops before the
# run that would exceed it (32 MiB runs: the unthrottled one and one of the sweep fit in 80 MiB;
# two must pass at a rate, so none has passed when it stops)
expect_rc 64 "$NVT" bench record --force --size 64M --max-write 32M "$dev"
grep -q -- "--max-write" "$T/err" || fail "the budget refusal must name the flag"
expect_rc 2 "$NVT" bench record --force --size 32M --chunk 1M --chunks 4 --runs 2 --max-write 80M "$dev"
grep -q "the search stops here" "$T/err" && [ "$(field runs)" = 1 ] ||
	{ cat "$T/err" "$T/out"; fail "the write budget did not stop the search after one sweep run"; }
ok "write budget: refused below one run, the search stopped before exceeding it"

# speedtest: two drives at once, each throttled to 60 MiB/s; every beat read back
make_loop 512M none
dev2=$DEV
echo "$majmin 62914560" >"$cg/blkio.throttle.write_bps_device"
echo "$(lsblk -dno MAJ:MIN "$dev2" | tr -d ' ') 62914560" >"$cg/blkio.throttle.write_bps_device"
expect_rc 0 in_cgroup "$cg" "$NVT" speedtest --force --size 200M --chunk 1M --chunks 8 \
	--report "$T/speed.html" "$dev" "$dev2"
grep -q "not NVMe (loop" "$T/out" || fail "speedtest must say what the targets are"
python3 - "$(field t0_write_mbps)" "$(field t1_write_mbps)" "$(field write_mbps)" <<'PY' || fail "concurrent speedtest"
import sys
a, b, agg = map(float, sys.argv[1:])
print(f"speedtest: {a:.0f} + {b:.0f} MB/s, {agg:.0f} MB/s both at once")
assert 45 < a < 75 and 45 < b < 75, "per-target rates"
assert agg > 1.6 * min(a, b), "the targets did not run at the same time"
assert agg >= min(a, b), "the aggregate of targets run at once is below the slowest alone"
PY
ok "speedtest: two throttled drives at once, aggregate $(field write_mbps) MB/s, read back clean"
echo "$majmin 0" >"$cg/blkio.throttle.write_bps_device"

# a corrupted block is caught on read-back, at its offset
expect_rc 0 "$NVT" speedtest --write --force --size 64M --chunk 1M "$dev2"
bad=$((4096 + 3 * 1048576 + 8192))
head -c 4096 /dev/urandom | dd of="$dev2" bs=4096 seek=$((bad / 4096)) oflag=direct conv=notrunc status=none
expect_rc 2 "$NVT" speedtest --read --json --chunk 1M "$dev2"
python3 - "$T/out" "$bad" <<'PY' || fail "speedtest read-back"
import json, sys
t = json.load(open(sys.argv[1]))["targets"][0]["read"]
assert t["corrupt"] > 0 and t["first_bad_offset"] == int(sys.argv[2]), t
print(f"read-back: {t['corrupt']} corrupt beats, first at byte {t['first_bad_offset']}")
PY
ok "speedtest --read found the corrupted block at byte $bad, exit 2"

# the reports render: headless Chromium takes a screenshot; the plots are in the page
shot() { # shot HTML PNG DOM
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
		--user-data-dir="$T/chromium" --hide-scrollbars --window-size=900,2600 \
		--screenshot="$2" "file://$1" >/dev/null 2>&1 || fail "chromium screenshot of $1"
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
		--user-data-dir="$T/chromium" --dump-dom "file://$1" >"$3" 2>/dev/null || fail "chromium dom"
}
shot "$T/bench.html" bench.png bench.dom
shot "$T/speed.html" speed.png speed.dom
python3 "$here/report_check.py" bench.dom bench.png speed.dom speed.png || fail "report plots"
ok "reports render in Chromium with the sweep, throughput, ring fill, cliff and read/write plots"
echo "bench: all passed"
