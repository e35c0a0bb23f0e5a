#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the manual page of nvtape or of one of its commands with help2man, from the program's
# own --help and --version output, so that the page cannot drift from the program. The NAME
# line is the command's one-line summary from `nvtape --help`.
# Usage: nvtape-man.sh HELP2MAN NVTAPE COMMAND|nvtape OUTPUT
set -eu
help2man=$1
nvtape=$2
cmd=$3
out=$4
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
commands=$("$nvtape" list commands)
see_also=
if [ "$cmd" = nvtape ]; then
	page=nvtape
	help_opt=--help
	# first line: "nvtape X.Y.Z: summary"
	summary=$("$nvtape" --help | sed -n '1s/^nvtape [^:]*: //p')
	for c in $commands; do see_also="$see_also${see_also:+,
}.BR nvtape-$c (1)"; done
else
	page=nvtape-$cmd
	help_opt="$cmd --help"
	summary=$("$nvtape" --help | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
	see_also=".BR nvtape (1)"
fi
[ -n "$summary" ] || { echo "nvtape-man.sh: no summary for $cmd in nvtape --help" >&2; exit 1; }
printf '[NAME]\n%s \\- %s\n[SEE ALSO]\n%s\n' "$page" "$summary" "$see_also" >"$inc"
"$help2man" --no-info --section=1 --include="$inc" --help-option="$help_opt" \
	--version-option=--version --output="$out" "$nvtape"
