#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages as a user gets them: in a temporary copy of the tree (tracked and new
# files, not build directories) run README's "As Debian packages" commands word for word
# (scripts/deps, dpkg-buildpackage, apt install of the three packages), check the program, its
# manual pages, completion and Recommends, build README's push-API example with README's own
# pkg-config line and programs against the installed libnvtape-dev (tests/package_check.c, as
# C and C++, and examples/*.c when that folder exists), run README's Python examples against
# the installed modules, then purge the packages again. Not a meson test: it rebuilds
# everything. Needs root (it installs packages). Ends with "package: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
[ "$(id -u)" = 0 ] || { echo "package: needs root (installs and purges packages)"; exit 1; }
"$top/scripts/deps" build package || exit 1
passed=0
failed=0
step() { # step NAME CMD...
	if "${@:2}"; then passed=$((passed + 1)); echo "ok: $1"; else failed=$((failed + 1)); echo "FAILED: $1"; fi
}
finish() {
	echo
	echo "package: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}
pkgs=(nvtape libnvtape-dev libnvtape1)
for p in "${pkgs[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		echo "package: $p is installed already; purge it first (this script purges it at the end)"
		exit 1
	fi
done
version=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" meson.build | head -n 1)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
tmp=$(mktemp -d /tmp/nvtape-package.XXXXXX)
src_installed=
cleanup() {
	apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
	if [ -n "$src_installed" ]; then
		ninja -C "$src/build" uninstall >/dev/null 2>&1
		ldconfig
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
# README's commands run as a user's shell runs them: the system's PATH (its python3), no
# pkg-config override
syspath=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# readme_block LANG REGEX: the first ```LANG block of README.md after a line matching REGEX
readme_block() {
	awk -v lang="$1" -v re="$2" '
		!found && $0 ~ re { found = 1; next }
		found == 1 && $0 == "```" lang { found = 2; next }
		found == 2 && $0 == "```" { exit }
		found == 2 { print }' "$top/README.md"
}
readme_block sh '^\*\*As Debian packages:\*\*$' >"$tmp/readme-package.sh"
step "README's package commands: scripts/deps build package, dpkg-buildpackage, apt install of all three" \
	bash -c "grep -q '^scripts/deps build package' '$tmp/readme-package.sh' &&
	grep -q '^dpkg-buildpackage ' '$tmp/readme-package.sh' &&
	grep -q '^cd \.\. && apt install .*libnvtape-dev_' '$tmp/readme-package.sh'"

# --- build
src=$tmp/nvtape-$version
mkdir -p "$src"
# shellcheck disable=SC2016 # $1 is for the inner sh
git ls-files -z -c -o --exclude-standard | xargs -0 -I{} sh -c '[ -e "$1" ] && printf "%s\0" "$1"' _ {} |
	tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
changelog_version=$(cd "$src" && dpkg-parsechangelog -S Version)
step "debian/changelog version $changelog_version is meson's $version" \
	test "${changelog_version%%-*}" = "$version"
t0=$(date +%s)
# README's block in the source tree, as a shell runs it (yes answers apt if it asks about the
# recommended packages it would add)
if ! yes | (cd "$src" && env PATH=$syspath DEBIAN_FRONTEND=noninteractive DEB_BUILD_OPTIONS=nocheck \
	bash -ex "$tmp/readme-package.sh") >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log"
	failed=$((failed + 1))
	echo "FAILED: README's package commands (above)"
	finish
fi
build_s=$(($(date +%s) - t0))
passed=$((passed + 1))
echo "ok: README's package commands ran: built and installed ($build_s s)"
debs=()
for p in "${pkgs[@]}"; do
	f=$(ls "$tmp"/"${p}"_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] && debs+=("$f")
done
step "three packages built (${#debs[@]}: $(cd "$tmp" && ls ./*.deb | tr '\n' ' '))" test ${#debs[@]} = 3
[ ${#debs[@]} = 3 ] || finish

contents() { dpkg-deb -c "$tmp/$1"_*.deb | awk '{print $6}' | sed 's|^\./|/|'; }
has() { # has PACKAGE REGEX...: every REGEX matches a path the package holds
	local p=$1 re
	shift
	for re in "$@"; do contents "$p" | grep -qE "$re" || { echo "  $p lacks $re"; return 1; }; done
}
step "libnvtape1 holds the .so.1 and nothing for developers" has libnvtape1 \
	"^/usr/lib/$multiarch/libnvtape\.so\.1$" "^/usr/lib/$multiarch/libnvtape\.so\.$version$"
step "libnvtape1 holds no header, .a or .pc" \
	bash -c "! dpkg-deb -c '$tmp'/libnvtape1_*.deb | grep -E '\.h$|\.a$|\.pc$|/libnvtape\.so$'"
step "libnvtape-dev holds headers, .so, .a, .pc" has libnvtape-dev \
	'^/usr/include/nvtape/nvtape\.h$' '^/usr/include/nvtape/units\.h$' \
	"^/usr/lib/$multiarch/libnvtape\.so$" "^/usr/lib/$multiarch/libnvtape\.a$" \
	"^/usr/lib/$multiarch/pkgconfig/nvtape\.pc$"
step "nvtape holds the program, man pages, completion and the Python modules" has nvtape '^/usr/bin/nvtape$' \
	'^/usr/share/man/man1/nvtape\.1\.gz$' '^/usr/share/man/man1/nvtape-record\.1\.gz$' \
	'^/usr/share/bash-completion/completions/nvtape$' '^/usr/share/nvtape/python/nvtape\.py$' \
	'^/usr/share/nvtape/python/nvtape_producer\.py$'
step "nvtape recommends what its Python reader imports (python3-numpy, python3-crc32c)" bash -c \
	"dpkg-deb -f '$tmp'/nvtape_*.deb Recommends | tr ',' '\n' | sed 's/^ *//; s/ .*//' >'$tmp/recommends' &&
	grep -qx python3-numpy '$tmp/recommends' && grep -qx python3-crc32c '$tmp/recommends' &&
	grep -q '^    import numpy as np$' '$src/python/nvtape.py' && grep -q '^    import crc32c ' '$src/python/nvtape.py'"

# --- installed by README's apt line
step "the three packages are installed" bash -c \
	"for p in ${pkgs[*]}; do dpkg-query -W -f='\${Status}' \$p | grep -q 'install ok installed' || exit 1; done"
step "nvtape --version prints nvtape $version" \
	bash -c "[ \"\$(/usr/bin/nvtape --version)\" = 'nvtape $version' ]"
step "nvtape is a client of the installed libnvtape.so.1, and its package depends on libnvtape1" \
	bash -c "ldd /usr/bin/nvtape | grep -qE '^\s*libnvtape\.so\.1 => (/usr)?/lib/$multiarch/libnvtape\.so\.1 ' &&
	dpkg-query -W -f='\${Depends}' nvtape | grep -q 'libnvtape1'"
step "man -w nvtape-record" bash -c "man -w nvtape-record | grep -qx /usr/share/man/man1/nvtape-record.1.gz"
for c in $(/usr/bin/nvtape list commands); do
	step "man page of nvtape $c renders" bash -c "MANWIDTH=80 LC_ALL=C man nvtape-$c 2>&1 | grep -qE '^ +nvtape-$c +- '"
done
step "bash completion is where bash-completion loads it, and completes" bash -c '
	d=$(pkg-config --variable=completionsdir bash-completion)
	source "$d/nvtape" && complete -p nvtape >/dev/null &&
	COMP_WORDS=(nvtape pl) COMP_CWORD=1 && _nvtape && [ "${COMPREPLY[*]}" = play ] &&
	COMP_WORDS=(nvtape record --engine nv) COMP_CWORD=3 && _nvtape && [ "${COMPREPLY[*]}" = nvme ]'

# --- README's push-API example, built with README's own line: its pkg-config needs
# libnvtape-dev (dma_fill and fifo_lost, "yours" in README, are added here)
readme_block c '^### From your program: the push API$' >"$tmp/my.c"
cat >>"$tmp/my.c" <<'EOF'
/* the functions README leaves to the reader: nothing filled, nothing lost */
#include <string.h>
size_t dma_fill(void *dst, size_t room) { memset(dst, 0, room); return room; }
uint64_t fifo_lost(void) { return 0; }
EOF
cc_line=$(readme_block sh '^### From your program: the push API$')
step "README's example builds with README's line ($cc_line) and runs on the installed library" \
	bash -c "[ \"\$1\" = 'cc my.c \$(pkg-config --cflags --libs nvtape)' ] && cd '$tmp' &&
	PATH=$syspath && eval \"\$1\" && ldd ./a.out | grep -qE '^\s*libnvtape\.so\.1 => (/usr)?/lib/$multiarch/libnvtape\.so\.1 '" _ "$cc_line"

# --- README's Python, as written, on recordings the installed nvtape made: the snippet (a
# recording and a stripe of two files) and the shell lines (a stripe written with
# --member-offset 1M); the installed reader computes CRC32C with the recommended crc32c module
mkdir -p "$tmp/py-snippet" "$tmp/py-shell"
readme_block python '^## Read it in Python$' >"$tmp/py-snippet/snippet.py"
readme_block sh '^From the shell \(exit 0 clean' >"$tmp/py-shell/lines.sh"
step "README's Python snippet runs with the system python3 on the installed module" bash -c "
	cd '$tmp/py-snippet' && PATH=$syspath &&
	/usr/bin/nvtape record -q --size 16M run1.nvt >/dev/null 2>&1 && /usr/bin/nvtape record -q --size 16M m0.nvt m1.nvt >/dev/null 2>&1 &&
	grep -q '/usr/share/nvtape/python' snippet.py && python3 snippet.py >snippet.out"
step "README's Python shell lines (python3 -m nvtape info, nvtape.py check) exit 0" bash -c "
	cd '$tmp/py-shell' && PATH=$syspath &&
	/usr/bin/nvtape record -q --size 16M run1.nvt >/dev/null 2>&1 &&
	/usr/bin/nvtape record -q --member-offset 1M --size 16M m0.nvt m1.nvt >/dev/null 2>&1 &&
	[ \$(grep -c /usr/share/nvtape/python lines.sh) = 3 ] && bash -e lines.sh >lines.out &&
	[ \$(grep -c '^RESULT pass exit=0$' lines.out) = 2 ]"
if dpkg-query -W -f='${Status}' python3-crc32c 2>/dev/null | grep -q "install ok installed"; then
	step "the installed reader's check uses python3-crc32c" \
		grep -q "(computed with crc32c)" "$tmp/py-shell/lines.out"
fi

# --- build against libnvtape-dev
export PKG_CONFIG_LIBDIR=/usr/lib/$multiarch/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig
cflags=$(pkg-config --cflags nvtape)
libs=$(pkg-config --libs nvtape)
step "pkg-config --modversion nvtape is $version" test "$(pkg-config --modversion nvtape)" = "$version"
step "the installed header is the one used" bash -c \
	"cc -M $cflags '$top/tests/package_check.c' -DEXPECTED_VERSION=1 | grep -q '/usr/include/nvtape/units.h'"
build() { # build OUT COMPILER SOURCE [ARGS...]
	local out=$1 compiler=$2 source=$3
	shift 3
	# shellcheck disable=SC2086
	$compiler -Wall -Wextra -Werror "$@" -o "$tmp/$out" "$source" $cflags $libs
}
step "package_check.c builds with cc \$(pkg-config --cflags --libs nvtape)" \
	build check-c cc "$top/tests/package_check.c" "-DEXPECTED_VERSION=\"$version\""
step "package_check.c runs against the installed libnvtape.so.1" bash -c \
	"'$tmp/check-c' && ldd '$tmp/check-c' | grep -qE '^\s*libnvtape\.so\.1 => (/usr)?/lib/$multiarch/libnvtape\.so\.1 '"
step "package_check.c builds as C++ (extern \"C\" headers)" \
	build check-cxx "c++ -x c++" "$top/tests/package_check.c" "-DEXPECTED_VERSION=\"$version\""
step "the C++ build runs" "$tmp/check-cxx"
step "package_check.c links the static libnvtape.a" bash -c \
	"cc -Wall -Wextra -Werror -DEXPECTED_VERSION='\"$version\"' -o '$tmp/check-static' \
	'$top/tests/package_check.c' $cflags /usr/lib/$multiarch/libnvtape.a \
	\$(pkg-config --static --libs-only-l nvtape | sed 's/-lnvtape//') &&
	'$tmp/check-static' && ! ldd '$tmp/check-static' | grep -q libnvtape"
if [ -d "$top/examples" ]; then
	for ex in "$top"/examples/*.c; do
		[ -e "$ex" ] || continue
		step "examples/$(basename "$ex") builds against libnvtape-dev" \
			build "example-$(basename "$ex" .c)" cc "$ex"
	done
fi
# the example producer records through the installed library; the installed nvtape finds its
# overflows at the positions the drop index records
if [ -x "$tmp/example-dma_producer" ]; then
	step "examples/dma_producer records through the installed library, drops indexed" bash -c \
		"'$tmp/example-dma_producer' '$tmp/dma.nvt' 50 1 300 >'$tmp/dma.out'; [ \$? = 2 ] &&
		grep -q 'reason=limit' '$tmp/dma.out' &&
		/usr/bin/nvtape verify '$tmp/dma.nvt' >'$tmp/dma.verify'; [ \$? = 2 ] &&
		grep -q ' drops_match=1 ' '$tmp/dma.verify' && ! grep -q ' gaps=0 ' '$tmp/dma.verify'"
fi
# a producer process through the installed header-only client (and the installed Python one)
# into the installed nvtape's shm source
shm_rec() { # shm_rec NAME PRODUCER-COMMAND: the recording's RESULT in $tmp/NAME.out
	echo "/usr/bin/nvtape record -q --source shm:'$tmp/$1.sock' --chunk 1M --chunks 4 '$tmp/$1.nvt' \
		>'$tmp/$1.out' 2>'$tmp/$1.err' & r=\$!
	for i in \$(seq 200); do grep -qs 'waiting for a producer' '$tmp/$1.err' && break; sleep 0.05; done
	$2 >/dev/null && wait \$r"
}
if [ -x "$tmp/example-shm_producer" ]; then
	step "examples/shm_producer (the installed nvtape/producer.h) feeds the installed nvtape --source shm" \
		bash -c "$(shm_rec shm "'$tmp/example-shm_producer' '$tmp/shm.sock' 16777216") &&
		grep -q ' bytes=16777216 ' '$tmp/shm.out'"
fi
step "the installed Python producer (/usr/share/nvtape/python) feeds it too" \
	bash -c "$(shm_rec py "env PYTHONPATH=/usr/share/nvtape/python python3 -c \"import nvtape_producer as n; p = n.Producer('$tmp/py.sock'); p.write(bytes(3 << 20)); p.close()\"") &&
	grep -q ' bytes=3145728 ' '$tmp/py.out'"

# --- remove
step "apt-get purge -y ${pkgs[*]}" bash -c \
	"DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq ${pkgs[*]} >/dev/null 2>&1 && ! [ -e /usr/bin/nvtape ] &&
	! [ -e /usr/lib/$multiarch/libnvtape.so.1 ] && ! [ -e /usr/include/nvtape ]"

# --- README's source install, word for word, in the same copy of the tree (its build
# directory is new), then uninstalled again: the command runs, pkg-config finds the library
# under /usr/local, the Python modules are where README says
readme_block sh '^\*\*From source:\*\*$' >"$tmp/readme-source.sh"
if [ -e /usr/local/bin/nvtape ] || [ -e "/usr/local/lib/$multiarch/libnvtape.so.1" ]; then
	echo "skipped: README's source install: nvtape is in /usr/local already (ninja uninstall it first)"
else
	src_installed=1
	t0=$(date +%s)
	if (cd "$src" && env -u PKG_CONFIG_LIBDIR PATH=$syspath bash -ex "$tmp/readme-source.sh") \
		</dev/null >"$tmp/source.log" 2>&1; then
		passed=$((passed + 1))
		echo "ok: README's source install commands ran ($(($(date +%s) - t0)) s)"
	else
		tail -30 "$tmp/source.log"
		failed=$((failed + 1))
		echo "FAILED: README's source install commands (above)"
	fi
	step "the source install's nvtape runs (/usr/local/bin/nvtape --version)" \
		bash -c "[ \"\$(PATH=$syspath nvtape --version)\" = 'nvtape $version' ] && [ \"\$(PATH=$syspath command -v nvtape)\" = /usr/local/bin/nvtape ]"
	step "pkg-config finds the source install's library under /usr/local" \
		bash -c "[ \"\$(env -u PKG_CONFIG_LIBDIR pkg-config --variable=prefix nvtape)\" = /usr/local ]"
	step "its Python modules are in /usr/local/share/nvtape/python, as README says" bash -c \
		"grep -q '/usr/local/share/nvtape/python' '$top/README.md' &&
		cd /tmp && PATH=$syspath PYTHONPATH=/usr/local/share/nvtape/python python3 -c 'import nvtape, nvtape_producer'"
	step "ninja -C build uninstall leaves nothing of nvtape in /usr/local" bash -c \
		"ninja -C '$src/build' uninstall >/dev/null && ldconfig &&
		[ -z \"\$(find /usr/local -name '*nvtape*' -print -quit)\" ]"
	src_installed=
fi
echo "package: dpkg-buildpackage took $build_s s"
finish
