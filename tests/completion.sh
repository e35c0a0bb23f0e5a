#!/bin/bash
# SPDX-License-Identifier: MIT
# Bash completion as bash runs it: load the completion file, find the function `complete -p
# nvtape` names, call it the way bash does (COMP_WORDS, COMP_CWORD) and check COMPREPLY for
# commands, options, the engine, source and sink names the program lists, and every value list
# an option's help line spells out (a|b|c, values with a "-" too).
# Usage: completion.sh NVTAPE COMPLETION-FILE
set -u
nvtape=$1
# shellcheck disable=SC1090
source "$2" || { echo "completion: cannot load $2"; exit 1; }
spec=$(complete -p nvtape 2>/dev/null) || { echo "completion: no completion for nvtape"; exit 1; }
fn=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
[ -n "$fn" ] || { echo "completion: no function in: $spec"; exit 1; }
passed=0
failed=0
# expect "WORDS..." -- EXPECTED... : complete the last word, COMPREPLY must be exactly EXPECTED
expect() {
	local words=() want=() got
	while [ "$1" != -- ]; do words+=("$1"); shift; done
	shift
	want=("$@")
	COMP_WORDS=("$nvtape" "${words[@]}")
	COMP_CWORD=${#words[@]}
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn" nvtape "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	if [ "$got" = "$(printf '%s\n' "${want[@]}" | sort | tr '\n' ' ')" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAILED: nvtape ${words[*]}<TAB>: got [${got% }], want [${want[*]}]"
	fi
}
expect re -- record recover
# shellcheck disable=SC2046 # one word per name
expect "" -- $("$nvtape" list commands) --help --version
expect record --eng -- --engine
expect record --for -- --force --format
expect verify --j -- --json
expect setup - -- --chunk --fs --mount --md -y --yes -h --help --raid0 --single --teardown --json -q --quiet
expect speedtest --re -- --read --report
expect record --engine n -- null nvme
# shellcheck disable=SC2046
expect record --engine "" -- $("$nvtape" list engines)
expect record --engine = n -- null nvme
# shellcheck disable=SC2046
expect record --source "" -- $("$nvtape" list sources)
expect record --source s -- stdin shm
expect record --dr -- --drops-from
expect record --drops-from "" --
expect play --sink c -- checker
expect record --format "" -- nvtape fdrec
expect setup --fs e -- ext4 exfat
expect bench "" -- record play
expect record --rate "" --
expect export --format "" -- raw sigmf sigmf-meta pcapng pcap
expect export --format sigmf -- sigmf sigmf-meta
expect export --format = sigmf- -- sigmf-meta
expect play --timing "" -- original fast
# every option whose help line spells its values as a|b|c completes to exactly those values
# (--engine, --source and --sink come from `nvtape list`); the values are read here with
# another parser than the completion's
for c in $("$nvtape" list commands); do
	while read -r opt vals; do
		case $opt in --engine | --source | --sink) continue ;; esac
		# shellcheck disable=SC2086 # one word per value
		expect "$c" "$opt" "" -- ${vals//|/ }
	done < <("$nvtape" "$c" --help 2>/dev/null | grep -E '^ +-' |
		grep -oE -- '--[a-z][a-z0-9-]* [a-z0-9][a-z0-9-]*(\|[a-z0-9][a-z0-9-]*)+' |
		awk '!seen[$1]++')
done
# the lists themselves come from the library
[ "$("$nvtape" list engines | sort | tr '\n' ' ')" = "file null nvme " ] ||
	{ echo "FAILED: nvtape list engines: $("$nvtape" list engines | tr '\n' ' ')"; failed=$((failed + 1)); }
"$nvtape" list nonsense >/dev/null 2>&1
[ $? = 64 ] || { echo "FAILED: nvtape list nonsense did not exit 64"; failed=$((failed + 1)); }
echo "completion: $passed cases right, $failed wrong"
[ $failed = 0 ]
