#!/bin/bash
# SPDX-License-Identifier: MIT
# --json of every command: on small real cases, successes and errors (a missing file, a bad
# option), stdout holds exactly one object, valid against docs/schema/<command>.json, whose exit
# is the process's exit code; strings with control characters and bytes that are not UTF-8 stay
# valid JSON; rates in bits per second and the ambiguous lowercase b.
. "$(dirname "$0")/lib.sh"
schemas=$(cd "$(dirname "$0")/../../docs/schema" && pwd)
python3 -c 'import jsonschema' 2>/dev/null || { echo "SKIP: python3-jsonschema (scripts/deps test)"; exit 77; }

n=0
# js SCHEMA WANT_RC CMD... : run, require the exit code, keep stdout for the validation below
js() {
	local schema=$1 want=$2
	shift 2
	n=$((n + 1))
	"$@" >"$T/j$n.out" 2>"$T/j$n.err" </dev/null
	local rc=$?
	if [ "$rc" != "$want" ]; then
		echo "--- stdout"; cat "$T/j$n.out"; echo "--- stderr"; cat "$T/j$n.err"
		fail "$* -> exit $rc, want $want"
	fi
	printf '%s\t%s\t%s\t%s\n' "$schema" "$rc" "$T/j$n.out" "$*" >>"$T/cases"
	J=$T/j$n.out
}
# jq_ FILE EXPR : assert a Python expression over the object j
jq_() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert $2, j" "$1" || fail "$2"; }

a="$T/a.nvt"
js record 0 "$NVT" record -q --json --rate 800Mbps --size 8M "$a"
jq_ "$J" "j['result']=='pass' and j['stop_reason']=='limit' and j['bytes']==8388608 and j['header']['rate_bps']==100000000"
js record 1 "$NVT" record -q --json --size 1M "$T/no/such/dir/x.nvt"
jq_ "$J" "j['result']=='error' and 'cannot use the directory' in j['error'] and j['stop_reason'] is None"
js record 64 "$NVT" record --json --rate 12Gb "$T/u.nvt"
jq_ "$J" "'12GB' in j['error'] and '12Gbps' in j['error']"
js record 64 "$NVT" record --frobnicate --json "$T/u.nvt"
jq_ "$J" "'unknown option' in j['error']"
[ ! -e "$T/u.nvt" ] || fail "a usage error created the output file"
ok "record: pass at 800 Mbps = 100 MB/s, missing directory, ambiguous 12Gb, unknown option"

cp "$a" "$T/c.nvt"
printf '\x5a' | dd of="$T/c.nvt" bs=1 seek=$((4096 + 16 * 1000)) conv=notrunc status=none
js verify 0 "$NVT" verify --json "$a"
jq_ "$J" "j['beats']==524288 and j['problems']==[] and j['mbps'] is None or j['mbps']>0"
js verify 2 "$NVT" verify --json "$T/c.nvt"
jq_ "$J" "j['result']=='fail' and j['corrupt']==1 and j['problems']==['corrupt', 'checksum'] and j['chunks_bad']==1 and j['error'] is None"
js verify 1 "$NVT" verify --json "$T/missing.nvt"
jq_ "$J" "'No such file' in j['error'] and 'header' not in j"
js verify 64 "$NVT" verify --json --max-errors lots "$a"
python3 -c 'import struct, sys; sys.stdout.buffer.write(b"".join(struct.pack("<I", i) + bytes(60) for i in range(5000) if i != 77))' >"$T/cnt.bin"
js record 2 bash -c "'$NVT' record -q --json --source stdin --check counter:u32le/64 '$T/cnt.nvt' <'$T/cnt.bin'"
jq_ "$J" "j['check_gaps']==1 and j['check_missing']==1 and j['header']['check']=='counter:u32le@0/64'"
js verify 2 "$NVT" verify --json "$T/cnt.nvt"
jq_ "$J" "j['counter_checked'] and j['check']=='counter:u32le@0/64' and j['gap_beats']==1"
js play 2 "$NVT" play -q --json "$T/cnt.nvt"
jq_ "$J" "j['counter_checked'] and j['gaps']==1"
ok "verify: pass, corrupt beat (fail), missing file, bad option; a counter check (record, verify, play)"

js play 0 "$NVT" play -q --json --rate 200Mbps "$a"
jq_ "$J" "j['stop_reason']=='end' and j['bytes']==8388608 and j['sink_rate_bps']==25000000 and abs(j['mbps']-j['bytes']/j['seconds']/1e6)<0.01"
js play 2 "$NVT" play -q --json "$T/c.nvt"
jq_ "$J" "j['result']=='fail' and j['corrupt']==1 and 'corrupt' in j['problems']"
js play 1 "$NVT" play -q --json "$T/missing.nvt"
js play 64 "$NVT" play --json --loop x "$a"
# with --sink stdout the data owns stdout: the object is the last line on stderr
"$NVT" play -q --json --sink stdout --sink stdout "$a" 2>"$T/p.err" | cmp - <(tail -c +4097 "$a" | head -c "$(hdr data_bytes "$a")") || fail "play --sink stdout data"
n=$((n + 1)) && tail -n 1 "$T/p.err" >"$T/j$n.out" && printf 'play\t0\t%s\tplay --sink stdout\n' "$T/j$n.out" >>"$T/cases"
"$NVT" play --json --sink stdout --rate 12Gb "$a" 2>"$T/p.err" >"$T/p.out"
[ $? = 64 ] && [ ! -s "$T/p.out" ] || fail "play --sink stdout usage error on stdout"
n=$((n + 1)) && tail -n 1 "$T/p.err" >"$T/j$n.out" && printf 'play\t64\t%s\tplay --sink stdout --rate 12Gb\n' "$T/j$n.out" >>"$T/cases"
ok "play: pass at 200 Mbps, corrupt beat, missing file, bad option, --sink stdout (object on stderr)"

js info 0 "$NVT" info -q --json "$a"
jq_ "$J" "j['header']['data_bytes']==8388608 and j['drop_events']==[]"
js info 1 "$NVT" info --json "$T/missing.nvt"
js info 64 "$NVT" info --json --frobnicate "$a"
# a name with a control character, a quote, valid UTF-8 and bytes that are not UTF-8
odd=$(printf '%s/odd\001"\303\251\377\376.nvt' "$T")
js info 1 "$NVT" info --json "$odd"
jq_ "$J" "j['path'].endswith('/odd\x01\"\u00e9\u00ff\u00fe.nvt')"
grep -q '\\u0001\\"é\\u00ff\\u00fe' "$J" || fail "escapes: $(cat "$J")"
ok "info: pass, missing file, bad option; a control character, valid UTF-8 and invalid bytes in a string"

js meta 0 "$NVT" meta --json "$a"
jq_ "$J" "j['meta']['nvtape:beat']=='u64le seq, u64le ~seq' and j['path']=='$a'"
js meta 0 "$NVT" meta --json "$a" core:author=nvtape
jq_ "$J" "j['meta']['core:author']=='nvtape'"
js info 0 "$NVT" info -q --json "$a"
jq_ "$J" "j['meta']['core:author']=='nvtape'"
js meta 1 "$NVT" meta --json "$T/missing.nvt"
js meta 64 "$NVT" meta --json "$a" core:datatype=cf33
ok "meta: read, set (info shows it), missing file, bad datatype"

js export 0 "$NVT" export --json --offset 16 --length 4096 -o "$T/e.bin" "$a"
jq_ "$J" "j['offset']==16 and j['length']==4096 and j['chunks_bad']==0 and j['data_path']=='$T/e.bin'"
js export 1 "$NVT" export --json -o "$T/e.bin" "$T/missing.nvt"
js export 64 "$NVT" export --json --format sigmf "$a"
ok "export: a range, a missing file, SigMF without a base name"

"$NVT" record -q --rate 50MB --size 1G "$T/k.nvt" >/dev/null 2>&1 &
pid=$!
wait_header "$T/k.nvt" 2
kill -9 $pid
wait $pid 2>/dev/null
js recover 0 "$NVT" recover -q --json "$T/k.nvt"
jq_ "$J" "j['action']=='recovered' and j['header']['complete'] and not j['before']['complete'] and j['data_bytes']>0"
js recover 0 "$NVT" recover -q --json "$a"
jq_ "$J" "j['action']=='none'"
head -c 8192 /dev/urandom >"$T/random.bin"
js recover 1 "$NVT" recover --json "$T/random.bin"
jq_ "$J" "'bad magic' in j['error'] and j['action'] is None"
js recover 1 "$NVT" recover --json "$T/missing.nvt"
js recover 64 "$NVT" recover --json --frobnicate "$a"
ok "recover: a killed recording, a complete one, bad magic, missing file, bad option"

js bench 0 "$NVT" bench record -q --json --no-sweep --size 32M --chunk 1M --chunks 8 "$T/b.nvt"
jq_ "$J" "j['mode']=='record' and j['unthrottled']['bytes']==33554432 and j['unthrottled']['result']=='pass'"
js bench 1 "$NVT" bench record --json --no-sweep --size 8M "$T/no/such/dir/b.nvt"
js bench 64 "$NVT" bench record --json --from 100mb "$T/b.nvt"
js bench 64 "$NVT" bench --json frob "$T/b.nvt"
ok "bench: an unthrottled run, missing directory, ambiguous --from, bad mode"

js speedtest 0 "$NVT" speedtest -q --json --size 16M --chunk 1M "$T/s.bin"
jq_ "$J" "j['targets'][0]['write']['bytes']==16777216 and j['targets'][0]['read']['corrupt']==0 and j['targets'][0]['result']=='pass'"
js speedtest 1 "$NVT" speedtest --json --read "$T/missing.bin"
jq_ "$J" "j['targets'][0]['result']=='error' and j['targets'][0]['error']"
js speedtest 64 "$NVT" speedtest --json --size 0 "$T/s.bin"
ok "speedtest: write and read back, missing file, bad option"

js setup 64 "$NVT" setup --json --single
js setup 1 "$NVT" setup --json --single --yes "$T/missing.dev"
if [ "$(id -u)" = 0 ] && command -v mkfs.ext4 >/dev/null; then
	make_loop 64M none
	mkdir "$T/vol"
	js setup 64 "$NVT" setup --json --single --fs ext4 --mount "$T/vol" "$DEV"
	jq_ "$J" "'declined' in j['error'] or 'not a terminal' in j['error']"
	MOUNTS=("$T/vol" "${MOUNTS[@]+"${MOUNTS[@]}"}")
	js setup 0 "$NVT" setup -q --json --single --yes --fs ext4 --mount "$T/vol" "$DEV"
	jq_ "$J" "j['mode']=='single' and j['devices']==['$DEV'] and j['fs']=='ext4'"
	findmnt "$T/vol" >/dev/null || fail "setup did not mount"
	js setup 0 "$NVT" setup -q --json --teardown --mount "$T/vol" --md "$T/no-md"
	findmnt "$T/vol" >/dev/null && fail "teardown did not unmount"
	ok "setup: no device, missing device, declined, a loop device made and torn down"
else
	ok "setup: no device, missing device (not root: no loop device)"
fi

python3 - "$schemas" "$T/cases" <<'PY' || fail "JSON validation"
import json, sys
from jsonschema import Draft202012Validator
schemas, cases = sys.argv[1], sys.argv[2]
validators = {}
count = 0
for line in open(cases, encoding="utf-8", errors="surrogateescape"):
    name, rc, path, cmd = line.rstrip("\n").split("\t")
    try:
        text = open(path, "rb").read().decode("utf-8")
    except UnicodeDecodeError as e:
        sys.exit(f"{cmd}: not UTF-8 ({e})")
    dec = json.JSONDecoder(parse_constant=lambda c: sys.exit(f"{cmd}: {c} is not JSON"))
    try:
        obj, end = dec.raw_decode(text)
    except ValueError as e:
        sys.exit(f"{cmd}: not JSON ({e}): {text[:300]!r}")
    if text[end:].strip():
        sys.exit(f"{cmd}: more than one object on stdout: {text[end:][:200]!r}")
    if name not in validators:
        validators[name] = Draft202012Validator(json.load(open(f"{schemas}/{name}.json")))
    errs = sorted(validators[name].iter_errors(obj), key=str)
    if errs:
        sys.exit(f"{cmd}: not valid against {name}.json: {errs[0].message} at {list(errs[0].path)}")
    if obj["exit"] != int(rc):
        sys.exit(f"{cmd}: exit {obj['exit']} in the object, {rc} from the process")
    count += 1
print(f"{count} objects: one each, valid against their schema, exit as the process's")
PY
ok "every object valid against its schema"
echo "json: all passed"
