#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad input gets one clear message and a documented exit code, never a crash.
. "$(dirname "$0")/lib.sh"

good="$T/good.nvt"
expect_rc 0 "$NVT" record -q --size 8M "$good"

check() { # check WANT_RC PATTERN CMD... : exit code, message on stderr, no crash
	local want=$1 pat=$2
	shift 2
	expect_rc "$want" "$@"
	grep -qi -- "$pat" "$T/err" || { cat "$T/err"; fail "$*: message lacks \"$pat\""; }
}

head -c 8192 /dev/urandom >"$T/random.bin"
for cmd in verify info recover; do
	check 1 "bad magic" "$NVT" $cmd "$T/random.bin"
done
ok "wrong magic (verify, info, recover)"

head -c 100 "$good" >"$T/short.nvt"
check 1 "truncated header" "$NVT" verify "$T/short.nvt"
: >"$T/empty.nvt"
check 1 "bad magic" "$NVT" info "$T/empty.nvt"
ok "truncated header, empty file"

cp "$good" "$T/crc.nvt"
newest=$(($(hdr generation "$good") % 2 * 2048)) # generation g is in slot g % 2
printf 'X' | dd of="$T/crc.nvt" bs=1 seek=$((newest + 150)) conv=notrunc status=none
expect_rc 2 "$NVT" verify "$T/crc.nvt" # the other copy: the header before the final one
grep -q "INCOMPLETE" "$T/out" && grep -q "header  *copy .* the newer copy is damaged" "$T/out" ||
	{ cat "$T/out"; fail "one damaged header copy: the other one is read and said so"; }
printf 'X' | dd of="$T/crc.nvt" bs=1 seek=$((2048 - newest + 150)) conv=notrunc status=none # both
check 1 "both copies of the header are damaged" "$NVT" verify "$T/crc.nvt"
check 1 "both copies of the header are damaged" "$NVT" recover "$T/crc.nvt"
ok "header CRC mismatch: one copy damaged (the other read), both damaged (refused)"

cp "$good" "$T/long.nvt"
head -c 4096 /dev/zero >>"$T/long.nvt"
check 1 "appended to" "$NVT" verify "$T/long.nvt"
head -c $((4096 + 4 * 1048576)) "$good" >"$T/cut.nvt"
check 1 "truncated or copied incompletely" "$NVT" verify "$T/cut.nvt"
ok "file size disagrees with the header (longer, shorter)"

check 1 "No such file" "$NVT" verify "$T/missing.nvt"
check 1 "is a directory" "$NVT" verify "$T"
mkfifo "$T/fifo"
check 1 "not a regular file" timeout 10 "$NVT" info "$T/fifo"
ok "missing file, directory, FIFO as input"

check 1 "is a directory" "$NVT" record -q --size 1M "$T"
check 1 "cannot use the directory" "$NVT" record -q --size 1M "$T/no/such/dir/x.nvt"
ok "output: directory, missing directory"
if [ "$(id -u)" = 0 ]; then
	# ramfs has no O_DIRECT (tmpfs has it since Linux 6.6, so it no longer serves here)
	mkdir "$T/ramfs" && mount -t ramfs ramfs "$T/ramfs" && MOUNTS+=("$T/ramfs")
	check 1 "does not support O_DIRECT" "$NVT" record -q --duration 1 "$T/ramfs/x.nvt"
	grep -q "hugepages" "$T/err" && fail "the O_DIRECT refusal must come before the ring is set up"
	[ ! -e "$T/ramfs/x.nvt" ] || fail "O_DIRECT refusal left a file"
	ok "output: a filesystem without O_DIRECT (ramfs) is refused up front"
fi

if [ "$(id -u)" = 0 ]; then
	make_loop 64M ext4
	check 1 "mounted at $MNT" "$NVT" record -q --size 1M "$DEV"
	ok "output: a mounted block device is refused"
fi

check 64 "--chunks 1 is out of range" "$NVT" record --chunks 1 "$T/u.nvt"
check 64 "--qd 0 is out of range" "$NVT" record --qd 0 "$T/u.nvt"
check 64 "is not a rate" "$NVT" record --rate fast "$T/u.nvt"
# a rate without a unit was bytes/s without a word (1500 ran at 1500 B/s for ten minutes)
check 64 "a rate needs a unit.*1500MB.*1500B is 1500 bytes/s" "$NVT" record --rate 1500 --duration 1 "$T/u.nvt"
check 64 "a rate needs a unit" "$NVT" play --rate 200 "$good"
check 64 "--from 100: a rate needs a unit" "$NVT" bench record --from 100 "$T/u.nvt"
check 64 "--rate 0x10: hexadecimal is not taken" "$NVT" record --rate 0x10 --duration 1 "$T/u.nvt"
check 64 "--size 0x10: hexadecimal is not taken" "$NVT" record --size 0x10 --duration 1 "$T/u.nvt"
check 64 "is not a duration" "$NVT" record --duration 0x10 --size 4K "$T/u.nvt"
expect_rc 0 "$NVT" record -q --rate 40960B --size 4K "$T/unit.nvt"
grep -q "^RESULT .*rate_bps=40960 " "$T/out" || { cat "$T/out"; fail "--rate 40960B is 40960 bytes/s"; }
check 64 "multiple of 4K" "$NVT" record --chunk 1000 "$T/u.nvt"
check 64 "--size must be > 0" "$NVT" record --size 0 "$T/u.nvt"
check 64 "is not a duration" "$NVT" record --duration soon "$T/u.nvt"
check 64 "unknown option" "$NVT" record --frobnicate "$T/u.nvt"
check 64 "needs a value" "$NVT" record "$T/u.nvt" --rate
check 64 "a FILE (or several striped members) is required" "$NVT" record
check 64 "at most 16 striped members" "$NVT" record $(seq -f "$T/m%g" 17)
check 64 "--stripe needs two or more members" "$NVT" record --stripe 512K "$T/u.nvt"
check 64 "--stripe must be a multiple of 4 KiB" "$NVT" record --stripe 1000 "$T/u.nvt" "$T/v.nvt"
check 64 "--format must be" "$NVT" record --format wav "$T/u.nvt"
check 64 "--engine must be" "$NVT" record --engine spdk "$T/u.nvt"
check 64 "--source must be" "$NVT" record --source adc "$T/u.nvt"
check 64 "is not a whole number" "$NVT" verify --max-errors lots "$good"
check 64 "unknown command" "$NVT" frobnicate
check 64 "Usage" "$NVT"
[ ! -e "$T/u.nvt" ] || fail "a usage error created the output file"
ok "impossible options: exit 64 with a message, nothing created"

for cmd in record verify info recover; do
	expect_rc 0 "$NVT" $cmd --help
	grep -q "Exit codes: 0 clean; 2" "$T/out" || fail "$cmd --help lacks exit codes"
done
ok "every subcommand has --help with the exit codes"
# a FIFO where a recording should be: refused at once, never waited on (every open of a
# recording or target is non-blocking and checks what it got)
mkfifo "$T/fifo"
for cmd in verify info recover "play --sink null" "record --size 8M" "record --size 8M $T/m0.nvt"; do
	expect_rc 1 timeout 20 "$NVT" $cmd "$T/fifo"
	grep -q "is not a regular file" "$T/err" || fail "$cmd on a FIFO: $(cat "$T/err")"
done
ok "a FIFO in place of a recording or target: refused, never blocked on"
echo "badinput: all passed"
