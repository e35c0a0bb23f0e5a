# Guest suite helpers: each check prints one NVT-CHECK line.
D0=/dev/nvme0n1
D1=/dev/nvme1n1
check() { # check NAME CMD...: PASS when CMD exits 0
	name=$1
	shift
	if out=$("$@" 2>&1); then
		echo "$out" | grep '^NVT-INFO '
		echo "NVT-CHECK PASS $name"
	else
		echo "$out" | grep '^NVT-INFO '
		echo "NVT-CHECK FAIL $name"
		echo "$out" | grep -v '^NVT-INFO ' | tail -n 15 | sed 's/^/    /'
	fi
}
field() { sed -n "s/^RESULT.* $1=\([^ ]*\).*/\1/p" | tail -n 1; }
