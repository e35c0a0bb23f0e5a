# SPDX-License-Identifier: MIT
# Crash consistency at every flush point: device-mapper's log-writes target logs every write,
# flush and FUA under a recording (a raw device, a file on XFS, a two-member stripe; nvtape and
# fdrec formats) that drops beats (its device throttled below the programmed rate, a 4-chunk ring);
# logreplay then rebuilds each state a power cut could leave: every flush point (up to 100 spread
# evenly plus the first and last), and between flushes the writes after the last flush applied in
# order up to a point, or a random subset of them, some only in part (a volatile cache that lost
# or reordered them). On each state: info, verify, recover, verify, against the pattern data the
# state really holds (logreplay pattern).
#
# nvtape: no corrupt beat, before or after recover; the header never vouches for more than the
# state holds; recover keeps at least what the last durable checkpoint header promised (the header
# a flush made durable: the one in the flush-point state); the loss (pattern data the state holds
# that recover did not keep) is reported, the worst per case, in bytes and in stream time, and is
# held to one checkpoint interval (1 s of stream): recover extends past the promise while the
# pattern continues, across the jumps drops leave at chunk boundaries.
# fdrec has no checkpoint, so nothing is promised before COMPLETE: recover keeps everything up to
# the last non-zero 4 KiB block, so it keeps all the pattern data a state holds (no loss), and a
# hole the cache left below that is never passed silently: verify counts its beats as corrupt,
# exactly 256 per 4 KiB hole.
. /suites/lib.sh
reset_drives
MiB=1048576
TSZ=8                     # MiB per target (and per base and scratch copy); XFS: 32
THROTTLE=1000000          # bytes/s the throttled device takes; the source runs at 3 MB/s
REC="--rate 3MB --duration 4 --chunk 64K --chunks 4"
MAXPTS=100                # flush points checked per case (plus the first and the last)
LOGS=/tmp/crash           # per-case counters
mkdir -p $LOGS /mnt/cs /mnt/rec

lin() { # lin NAME DEV START_MiB SIZE_MiB
	echo "0 $(($4 * 2048)) linear $2 $(($3 * 2048))" | dmsetup --noudevsync create $1 || return 1
	[ -b /dev/mapper/$1 ] || dmsetup --noudevsync mknodes
}
lw() { # lw NAME TARGET LOG: a log-writes device over TARGET, logging to LOG (both zeroed)
	logreplay zero /dev/mapper/$2 $((TSZ * MiB)) && logreplay zero /dev/mapper/$3 $MiB || return 1
	echo "0 $((TSZ * 2048)) log-writes /dev/mapper/$2 /dev/mapper/$3" |
		dmsetup --noudevsync create $1 || return 1
	[ -b /dev/mapper/$1 ] || dmsetup --noudevsync mknodes
}
# throttled CMD...: run CMD in a cgroup whose writes to the devices in $SLOW are limited
throttled() {
	cg=/sys/fs/cgroup
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || return 1
	grep -qw io $cg/cgroup.subtree_control || echo "+io" >$cg/cgroup.subtree_control || return 1
	mkdir -p $cg/crash
	for d in $SLOW; do
		echo "$(dmsetup info -c --noheadings -o major,minor $d | tr -d ' ') wbps=$THROTTLE" \
			>$cg/crash/io.max || return 1
	done
	read -r me _ </proc/self/stat
	echo "$me" >$cg/crash/cgroup.procs || return 1
	"$@"
	rc=$?
	echo "$me" >$cg/cgroup.procs
	return $rc
}
jnum() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -n 1; }
jbool() { sed -n "s/.*\"$1\":\(true\|false\).*/\1/p" | head -n 1; }
rfield() { sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }

slices() { # the targets, bases and scratch states of one case, TSZ MiB each
	for d in tA tB bA bB sA sB; do dmsetup --noudevsync remove $d 2>/dev/null; done
	lin tA $D0 0 $TSZ && lin tB $D0 $TSZ $TSZ && lin bA $D0 $((2 * TSZ)) $TSZ &&
		lin bB $D0 $((3 * TSZ)) $TSZ && lin sA $D0 $((4 * TSZ)) $TSZ && lin sB $D0 $((5 * TSZ)) $TSZ
}
lin lA $D1 0 256
lin lB $D1 256 256

# --- recording under log-writes -------------------------------------------------------------
# record KIND FMT: the recording of one case; its logs end up on lA (and lB for the stripe)
record() {
	kind=$1
	fmt=$2
	umount /mnt/rec 2>/dev/null
	dmsetup --noudevsync remove wA 2>/dev/null
	dmsetup --noudevsync remove wB 2>/dev/null
	case $kind in
	raw)
		lw wA tA lA || return 1
		dmsetup message wA 0 mark rec-start || return 1
		SLOW=wA throttled nvtape record -q --force --format $fmt $REC /dev/mapper/wA >/tmp/rec.out 2>&1
		rc=$?
		;;
	xfs)
		lw wA tA lA || return 1
		TEST_DEV=1 TEST_DIR=1 QA_CHECK_FS=1 mkfs.xfs -f -q /dev/mapper/wA || return 1
		mount -t xfs -o noatime /dev/mapper/wA /mnt/rec || return 1
		sync
		dmsetup message wA 0 mark rec-start || return 1
		SLOW=wA throttled nvtape record -q --format $fmt $REC /mnt/rec/r.nvt >/tmp/rec.out 2>&1
		rc=$?
		umount_wait /mnt/rec
		;;
	stripe) # the second member throttled: the stripe drops because one drive is slow
		lw wA tA lA && lw wB tB lB || return 1
		dmsetup message wA 0 mark rec-start && dmsetup message wB 0 mark rec-start || return 1
		SLOW=wB throttled nvtape record -q --force --format $fmt --stripe 64K $REC \
			/dev/mapper/wA /dev/mapper/wB >/tmp/rec.out 2>&1
		rc=$?
		;;
	esac
	dmsetup --noudevsync remove wA
	[ $kind = stripe ] && dmsetup --noudevsync remove wB
	# drops forced: exit 2 with drops counted
	[ $rc = 2 ] && [ "$(rfield drops </tmp/rec.out)" -gt 0 ] 2>/dev/null || {
		echo "record exited $rc"
		cat /tmp/rec.out
		return 1
	}
	echo "NVT-INFO crash-$kind-$fmt: recorded $(rfield bytes </tmp/rec.out) bytes, $(rfield drops </tmp/rec.out) beats dropped, $(rfield checkpoints </tmp/rec.out) checkpoints; log: $(logreplay list /dev/mapper/lA | grep -c ' ') entries, $(logreplay flushes /dev/mapper/lA | wc -l) flush/FUA"
}

# --- crash states -----------------------------------------------------------------------------
# state_dev: the scratch state (sA, and sB for a stripe) from the base, then TAIL_A / TAIL_B
# ("FROM TO options": the volatile writes applied on top); for XFS it is mounted at /mnt/cs.
state_dev() {
	logreplay copy /dev/mapper/bA /dev/mapper/sA $((TSZ * MiB)) || return 1
	[ -n "$TAIL_A" ] && { logreplay replay /dev/mapper/lA /dev/mapper/sA $TAIL_A >/dev/null || return 1; }
	if [ $KIND = stripe ]; then
		logreplay copy /dev/mapper/bB /dev/mapper/sB $((TSZ * MiB)) || return 1
		[ -n "$TAIL_B" ] && { logreplay replay /dev/mapper/lB /dev/mapper/sB $TAIL_B >/dev/null || return 1; }
	fi
	if [ $KIND = xfs ]; then
		mount -t xfs -o noatime /dev/mapper/sA /mnt/cs || return 2
	fi
	return 0
}

bad() { # bad WHAT: one failed state, described
	echo "state $LABEL (tail A: ${TAIL_A:-none}; tail B: ${TAIL_B:-none}; promise $PROM): $*"
	echo x >>$LOGS/fail
}

# check_state: the checks on the current scratch state; counters in $LOGS
check_state() {
	state_dev
	src=$?
	if [ $src = 2 ]; then
		bad "XFS does not mount"
		return
	elif [ $src != 0 ]; then
		bad "replay failed"
		return
	fi
	case $KIND in
	raw) set -- /dev/mapper/sA ;;
	xfs) set -- /mnt/cs/r.nvt ;;
	stripe) set -- --stripe 64K /dev/mapper/sA /dev/mapper/sB ;;
	esac
	if [ $KIND = stripe ] && [ $FMT = fdrec ]; then
		# an fdrec header has no stripe fields: the members are read as one device, as md or
		# dm presents them
		echo "0 $((2 * TSZ * 2048)) striped 2 128 /dev/mapper/sA 0 /dev/mapper/sB 0" |
			dmsetup --noudevsync create st || { bad "dm striped"; return; }
		[ -b /dev/mapper/st ] || dmsetup --noudevsync mknodes
		set -- /dev/mapper/st
	fi
	if [ $KIND = stripe ]; then
		pat=$(logreplay pattern --stripe 65536 4096 /dev/mapper/sA /dev/mapper/sB)
	elif [ $KIND = raw ] || [ -e /mnt/cs/r.nvt ]; then
		pat=$(logreplay pattern 4096 ${1##* })
	else
		pat="valid=0 last_nonzero=0 zero_blocks=0"
	fi
	valid=$(echo "$pat" | sed -n 's/.*valid=\([0-9]*\).*/\1/p')
	next=$(echo "$pat" | sed -n 's/.* next=\([0-9]*\).*/\1/p')
	lastnz=$(echo "$pat" | sed -n 's/.*last_nonzero=\([0-9]*\).*/\1/p')
	zeros=$(echo "$pat" | sed -n 's/.*zero_blocks=\([0-9]*\).*/\1/p')
	echo x >>$LOGS/states
	if ! nvtape info --json "$@" >/tmp/i.json 2>/dev/null; then
		# no recording header yet: only before a checkpoint (or the end) made one durable;
		# data may have reached the media before it (nothing vouches for it)
		if [ $PROM != 0 ] || [ $HDR = 1 ]; then
			bad "info fails after a durable header ($pat): $(head -c 300 /tmp/i.json)"
		fi
		echo x >>$LOGS/empty
		[ $KIND = xfs ] && umount_wait /mnt/cs
		[ -b /dev/mapper/st ] && dmsetup --noudevsync remove st
		return
	fi
	dur=$(jnum durable_bytes </tmp/i.json)
	complete=$(jbool complete </tmp/i.json)
	nvtape verify -q --chunk 256K --qd 2 "$@" >/tmp/v1.out 2>&1
	v1=$?
	c1=$(rfield corrupt </tmp/v1.out)
	nvtape recover "$@" >/tmp/r.out 2>&1
	rr=$?
	nvtape verify -q --chunk 256K --qd 2 "$@" >/tmp/v2.out 2>&1
	v2=$?
	c2=$(rfield corrupt </tmp/v2.out)
	rec=$(rfield bytes </tmp/v2.out)
	# stream time between what recover kept and the end of what the state holds
	upto=0
	if [ $FMT = nvtape ] && [ $complete = false ] && [ -n "$rec" ]; then
		if [ $KIND = stripe ]; then
			upto=$(logreplay pattern --stripe 65536 --upto $rec 4096 /dev/mapper/sA /dev/mapper/sB)
		else
			upto=$(logreplay pattern --upto $rec 4096 ${1##* })
		fi
		upto=$(echo "$upto" | sed -n 's/.*upto_next=\([0-9]*\).*/\1/p')
	fi
	[ $KIND = xfs ] && umount_wait /mnt/cs
	[ -b /dev/mapper/st ] && dmsetup --noudevsync remove st
	[ $rr = 0 ] || { bad "recover exited $rr: $(tail -n 2 /tmp/r.out)"; return; }
	[ $v2 = 0 ] || [ $v2 = 2 ] || { bad "verify after recover exited $v2: $(tail -n 3 /tmp/v2.out)"; return; }
	[ -n "$rec" ] || { bad "no verify result"; return; }
	if [ $FMT = nvtape ]; then
		[ $v1 = 0 ] || [ $v1 = 2 ] || { bad "verify before recover exited $v1: $(tail -n 3 /tmp/v1.out)"; return; }
		[ "$c1" = 0 ] && [ "$c2" = 0 ] || { bad "corrupt beats: $c1 before recover, $c2 after ($pat)"; return; }
		[ $complete = true ] || [ "$dur" -le "$valid" ] || { bad "the header vouches for $dur bytes, the state holds $valid"; return; }
		[ "$rec" -ge "$PROM" ] || { bad "recover kept $rec bytes, the durable checkpoint promised $PROM"; return; }
		if [ $complete = false ]; then
			[ "$rec" -le "$valid" ] || { bad "recover kept $rec bytes, the state holds $valid"; return; }
			loss=$((valid - rec))
			[ "$upto" -gt 0 ] && lsec=$(awk -v a=$next -v b=$upto 'BEGIN { printf "%.3f", (a - b) * 16 / 3e6 }')
			[ -z "$lsec" ] || awk -v a=$lsec 'BEGIN { exit !(a <= 1.0) }' ||
				{ bad "lost $lsec s of stream ($loss bytes), more than one checkpoint interval"; return; }
		else
			loss=0
		fi
	else
		# fdrec: everything up to the last non-zero block kept, every hole counted
		if [ $complete = false ]; then
			[ "$rec" = "$lastnz" ] || { bad "recover kept $rec bytes, the last non-zero block ends at $lastnz"; return; }
		fi
		[ "$rec" -ge "$valid" ] || { bad "recover kept $rec bytes of the $valid the state holds"; return; }
		[ "$c2" = $((zeros * 256)) ] || { bad "verify counts $c2 corrupt beats, the state has $zeros zero blocks below its last data"; return; }
		[ "$zeros" = 0 ] || [ $v2 = 2 ] || { bad "verify passes a recording with $zeros zero blocks"; return; }
		loss=0
	fi
	[ -n "$lsec" ] && awk -v a=$lsec -v b=$(cat $LOGS/worsts 2>/dev/null || echo 0) 'BEGIN { exit !(a > b) }' &&
		echo $lsec >$LOGS/worsts
	lsec=
	worst=$(cat $LOGS/worst 2>/dev/null || echo 0)
	[ $loss -le $worst ] || {
		echo $loss >$LOGS/worst
		echo "$LABEL tail A: ${TAIL_A:-none} tail B: ${TAIL_B:-none} promise $PROM kept $rec held $valid" >$LOGS/worst.state
	}
}

# pick N COUNT: 0-based flush ordinals to check: all when COUNT <= N+2, else N spread evenly
# plus the first and the last
pick() {
	awk -v n=$1 -v c=$2 'BEGIN { last = -1; for (i = 0; i < c; i++) {
		k = (c <= n + 2 || i == 0 || i == c - 1) ? i : int(i * n / c);
		if (c <= n + 2 || i == 0 || i == c - 1 || k != last) print i; last = k } }'
}

# tails LOG FROM TO SEED NKEEP NRANDOM: the between-flush states of one segment (entries
# FROM..TO-1, after a flush) on top of the state at FROM: NKEEP in-order prefixes spread evenly,
# NRANDOM random subsets
tails() {
	nkeep=$5
	nrand=$6
	v=$(($3 - $2))
	[ $v -gt 0 ] || return 0
	q=1
	last=0
	while [ $q -le $nkeep ]; do
		k=$((v * q / (nkeep + 1)))
		q=$((q + 1))
		[ $k -gt $last ] || continue
		last=$k
		set_tail "$2 $3 --keep $k"
		LABEL="$L0+keep$k"
		check_state
	done
	for s in $(seq $nrand); do
		set_tail "$2 $3 --random $(($4 * 10 + s))"
		LABEL="$L0+random$s"
		check_state
	done
	set_tail ""
}
set_tail() { if [ "$WHICH" = B ]; then TAIL_B=$1; else TAIL_A=$1; fi; }

# logs_after LOG FILE: the flushes after the rec-start mark into FILE; prints the mark's index
logs_after() {
	m=$(logreplay mark $1 rec-start) || return 1
	logreplay flushes $1 | awk -v m=$m '$1 > m' >$2
	echo $m
}

# run_states: every selected flush point of the logs on lA (lB) after the recording started, and
# states between them; the bases start as the device was when it started (for XFS: after mkfs
# and mount, all of it flushed)
run_states() {
	rm -f $LOGS/*
	logreplay zero /dev/mapper/bA $((TSZ * MiB)) || return 1
	logreplay zero /dev/mapper/bB $((TSZ * MiB)) || return 1
	mA=$(logs_after /dev/mapper/lA /tmp/fa) || return 1
	nA=$(logreplay list /dev/mapper/lA | grep -c '^[0-9]')
	fa=$(wc -l </tmp/fa)
	logreplay replay /dev/mapper/lA /dev/mapper/bA 0 $((mA + 1)) >/dev/null || return 1
	posA=$((mA + 1))
	posB=0
	if [ $KIND = stripe ]; then
		mB=$(logs_after /dev/mapper/lB /tmp/fb) || return 1
		nB=$(logreplay list /dev/mapper/lB | grep -c '^[0-9]')
		[ "$(wc -l </tmp/fb)" = $fa ] || {
			echo "the members' logs hold $fa and $(wc -l </tmp/fb) flushes: cannot pair them"
			return 1
		}
		logreplay replay /dev/mapper/lB /dev/mapper/bB 0 $((mB + 1)) >/dev/null || return 1
		posB=$((mB + 1))
	fi
	pick $MAXPTS $fa >/tmp/pick
	# between-flush states per segment: about a dozen in-order ones in all (at least one per
	# segment) and one random subset per segment
	nk=$((12 / (fa + 1)))
	[ $nk -ge 1 ] || nk=1
	TAIL_A=
	TAIL_B=
	PROM=0
	HDR=0
	# before the first flush: nothing is durable, any subset of the writes may be on the media
	L0="start"
	WHICH=A tails /dev/mapper/lA $posA $(sed -n 1p /tmp/fa) 0 $nk 2
	[ $KIND = stripe ] && WHICH=B tails /dev/mapper/lB $posB $(sed -n 1p /tmp/fb) 0 $nk 2
	pt=0
	while [ $pt -lt $fa ]; do
		fA=$(sed -n "$((pt + 1))p" /tmp/fa)
		nextA=$(sed -n "$((pt + 2))p" /tmp/fa)
		[ -n "$nextA" ] || nextA=$nA
		if [ $KIND = stripe ]; then
			fB=$(sed -n "$((pt + 1))p" /tmp/fb)
			nextB=$(sed -n "$((pt + 2))p" /tmp/fb)
			[ -n "$nextB" ] || nextB=$nB
		fi
		if ! grep -qx $pt /tmp/pick; then
			pt=$((pt + 1))
			continue
		fi
		if [ $KIND = stripe ]; then
			# one member's flush done, the other's not yet: each order on alternate points
			if [ $((pt % 2)) = 0 ]; then
				logreplay replay /dev/mapper/lA /dev/mapper/bA $posA $((fA + 1)) >/dev/null || return 1
				posA=$((fA + 1))
				L0="flushA$pt"
				WHICH=B tails /dev/mapper/lB $posB $fB $pt 0 1
			else
				logreplay replay /dev/mapper/lB /dev/mapper/bB $posB $((fB + 1)) >/dev/null || return 1
				posB=$((fB + 1))
				L0="flushB$pt"
				WHICH=A tails /dev/mapper/lA $posA $fA $pt 0 1
			fi
			logreplay replay /dev/mapper/lB /dev/mapper/bB $posB $((fB + 1)) >/dev/null || return 1
			posB=$((fB + 1))
		fi
		logreplay replay /dev/mapper/lA /dev/mapper/bA $posA $((fA + 1)) >/dev/null || return 1
		posA=$((fA + 1))
		# the flush point: the header it made durable is the promise from here on
		TAIL_A=
		TAIL_B=
		LABEL="flush$pt"
		check_state
		grep -q '"exit":0' /tmp/i.json 2>/dev/null && HDR=1
		if [ -f /tmp/i.json ] && [ "$(jbool complete </tmp/i.json)" = false ]; then
			PROM=$(jnum durable_bytes </tmp/i.json)
			[ -n "$PROM" ] || PROM=0
		fi
		rm -f /tmp/i.json
		echo x >>$LOGS/flushes
		L0="flush$pt"
		# the segment after it: on one member of a stripe (alternately), the other flushed
		if [ $KIND != stripe ] || [ $((pt % 2)) = 0 ]; then
			WHICH=A tails /dev/mapper/lA $posA $nextA $((pt + 1)) $nk 1
		else
			WHICH=B tails /dev/mapper/lB $posB $nextB $((pt + 1)) $nk 1
		fi
		pt=$((pt + 1))
	done
	n=$(wc -l <$LOGS/states)
	nf=$(cat $LOGS/flushes 2>/dev/null | wc -l)
	ne=$(cat $LOGS/empty 2>/dev/null | wc -l)
	nbad=$(cat $LOGS/fail 2>/dev/null | wc -l)
	worst=$(cat $LOGS/worst 2>/dev/null || echo 0)
	echo "NVT-INFO crash-$KIND-$FMT: $n crash states checked ($nf of $fa flush points, $((n - nf)) between flushes, $ne without a header yet), $nbad failed; worst loss $worst bytes, $(cat $LOGS/worsts 2>/dev/null || echo 0) s of stream time$([ -f $LOGS/worst.state ] && echo ": $(cat $LOGS/worst.state)")"
	[ $nbad = 0 ]
}

crash_case() {
	KIND=$1
	FMT=$2
	TSZ=8
	[ $KIND = xfs ] && TSZ=32
	slices || return 1
	record $KIND $FMT || return 1
	run_states
}
for kind in raw xfs stripe; do
	for fmt in nvtape fdrec; do
		check crash-$kind-$fmt crash_case $kind $fmt
	done
done
