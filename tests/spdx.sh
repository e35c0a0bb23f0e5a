#!/bin/bash
# SPDX-License-Identifier: MIT
# Every tracked source file carries the MIT license tag as its first line (after the shebang
# of a script): "/* SPDX-License-Identifier: MIT */" in C files (.c, .h), and
# "# SPDX-License-Identifier: MIT" in shell, Python, bash completion and Meson files and any
# other file that starts with a shebang. Lists the files that lack it.
#
# The tag was added, and is added to files that lack it, with these two commands (what
# `tests/spdx.sh --fix` runs; a file that has the tag is left as it is):
#   tests/spdx.sh --list c | xargs -r -d '\n' sed -i '1{/SPDX-License-Identifier: MIT/!s|^|/* SPDX-License-Identifier: MIT */\n|}'
#   tests/spdx.sh --list hash | xargs -r -d '\n' sed -i '1{/^#!/{n;/SPDX-License-Identifier: MIT/!s|^|# SPDX-License-Identifier: MIT\n|;b};/SPDX-License-Identifier: MIT/!s|^|# SPDX-License-Identifier: MIT\n|}'
#
# Usage: spdx.sh [SOURCE-DIR]            check (exit 1 listing what lacks the tag)
#        spdx.sh --list c|hash [SOURCE-DIR]  the files of one comment style, one a line
#        spdx.sh --fix [SOURCE-DIR]      add the tag where it is missing
set -u
mode=check
style=
case ${1:-} in
--list) mode=list style=${2:-}; shift 2 ;;
--fix) mode=fix; shift ;;
esac
cd "${1:-$(dirname "$0")/..}" || exit 1
C_TAG='/* SPDX-License-Identifier: MIT */'
HASH_TAG='# SPDX-License-Identifier: MIT'

# "c PATH" or "hash PATH" for every tracked source file
sources() {
	git ls-files -z | while IFS= read -r -d '' f; do
		[ -f "$f" ] || continue
		case $f in
		tests/fuzz/corpus/* | tests/fuzz/regressions/*) ;; # fuzz inputs: data, not source
		tests/vm/fdrec_emu/*.c) echo "gpl $f" ;; # a kernel module: GPL-2.0, the kernel's style
		*.c | *.h) echo "c $f" ;;
		*.py | *.sh | *.bash | meson.build | */meson.build | meson_options.txt) echo "hash $f" ;;
		*) [ "$(head -c 2 "$f")" = '#!' ] && echo "hash $f" ;;
		esac
	done
}

if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "spdx: not a git work tree; nothing to check"
	exit 77
fi
list=$(sources)
case $mode in
list)
	[ "$style" = c ] || [ "$style" = hash ] || { echo "spdx: --list c or --list hash" >&2; exit 64; }
	printf '%s\n' "$list" | sed -n "s/^$style //p"
	exit 0
	;;
fix)
	"$0" --list c . | xargs -r -d '\n' sed -i '1{/SPDX-License-Identifier: MIT/!s|^|/* SPDX-License-Identifier: MIT */\n|}'
	"$0" --list hash . | xargs -r -d '\n' sed -i '1{/^#!/{n;/SPDX-License-Identifier: MIT/!s|^|# SPDX-License-Identifier: MIT\n|;b};/SPDX-License-Identifier: MIT/!s|^|# SPDX-License-Identifier: MIT\n|}'
	exec "$0" .
	;;
esac
n=0
bad=0
while read -r style f; do
	[ -n "$f" ] || continue
	n=$((n + 1))
	if [ "$style" = gpl ]; then
		want='// SPDX-License-Identifier: GPL-2.0'
		got=$(head -n 1 "$f")
	elif [ "$style" = c ]; then
		want=$C_TAG
		got=$(head -n 1 "$f")
	else
		want=$HASH_TAG
		if [ "$(head -c 2 "$f")" = '#!' ]; then got=$(sed -n 2p "$f"); else got=$(head -n 1 "$f"); fi
	fi
	if [ "$got" != "$want" ]; then
		echo "no SPDX tag: $f (want \"$want\" first, after any shebang)"
		bad=$((bad + 1))
	fi
done <<<"$list"
[ $n -gt 0 ] || { echo "spdx: no source file found"; exit 1; }
echo "spdx: $((n - bad)) of $n source files tagged"
[ $bad = 0 ]
