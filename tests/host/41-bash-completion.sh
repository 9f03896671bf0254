#!/bin/bash
# bash completion of nswap2l and nswapd: the words each offers come from
# the program's --help (commands, each command's options, nswapd's
# options), and the values of a few options from fixed lists.
source "$(dirname "$0")/lib.sh"

NSWAP2L=$REPO_DIR/tools/nswap2l/nswap2l
# shellcheck disable=SC1091
source "$REPO_DIR/tools/nswap2l/nswap2l.bash-completion"
# shellcheck disable=SC1091
source "$REPO_DIR/tools/nswapd/nswapd.bash-completion"

# completes EXPECTED FUNCTION WORD...: FUNCTION offers EXPECTED for the last WORD
completes() {
	local expected=$1 func=$2
	shift 2
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	"$func"
	[[ "${COMPREPLY[*]}" == "$expected" ]] ||
		fail "completing '$*': '${COMPREPLY[*]}', expected '$expected'"
}
commands=$("$NSWAP2L" --help | sed -n '/^positional arguments:/,/^$/p' | awk 'NR > 2 && $1 ~ /^[a-z]+$/ { print $1 }' | xargs)
[[ $(wc -w <<<"$commands") -ge 7 ]] || fail "found only these nswap2l commands: $commands"
completes "$commands -h --help --version" _nswap2l "$NSWAP2L" ""
completes "create" _nswap2l "$NSWAP2L" cr
completes "--reliability" _nswap2l "$NSWAP2L" create --rel
completes "lrs" _nswap2l "$NSWAP2L" create nswap --prefetch l
completes "--keep-raw" _nswap2l "$NSWAP2L" trace --k
completes "--json" _nswap2l "$NSWAP2L" status --watch 2 --js
completes "--max-file" _nswapd "$NSWAPD" --max-f
completes "debug" _nswapd "$NSWAPD" --log-level d
completes "--reserve" _nswapd "$NSWAPD" --res
echo "ok"
