#!/bin/bash
# SPDX-License-Identifier: MIT
# The manual pages as a reader sees them: for nvtape and every command `nvtape list commands`
# names, the built page exists, renders with man -l at 80 columns without a groff warning,
# has the NAME line "nvtape-CMD - summary", a SYNOPSIS with the command, and every option that
# `nvtape CMD --help` lists.
# Usage: man.sh NVTAPE MANDIR
set -u
nvtape=$1
dir=$2
export LC_ALL=C MANWIDTH=80
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
bad() { echo "FAILED: $page: $*"; ok=0; }
commands=$("$nvtape" list commands) || { echo "man: nvtape list commands failed"; exit 1; }
[ -n "$commands" ] || { echo "man: nvtape list commands printed nothing"; exit 1; }
for cmd in nvtape $commands; do
	if [ "$cmd" = nvtape ]; then page=nvtape help=("$nvtape" --help) syn="nvtape COMMAND"
	else page=nvtape-$cmd help=("$nvtape" "$cmd" --help) syn="nvtape $cmd"; fi
	ok=1
	if [ ! -s "$dir/$page.1" ]; then
		bad "$dir/$page.1 missing or empty"
	else
		man --warnings -l "$dir/$page.1" >"$tmp/out" 2>"$tmp/err" || bad "man -l exited $?"
		[ -s "$tmp/err" ] && bad "man/groff said: $(head -5 "$tmp/err")"
		[ -s "$tmp/out" ] || bad "renders empty"
		grep -qE "^ +$page +- +[a-z]" "$tmp/out" || bad "no NAME line \"$page - ...\""
		awk '/^SYNOPSIS/ {s = 1; next} /^[A-Z]/ {s = 0} s' "$tmp/out" | grep -qF "$syn" ||
			bad "SYNOPSIS lacks \"$syn\""
		# the option column of --help: every --long / -s name must be on the page
		opts=$("${help[@]}" | sed -n 's/^ \{1,\}\(-.*\)$/\1/p' | sed 's/  .*//' |
			grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ ,]//' | sort -u)
		if [ "$cmd" != nvtape ] && [ -z "$opts" ]; then bad "nvtape $cmd --help lists no option"; fi
		for o in $opts; do
			grep -qF -- "$o" "$tmp/out" || bad "option $o missing"
		done
	fi
	if [ $ok = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
# no page without a command behind it
for f in "$dir"/nvtape-*.1; do
	c=$(basename "$f" .1)
	c=${c#nvtape-}
	printf '%s\n' "$commands" | grep -qx "$c" || { echo "FAILED: $f: no command $c"; failed=$((failed + 1)); }
done
echo "man: $passed pages good, $failed bad"
[ $failed = 0 ]
