# SPDX-License-Identifier: MIT
# Bash completion for nvtape. Everything it offers comes from the program at completion time:
# the commands, engines, sources and sinks from the hidden `nvtape list ...`, each command's
# options (and the values an option or the command's first word spells as a|b|c) from
# `nvtape COMMAND --help`. Words it has nothing for fall back to file names.

# The nvtape being completed: the word typed (./build/nvtape, ~/bin/nvtape) when it runs.
_nvtape_prog()
{
	local p=${COMP_WORDS[0]}
	# shellcheck disable=SC2088 # the word as typed: a literal ~/
	[[ $p == "~/"* ]] && p=$HOME/${p#"~/"}
	if [[ $p == */* && -x $p ]] || command -v "$p" >/dev/null 2>&1; then
		printf '%s\n' "$p"
	else
		printf 'nvtape\n'
	fi
}

# Every --long and -s name in the usage lines and the option column of `nvtape CMD --help`.
_nvtape_options()
{
	"$1" "$2" --help 2>/dev/null |
		sed -n -e 's/^ *\(Usage\|or\): \(.*\)$/\2/p' -e 's/^ \{1,\}\(-.*\)$/\1/p' |
		sed 's/  .*//' | grep -oE -- '(^|[][ ,|])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ ,|]//' |
		sort -u
}

# The values an option's help line spells out: "--format nvtape|fdrec" gives nvtape fdrec;
# a value may hold a "-" ("sigmf-meta").
_nvtape_option_values()
{
	"$1" "$2" --help 2>/dev/null |
		sed -n "s/^ \{1,\}.*$3 \([a-z0-9][a-z0-9-]*\(|[a-z0-9][a-z0-9-]*\)\{1,\}\).*/\1/p" |
		head -n 1 | tr '|' ' '
}

_nvtape()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd prog words
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# "--engine=nv": bash splits at the "=" (COMP_WORDBREAKS)
	if [[ $cur == "=" ]]; then
		cur=
	elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	COMPREPLY=()
	prog=$(_nvtape_prog)
	if ((COMP_CWORD == 1)); then
		words="$("$prog" list commands 2>/dev/null) --help --version"
		mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	case $prev in
	--engine) words=$("$prog" list engines 2>/dev/null) ;;
	--source) words=$("$prog" list sources 2>/dev/null) ;;
	--sink) words=$("$prog" list sinks 2>/dev/null) ;;
	--*) words=$(_nvtape_option_values "$prog" "$cmd" "$prev") ;;
	*)
		if [[ $cur == -* ]]; then
			words=$(_nvtape_options "$prog" "$cmd")
		elif ((COMP_CWORD == 2)); then
			# a first word the usage line spells as a|b ("nvtape bench record|play")
			words=$("$prog" "$cmd" --help 2>/dev/null |
				sed -n "1s/^Usage: [^ ]* $cmd \([a-z0-9][a-z0-9-]*\(|[a-z0-9][a-z0-9-]*\)\{1,\}\) .*/\1/p" |
				tr '|' ' ')
		fi
		;;
	esac
	[[ -n $words ]] && mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
	return 0
}
complete -o default -F _nvtape nvtape
