#!/bin/bash
# SPDX-License-Identifier: MIT
# Every public header compiles on its own, as C (gcc -std=gnu11) and as C++ (g++ -std=c++17),
# warning-free: a file holding only `#include <nvtape/NAME.h>` for each include/nvtape/*.h.
# Catches a header that relies on an include it does not make, or that C++ refuses.
# Usage: headers.sh INCLUDE-DIR
set -u
inc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
for h in "$inc"/nvtape/*.h; do
	name=$(basename "$h")
	printf '#include <nvtape/%s>\n' "$name" >"$tmp/t.c"
	cp "$tmp/t.c" "$tmp/t.cc"
	for lang in c c++; do
		if [ $lang = c ]; then
			cmd=(gcc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/t.c")
		else
			cmd=(g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/t.cc")
		fi
		if out=$("${cmd[@]}" 2>&1); then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "FAILED: $name as $lang"
			printf '%s\n' "$out" | head -20
		fi
	done
done
[ $((passed + failed)) -gt 0 ] || { echo "headers: no header in $inc/nvtape"; exit 1; }
echo "headers: $passed compiled cleanly, $failed did not"
[ $failed = 0 ]
