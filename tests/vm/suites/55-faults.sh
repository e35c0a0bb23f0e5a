# SPDX-License-Identifier: MIT
# Drives that fail the way drives fail, injected with device-mapper under record, verify, play
# and recover: writes that error (flakey error_writes), writes silently dropped (flakey
# drop_writes), reads that error (flakey down; error ranges: bad blocks), a drive that becomes
# slow and recovers (delay below the watchdog) and one that stays slow (delay above it). The
# targets are a mapped namespace, a file on XFS on one, and each member of a two-member
# stripe. Every case checks what the run said it kept against what verify finds afterwards.
# The hung drive through the nvme engine is 85-nvme-fail.sh.
. /suites/lib.sh
reset_drives
S=1048576 # 512 MiB of each drive is mapped (XFS wants 300 MB at least)
R="--rate 20MB --chunk 1M --chunks 32"

# dm_set NAME TABLE: create /dev/mapper/NAME, or switch its table at once (load, suspend,
# resume: what a failing drive looks like to the writer, mid-I/O); \n separates table lines
dm_set() {
	if dmsetup info $1 >/dev/null 2>&1; then
		printf '%b\n' "$2" | dmsetup --noudevsync load $1 &&
			dmsetup --noudevsync suspend --noflush $1 && dmsetup --noudevsync resume $1
	else # without udev the node of an earlier mapping of that name may linger: mknodes
		printf '%b\n' "$2" | dmsetup --noudevsync create $1 && dmsetup --noudevsync mknodes $1
	fi
}
lin() { echo "0 $S linear $1 0"; }
# flakey DEV [FEATURE]: down from now on (up 0 s, down an hour); no feature: all I/O fails
flakey() { echo "0 $S flakey $1 0 0 3600${2:+ 1 $2}"; }
delay() { echo "0 $S delay $1 0 $2"; }
# bad DEV FROM LEN (sectors): a range of bad blocks, every I/O touching it fails
bad() { echo "0 $2 linear $1 0\n$2 $3 error\n$(($2 + $3)) $((S - $2 - $3)) linear $1 $(($2 + $3))"; }

# record_with AT NAME TABLE [AT2 TABLE2] -- ARGS...: record; AT seconds in, NAME gets TABLE
# (AT2 seconds later TABLE2). Sets rc, kept, drops, cause; output in /tmp/r.out, /tmp/r.err
record_with() {
	at=$1 name=$2 table=$3 at2= table2=
	shift 3
	[ "$1" != -- ] && { at2=$1 table2=$2; shift 2; }
	shift
	nvtape record -q --force "$@" >/tmp/r.out 2>/tmp/r.err &
	pid=$!
	sleep $at
	dm_set $name "$table" || say "dm_set $name failed: $table"
	[ -n "$at2" ] && { sleep $at2; dm_set $name "$table2" || say "dm_set $name failed: $table2"; }
	wait $pid
	rc=$?
	kept=$(field bytes </tmp/r.out)
	drops=$(field drops </tmp/r.out)
	cause=$(grep -m 1 'nvtape record: error' /tmp/r.err | cut -c 1-240)
}
# run_v NAME CMD...: run a command, its output in /tmp/NAME.out and .err, its exit in vNAME
run_v() {
	n=$1
	shift
	"$@" >/tmp/$n.out 2>/tmp/$n.err
	eval "v$n=$?"
}
vf() { field "$2" </tmp/$1.out; } # vf NAME FIELD: a RESULT field of what run_v NAME printed
say() { echo "NVT-INFO $*"; }
show() { for f in "$@"; do echo "== $f"; tail -n 6 /tmp/$f; done; }
err1() { grep -m 1 'error' /tmp/$1.err | cut -c 1-200; }

# verify_kept TARGET...: the recording verifies complete with no corrupt beat, exactly the
# bytes and drops the run reported, the drops where the index says (exit 2 when there are
# any); play plays those beats with the gaps the drop count predicts (exit 0); recover has
# nothing to do
verify_kept() {
	run_v ver nvtape verify -q "$@"
	run_v ply nvtape play -q "$@"
	run_v rcv nvtape recover "$@"
	say "  verify exit $vver: $(vf ver bytes) bytes, complete $(vf ver complete), corrupt $(vf ver corrupt), gaps $(vf ver gaps), drops $(vf ver drop_count) (match $(vf ver drops_match)); play exit $vply: $(vf ply beats) beats, gap beats $(vf ply gap_beats) of $(vf ply expected_gap_beats); recover: $(vf rcv action)"
	want=0
	[ "$drops" != 0 ] && want=2
	[ "$vver" = $want ] && [ "$(vf ver bytes)" = "$kept" ] && [ "$(vf ver complete)" = 1 ] &&
		[ "$(vf ver corrupt)" = 0 ] && [ "$(vf ver drops_match)" = 1 ] &&
		[ "$(vf ver drop_count)" = "$drops" ] && [ "$vply" = 0 ] &&
		[ "$(vf ply beats)" = $((kept / 16)) ] && [ "$(vf ply corrupt)" = 0 ] &&
		[ "$vrcv" = 0 ] && [ "$(vf rcv action)" = none ] || { show r.err ver.out ply.out rcv.out; return 1; }
}

# --- writes that error: the run stops, names the drive and the cause, keeps what landed ---
# WHO: what the message names ("" for a single target). When the header's drive still
# answers, the recording is finalized: verify finds exactly what the run kept. When the
# header's drive is the one failing, the final header cannot be written: the run says so,
# the recording stays as its last checkpoint left it, and recover (once the drive answers
# again) keeps at least that checkpoint and at most what was in flight past what the run kept
# (--qd 8 x 1 MiB). On a raw drive it keeps everything the run kept; on a filesystem that
# shut down, writes after the checkpoint's flush may not have reached its metadata: the
# checkpoint is what was acknowledged.
write_errors() { # MAPNAME DEV WHO TARGETS...
	m=$1 d=$2 who=$3
	shift 3
	dm_set $m "$(lin $d)"
	record_with 1.5 $m "$(flakey $d error_writes)" -- $R --duration 4 "$@"
	say "$m error_writes: record exit $rc, kept $kept, drops $drops; $cause"
	dm_set $m "$(lin $d)"
	[ -n "${AFTER_FAULT:-}" ] && $AFTER_FAULT
	# the first failure is a data write, or the checkpoint's flush (flakey fails it too)
	[ $rc = 1 ] && [ "$kept" -gt 0 ] && [ "$(field stop_reason </tmp/r.out)" = io-error ] &&
		{ echo "$cause" | grep -q "failed${who:+ on $who (that drive failed)}: Input/output error" ||
			echo "$cause" | grep -q "fdatasync for the checkpoint: Input/output error"; } ||
		{ show r.err r.out; return 1; }
	if ! grep -q 'could not be finalized' /tmp/r.err; then
		verify_kept "$@"
		return
	fi
	run_v ver nvtape verify -q "$@"
	run_v rcv nvtape recover "$@"
	run_v ve2 nvtape verify -q "$@"
	say "  header unwritable: verify exit $vver: $(vf ver bytes) checkpointed bytes, complete $(vf ver complete); recover exit $vrcv: kept $(vf rcv data_bytes); verify exit $vve2: $(vf ve2 bytes) bytes, corrupt $(vf ve2 corrupt), drops match $(vf ve2 drops_match)"
	[ "$vver" = 2 ] && [ "$(vf ver complete)" = 0 ] && [ "$(vf ver corrupt)" = 0 ] &&
		[ "$(vf ver bytes)" -le "$kept" ] && [ "$vrcv" = 0 ] &&
		[ "$(vf rcv data_bytes)" -ge "$([ -n "${AFTER_FAULT:-}" ] && vf ver bytes || echo "$kept")" ] &&
		grep -q "vouches for the $(vf ver bytes) bytes of its last checkpoint" /tmp/r.err &&
		[ "$(vf rcv data_bytes)" -le $((kept + 8388608)) ] && [ "$(vf ve2 bytes)" = "$(vf rcv data_bytes)" ] &&
		[ "$(vf ve2 corrupt)" = 0 ] && [ "$(vf ve2 drops_match)" = 1 ] ||
		{ show r.err ver.out rcv.out ve2.out; return 1; }
}

# --- reads that error (bad blocks): verify and play stop there and say where and why ---
read_errors() { # MAPNAME DEV WHO TARGETS... (WHO: what the read error names)
	m=$1 d=$2 who=$3
	shift 3
	dm_set $m "$(lin $d)"
	nvtape record -q --force $R --duration 2 "$@" >/tmp/r.out || return 1
	kept=$(field bytes </tmp/r.out) drops=$(field drops </tmp/r.out)
	dm_set $m "$(bad $d 20480 2048)" # 1 MiB of bad blocks 10 MiB into the drive
	run_v ver nvtape verify -q "$@"
	run_v ply nvtape play -q "$@"
	dm_set $m "$(lin $d)"
	say "$m bad blocks: verify exit $vver: $(err1 ver); play exit $vply: $(err1 ply)"
	[ "$vver" = 1 ] && [ "$vply" = 1 ] && grep -q "read of .*$who.*Input/output error" /tmp/ver.err &&
		grep -q "read of .*$who.*Input/output error" /tmp/ply.err || { show ver.err ply.err; return 1; }
	# the drive reads again: nothing was lost
	verify_kept "$@"
}

# --- recover over bad blocks: the writer died, then a read fails inside the recording ---
# recover reports the read error and changes nothing; once the blocks read again, it keeps
# at least what the checkpoint vouched for
recover_bad() { # MAPNAME DEV TARGETS...
	m=$1 d=$2
	shift 2
	dm_set $m "$(lin $d)"
	nvtape record -q --force $R --duration 20 "$@" >/dev/null 2>&1 &
	pid=$!
	sleep 3
	kill -9 $pid
	wait $pid 2>/dev/null
	run_v ver nvtape verify -q "$@"
	ckpt=$(vf ver bytes)
	dm_set $m "$(bad $d 20480 2048)"
	run_v rcv nvtape recover "$@"
	dm_set $m "$(lin $d)"
	run_v ve2 nvtape verify -q "$@"
	run_v rc2 nvtape recover "$@"
	run_v ve3 nvtape verify -q "$@"
	say "$m recover over bad blocks: checkpointed $ckpt; recover exit $vrcv: $(err1 rcv); then verify exit $vve2: $(vf ve2 bytes), complete $(vf ve2 complete); recover exit $vrc2: kept $(vf rc2 data_bytes); verify exit $vve3: $(vf ve3 bytes), corrupt $(vf ve3 corrupt)"
	[ "$vrcv" = 1 ] && grep -q "Input/output error" /tmp/rcv.err && [ "$(vf ve2 bytes)" = "$ckpt" ] &&
		[ "$(vf ve2 complete)" = 0 ] && [ "$vrc2" = 0 ] && [ "$(vf rc2 data_bytes)" -ge "$ckpt" ] &&
		[ "$(vf ve3 bytes)" = "$(vf rc2 data_bytes)" ] && [ "$(vf ve3 corrupt)" = 0 ] &&
		[ "$(vf ve3 complete)" = 1 ] && [ "$(vf ve3 drops_match)" = 1 ] ||
		{ show rcv.err ve2.out rc2.out ve3.out; return 1; }
}

# --- writes silently dropped: the run cannot know; verify's read-back must ---
# Data dropped behind a header that lands: zeros or an earlier run's beats where the pattern
# should be, found as corrupt beats or gaps (exit 2). A drive that drops the final header too
# leaves an unfinalized recording (verify exit 2) vouching for no more than its last
# checkpoint before the drops began; recover then keeps only beats that are really there.
drop_writes() { # MAPNAME DEV TABLE TARGETS...
	m=$1 d=$2 tb=$3
	shift 3
	dm_set $m "$(lin $d)"
	record_with 1.5 $m "$tb" -- $R --duration 3 "$@"
	# reads still pass through flakey: verify while the drive drops writes
	run_v ver nvtape verify -q "$@"
	run_v ply nvtape play -q "$@"
	dm_set $m "$(lin $d)"
	run_v rcv nvtape recover "$@"
	run_v ve2 nvtape verify -q "$@"
	say "$m drop_writes: record exit $rc, kept $kept, drops $drops; verify exit $vver: $(vf ver bytes) bytes, complete $(vf ver complete), corrupt $(vf ver corrupt), gaps $(vf ver gaps) $(err1 ver); play exit $vply: corrupt $(vf ply corrupt), gaps $(vf ply gaps); recover exit $vrcv: $(vf rcv action) $(vf rcv data_bytes); verify exit $vve2: $(vf ve2 bytes) bytes, corrupt $(vf ve2 corrupt)"
	{ [ $rc = 0 ] || [ $rc = 2 ]; } && [ "$vver" = 2 ] || { show r.err ver.out ply.out; return 1; }
	if [ "$(vf ver complete)" = 1 ]; then
		[ "$(vf ver corrupt)" != 0 ] || [ "$(vf ver gaps)" != "$(field drop_events </tmp/r.out)" ] &&
			[ "$vply" = 2 ] && [ "$(vf ve2 corrupt)" = "$(vf ver corrupt)" ] || { show ver.out ply.out ve2.out; return 1; }
	else
		[ "$(vf ver bytes)" -lt "$kept" ] && [ "$vrcv" = 0 ] && [ "$(vf rcv data_bytes)" -lt "$kept" ] &&
			[ "$vve2" = "$([ "$(vf rcv drops)" = 0 ] && echo 0 || echo 2)" ] &&
			[ "$(vf ve2 bytes)" = "$(vf rcv data_bytes)" ] && [ "$(vf ve2 corrupt)" = 0 ] ||
			{ show ver.out rcv.out ve2.out; return 1; }
	fi
}

# --- a drive that becomes slow, then recovers, below the watchdog: drops counted and placed ---
slow_then_recovers() { # MAPNAME DEV TARGETS...
	m=$1 d=$2
	shift 2
	dm_set $m "$(lin $d)"
	# 8 writes of 1 MiB in flight, each held 2 s: 4 MB/s for 2 s against 20 MB/s, an 8 MiB ring
	record_with 1 $m "$(delay $d 2000)" 2 "$(lin $d)" -- $R --chunks 8 --duration 5 --timeout 10 "$@"
	say "$m delay 2 s for 2 s: record exit $rc, kept $kept, drops $drops in $(field drop_events </tmp/r.out) events"
	[ $rc = 2 ] && [ "$drops" -gt 0 ] || { show r.err; return 1; }
	verify_kept "$@"
}

# --- a drive that stays slow beyond the watchdog: a clean stall stop ---
stays_slow() { # MAPNAME DEV TARGETS...
	m=$1 d=$2
	shift 2
	dm_set $m "$(lin $d)"
	record_with 1.2 $m "$(delay $d 4000)" -- $R --duration 5 --timeout 1 "$@"
	say "$m delay 4 s, --timeout 1: record exit $rc, kept $kept, drops $drops; $cause"
	dm_set $m "$(lin $d)"
	[ $rc = 1 ] && [ "$(field stop_reason </tmp/r.out)" = stall ] && [ "$kept" -gt 0 ] || { show r.err r.out; return 1; }
	verify_kept "$@"
}

# --- a single mapped drive ---
F=/dev/mapper/ft
check faults-single-read-errors read_errors ft $D0 "of $F" $F
check faults-single-write-errors write_errors ft $D0 "" $F
check faults-single-drop-data-writes drop_writes ft $D0 "0 8 linear $D0 0\n8 $((S - 8)) flakey $D0 8 0 3600 1 drop_writes" $F
check faults-single-drop-all-writes drop_writes ft $D0 "$(flakey $D0 drop_writes)" $F
check faults-single-slow-recovers slow_then_recovers ft $D0 $F
check faults-single-stays-slow stays_slow ft $D0 $F
check faults-single-recover-bad-blocks recover_bad ft $D0 $F
dmsetup --noudevsync remove ft || say "ft: $(dmsetup info ft 2>&1 | grep -i open)"

# --- each member of a two-member stripe ---
dm_set s0 "$(lin $D0)"
dm_set s1 "$(lin $D1)"
ST="/dev/mapper/s0 /dev/mapper/s1"
for k in 0 1; do
	dk=$D0
	[ $k = 1 ] && dk=$D1
	who="member $((k + 1)), /dev/mapper/s$k"
	check faults-stripe-m$k-read-errors read_errors s$k $dk "$who" $ST
	check faults-stripe-m$k-write-errors write_errors s$k $dk "$who" $ST
	check faults-stripe-m$k-drop-writes drop_writes s$k $dk "$(flakey $dk drop_writes)" $ST
	check faults-stripe-m$k-slow-recovers slow_then_recovers s$k $dk $ST
	check faults-stripe-m$k-stays-slow stays_slow s$k $dk $ST
done
dmsetup --noudevsync remove s0 && dmsetup --noudevsync remove s1 || say "stripe maps still open"

# --- a file on XFS on a mapped drive ---
return_r() { return $1; }
remount_fx() { umount_wait /mnt/rec && mount -o noatime /dev/mapper/fx /mnt/rec; }
xfs_case() { # FAULT
	dm_set fx "$(lin $D0)" || { echo "fx: $(dmsetup info fx 2>&1 | tr '\n' ' ')"; return 1; }
	mkfs.xfs -f -q /dev/mapper/fx >/tmp/mkfs.out 2>&1 || { head -n 3 /tmp/mkfs.out; return 1; }
	mkdir -p /mnt/rec
	mount -o noatime /dev/mapper/fx /mnt/rec || { grep rec /proc/mounts; return 1; }
	X=/mnt/rec/r.nvt
	case $1 in
	slow) slow_then_recovers fx $D0 $X ;;
	drop) drop_writes fx $D0 "$(flakey $D0 drop_writes)" $X ;;
	read)
		nvtape record -q $R --duration 2 $X >/tmp/r.out &&
			dm_set fx "$(flakey $D0)" &&
			run_v ver nvtape verify -q $X && run_v ply nvtape play -q $X
		dm_set fx "$(lin $D0)"
		say "fx down: verify exit $vver: $(err1 ver); play exit $vply: $(err1 ply)"
		[ "$vver" = 1 ] && [ "$vply" = 1 ] && grep -q "cannot read the header of $X" /tmp/ver.err &&
			grep -q "cannot read the header of $X" /tmp/ply.err ;;
	error) # XFS shuts down on the failed writes: mount it again (log recovery) before reading
		AFTER_FAULT=remount_fx
		write_errors fx $D0 "" $X
		r=$?
		AFTER_FAULT=
		return_r $r ;;
	esac
	r=$?
	umount_wait /mnt/rec || say "umount: $(grep rec /proc/mounts)"
	dmsetup --noudevsync remove fx || say "fx: $(dmsetup info fx 2>&1 | tr '\n' ' ')"
	return $r
}
check faults-xfs-slow-recovers xfs_case slow
check faults-xfs-drop-writes xfs_case drop
check faults-xfs-read-errors xfs_case read
check faults-xfs-write-errors xfs_case error
reset_drives
