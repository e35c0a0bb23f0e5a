#!/bin/bash
# SPDX-License-Identifier: MIT
# The ABI check: the dynamic symbols libnvtape.so.1 defines must be exactly the documented list
# docs/abi/libnvtape.symbols (one name a line, sorted), every one in the NVTAPE_1 version node.
# A function added to, or dropped from, the public API has to be added to (or dropped from)
# that list on purpose; internal helpers leaking out show up as unexpected.
# Lines of the list starting with # are comments.
# Usage: abi.sh LIBNVTAPE.so.1 SYMBOL-LIST
set -u
lib=$1
list=$2
export LC_ALL=C
nm -D --defined-only "$lib" >/dev/null || { echo "abi: nm cannot read $lib"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "0000000000005fb0 T nvt_bench@@NVTAPE_1"; the version node itself is an A symbol
nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | sort >"$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | sort >"$tmp/built"
grep -v -e "^[[:space:]]*$" -e "^#" "$list" >"$tmp/doc"
rc=0
if ! sort -c "$tmp/doc" 2>/dev/null || [ -n "$(uniq -d "$tmp/doc")" ]; then
	echo "abi: $list is not sorted (LC_ALL=C sort -u) or has a name twice"
	rc=1
fi
missing=$(comm -23 <(sort -u "$tmp/doc") "$tmp/built")
unexpected=$(comm -13 <(sort -u "$tmp/doc") "$tmp/built")
unversioned=$(grep -v '@@NVTAPE_1$' "$tmp/versioned")
[ -z "$missing" ] || { printf 'abi: documented but not exported (missing):\n%s\n' "$missing" | sed '2,$s/^/  /'; rc=1; }
[ -z "$unexpected" ] || { printf 'abi: exported but not documented (unexpected):\n%s\n' "$unexpected" | sed '2,$s/^/  /'; rc=1; }
[ -z "$unversioned" ] || { printf 'abi: outside the NVTAPE_1 version node:\n%s\n' "$unversioned" | sed '2,$s/^/  /'; rc=1; }
[ $rc = 0 ] && echo "abi: $(wc -l <"$tmp/built") exported symbols match $list"
exit $rc
