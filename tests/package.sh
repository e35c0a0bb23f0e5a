#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages as a user gets them: build libnvtape1, libnvtape-dev and nvtape with
# dpkg-buildpackage in a temporary copy of the tree (tracked and new files, not build
# directories), install them with apt-get, check the program, its manual pages and completion,
# build programs against the installed libnvtape-dev with pkg-config (tests/package_check.c,
# as C and C++, and examples/*.c when that folder exists) and run the check, then purge the
# packages again. Not a meson test: it rebuilds everything. Needs root (it installs packages).
# Ends with "package: N passed, N failed".
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
trap 'apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

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
if ! (cd "$src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	tail -40 "$tmp/build.log"
	failed=$((failed + 1))
	echo "FAILED: dpkg-buildpackage -us -uc -b"
	finish
fi
build_s=$(($(date +%s) - t0))
passed=$((passed + 1))
echo "ok: dpkg-buildpackage -us -uc -b ($build_s s)"
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
step "nvtape holds the program, man pages and completion" has nvtape '^/usr/bin/nvtape$' \
	'^/usr/share/man/man1/nvtape\.1\.gz$' '^/usr/share/man/man1/nvtape-record\.1\.gz$' \
	'^/usr/share/bash-completion/completions/nvtape$'

# --- install
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]}" >"$tmp/install.log" 2>&1; then
	tail -20 "$tmp/install.log"
	failed=$((failed + 1))
	echo "FAILED: apt-get install ${debs[*]}"
	finish
fi
passed=$((passed + 1))
echo "ok: apt-get install of the three packages"
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
echo "package: dpkg-buildpackage took $build_s s"
finish
