#!/bin/bash
# The manual pages (man/make-man): nswapd(8) and nswap2l(8), made from the
# programs' --help, and nswap2l.conf(5) and dm-nswap2l(7), written by hand,
# render with no warning from man, have a NAME line that lexgrog reads, and
# say what the programs, the config parser and the README say: every
# option of nswapd --help and of each nswap2l command's --help, every key
# of the config file, and every table argument, message and status field of
# the README's tables.
source "$(dirname "$0")/lib.sh"

/usr/bin/python3 "$REPO_DIR/man/make-man" --out "$WORK/man" >"$WORK/make.out" 2>&1 ||
	fail "man/make-man: $(tail -n 3 "$WORK/make.out")"
for page in nswapd.8 nswap2l.8 nswap2l.conf.5 dm-nswap2l.7; do
	[[ -s $WORK/man/$page ]] || fail "no $page"
	LC_ALL=C.UTF-8 MANWIDTH=200 man --warnings -l "$WORK/man/$page" >"$WORK/$page.txt" 2>"$WORK/$page.err" ||
		fail "man -l $page failed: $(head -n 3 "$WORK/$page.err")"
	[[ ! -s $WORK/$page.err ]] || fail "man -l $page warns: $(head -n 3 "$WORK/$page.err")"
	lexgrog "$WORK/man/$page" >"$WORK/$page.whatis" 2>&1 || fail "lexgrog $page: $(cat "$WORK/$page.whatis")"
	# man's own hyphenation would split words the checks look for
	sed -i 's/\xe2\x80\x90//g' "$WORK/$page.txt"
done
log "$(cat "$WORK"/*.whatis | sed 's/^[^:]*: //' | tr '\n' ';')"

# has PAGE WORD WHERE: PAGE's text shows WORD (said by WHERE)
has() {
	grep -qF -- "$2" "$WORK/$1.txt" || fail "$1 does not say '$2' ($3 does)"
}
for opt in $("$NSWAPD" --help | grep -oE '^ {2,4}--[a-z-]+' | sort -u); do
	has nswapd.8 "$opt" "nswapd --help"
done
NSWAP2L=$REPO_DIR/tools/nswap2l/nswap2l
commands=$("$NSWAP2L" --help | sed -n '/^positional arguments:/,/^$/p' | awk 'NR > 2 && $1 ~ /^[a-z]+$/ { print $1 }')
[[ $(wc -w <<<"$commands") -ge 7 ]] || fail "found only these nswap2l commands: $commands"
for c in $commands; do
	has nswap2l.8 "nswap2l $c" "nswap2l --help"
	for opt in $("$NSWAP2L" "$c" --help | grep -oE '^ {2,4}--[a-z-]+' | sort -u); do
		[[ $opt == --help ]] || has nswap2l.8 "$opt" "nswap2l $c --help"
	done
done
for key in $(cd "$REPO_DIR/tools/nswap2l" && /usr/bin/python3 -c \
	'from nswap2l_cmd import config; print(" ".join(f"[{s}] {k}" for s, ks in config.KEYS.items() for k in ks))'); do
	has nswap2l.conf.5 "$key" "nswap2l_cmd/config.py"
done
# README tables: the first column's words up to "=", " " or "<"
readme_column() { # SECTION: first cells of the tables in README's "## SECTION"
	sed -n "/^## $1\$/,/^## /p" "$REPO_DIR/README.md" | grep -E '^\| `' | cut -d'`' -f2
}
for arg in $(readme_column "Table line" | sed 's/[=<\[ ].*//'); do
	has dm-nswap2l.7 "$arg" "README's table line"
done
for msg in $(readme_column Messages | cut -d' ' -f1); do
	has dm-nswap2l.7 "$msg" "README's messages"
done
for field in $(sed -n '/^## Status$/,/^## /p' "$REPO_DIR/README.md" | grep -E '^\| `' | cut -d'|' -f2 | tr -d '`,'); do
	has dm-nswap2l.7 "<$field>" "README's status fields"
done
echo "ok"
