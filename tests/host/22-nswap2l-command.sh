#!/bin/bash
# The nswap2l command on the host, where no device is made: the unit tests of
# its trace parser and analysis (on the committed blkparse sample), --help of
# every subcommand, the table lines --print-table builds, and bad settings
# (options and config files), each refused with exit status 2 and a message.
# Everything that needs a live device is in the guest tests 41 and 42.
source "$(dirname "$0")/lib.sh"

NSWAP2L=$REPO_DIR/tools/nswap2l/nswap2l
make -s -C "$REPO_DIR/tools/nswap2l" check || fail "unit tests of tools/nswap2l"

for cmd in "" create remove status servers prefetch profile trace; do
	"$NSWAP2L" $cmd --help >"$WORK/help" || fail "nswap2l $cmd --help: exit status"
	grep -q "^exit status:" "$WORK/help" || fail "nswap2l $cmd --help does not list the exit statuses"
done

make_key k
# print_table WANT ARGS...: the table line nswap2l create --print-table builds
print_table() {
	local want=$1 got
	shift
	got=$("$NSWAP2L" create t --print-table "$@") || fail "--print-table $*: exit status"
	[[ "$got" == "$want" ]] || fail "--print-table $*: got '$got', expected '$want'"
}
print_table "0 2097152 nswap2l 2 netram=127.0.0.1:7000 key=:32:logon:nswap2l:t" \
	--netram 127.0.0.1:7000 --key-file "$WORK/k.key" --size 1G
print_table "0 16 nswap2l 6 netram=10.0.0.1:1,10.0.0.2:2 key=:32:logon:nswap2l:t client=web1 timeout=5 reliability=parity,group=3 overcommit" \
	--netram 10.0.0.1:1,10.0.0.2:2 --key-file "$WORK/k.key" --client web1 --timeout 5 \
	--reliability parity,group=3 --overcommit --size 8K
printf '[device]\nnetram = 127.0.0.1:7000\nkey-file = %s\nsize = 4M\n[swap]\nenable = yes\n' \
	"$WORK/k.key" >"$WORK/t.conf"
print_table "0 8192 nswap2l 2 netram=127.0.0.1:7000 key=:32:logon:nswap2l:t" --config "$WORK/t.conf"
print_table "0 16384 nswap2l 2 netram=127.0.0.1:7000 key=:32:logon:nswap2l:t" --config "$WORK/t.conf" --size 8M

# bad WHAT PATTERN ARGS...: nswap2l ARGS exits 2 and says PATTERN
bad() {
	local what=$1 pattern=$2 status=0
	shift 2
	"$NSWAP2L" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
	((status == 2)) || fail "$what: exit status $status, expected 2 ($(cat "$WORK/err"))"
	grep -Eq -- "$pattern" "$WORK/err" || fail "$what: '$(cat "$WORK/err")' does not say '$pattern'"
	log "$what: $(head -n 1 "$WORK/err")"
}
N=(--netram 127.0.0.1:7000 --key-file "$WORK/k.key")
bad "no subcommand" "required: COMMAND"
bad "unknown subcommand" "invalid choice: 'frobnicate'" frobnicate
bad "bad size" "size '1X'" create t --print-table "${N[@]}" --size 1X
bad "no size with Network RAM only" "--size is needed" create t --print-table "${N[@]}"
bad "timeout 0" "timeout '0': expected whole seconds, 1..3600" create t --print-table "${N[@]}" --size 1G --timeout 0
bad "bad reliability" "reliability 'raid5'" create t --print-table "${N[@]}" --size 1G --reliability raid5
bad "bad client" "client '.hidden'" create t --print-table "${N[@]}" --size 1G --client .hidden
bad "17 servers" "17 servers, at most 16" create t --print-table --key-file "$WORK/k.key" --size 1G \
	--netram "$(seq -s, -f '10.0.0.%g:7000' 1 17)"
bad "server twice" "server 127.0.0.1:07000 given twice" create t --print-table --key-file "$WORK/k.key" --size 1G \
	--netram 127.0.0.1:7000,10.0.0.1:7000,127.0.0.1:07000
bad "unresolvable host name" "--netram 'nosuchhost.invalid:7000': cannot resolve nosuchhost.invalid" create t --print-table \
	--netram nosuchhost.invalid:7000 --key-file "$WORK/k.key" --size 1G
bad "bad interval" "--interval '5'" create t --print-table "${N[@]}" --size 1G --prefetch rr --interval 5
bad "when without prefetch" "need --prefetch POLICY" create t --print-table "${N[@]}" --size 1G --when always
bad "bad name" "device name 'a/b'" create a/b --print-table "${N[@]}" --size 1G
bad "bad swap priority" "--priority 'high'" create t --print-table "${N[@]}" --size 1G --priority high
head -c 8 /dev/urandom >"$WORK/short.key"
bad "short key" "8 bytes; a key has 16 to 256" create t --print-table --netram 127.0.0.1:7000 --key-file "$WORK/short.key" --size 1G
printf '[device]\nnetram = 127.0.0.1:7000\n[swap]\nenable = maybe\n' >"$WORK/bad1.conf"
bad "config: bad boolean" "enable = maybe: expected yes or no" create t --print-table --config "$WORK/bad1.conf"
printf '[disks]\nflash = /dev/x\n' >"$WORK/bad2.conf"
bad "config: unknown section" "unknown section \[disks\]" create t --print-table --config "$WORK/bad2.conf"
printf 'flash = /dev/x\n' >"$WORK/bad3.conf"
bad "config: no section" "config .*bad3.conf: File contains no section headers" create t --print-table --config "$WORK/bad3.conf"
bad "trace: both" "give a device NAME \(with --seconds\) or --from FILE" trace t --from "$WORK/x"
# values only the kernel refused before: now refused before anything changes
bad "amount over 100 %" "--amount 'held:200'.*0-100" create t --print-table "${N[@]}" --size 1G --prefetch rr --amount held:200
bad "cap over the kernel's" "--amount 'written:5:2000000'" create t --print-table "${N[@]}" --size 1G --prefetch rr --amount written:5:2000000
bad "idle:0" "--when 'idle:0'" create t --print-table "${N[@]}" --size 1G --prefetch rr --when idle:0
printf '[device]\nflash = \377\n' >"$WORK/bad4.conf"
bad "config: not UTF-8" "bad4.conf: not UTF-8" create t --print-table --config "$WORK/bad4.conf"
bad "status --watch -1" "--watch -1: expected seconds" status --watch -1

# trace --from: settings the replay cannot model are refused before the
# output directory is made; without matplotlib the summary is written and
# only the picture is left out, with a note
SAMPLE=$REPO_DIR/tools/nswap2l/tests/sample.blkparse
bad "replay when idle" "when 'idle': the replay models always and swapping" trace --from "$SAMPLE" --out "$WORK/t1" --when idle
[[ ! -e "$WORK/t1" ]] || fail "trace with a bad setting made its output directory"
bad "--keep-raw with --from" "--keep-raw keeps what a recording reads" trace --from "$SAMPLE" --keep-raw
bad "--max-bios 0" "--max-bios 0: need 1 or more" trace --from "$SAMPLE" --max-bios 0
mkdir -p "$WORK/nompl/matplotlib"
echo 'raise ImportError("hidden by the test")' >"$WORK/nompl/matplotlib/__init__.py"
PYTHONPATH=$WORK/nompl "$NSWAP2L" trace --from "$SAMPLE" --out "$WORK/t2" 2>"$WORK/err" >/dev/null ||
	fail "trace without matplotlib: exit status $? ($(cat "$WORK/err"))"
grep -q "no access-map.png: drawing a picture needs matplotlib" "$WORK/err" ||
	fail "trace without matplotlib: no note: $(cat "$WORK/err")"
assert_eq "$(ls "$WORK/t2" | tr '\n' ' ')" "summary.json summary.txt " "files of a trace without matplotlib"
status=0
"$NSWAP2L" trace --from "$SAMPLE" --out /proc/version/x 2>"$WORK/err" >/dev/null || status=$?
((status == 1)) && grep -q "output directory /proc/version/x: Not a directory" "$WORK/err" ||
	fail "trace into a file's path: exit status $status ($(cat "$WORK/err"))"
"$NSWAP2L" trace --from "$SAMPLE" --out "$WORK/t3" >/dev/null 2>&1 || fail "trace --from the sample"
for f in summary.txt summary.json access-map.png; do
	[[ -s "$WORK/t3/$f" ]] || fail "trace --from the sample wrote no $f"
done

# The README's client config (Setting up a cluster), as written but for the
# key's path and the flash partition this host does not have: the table it
# makes names client web1 and both donors, and mirrors them (the default
# for two servers).
sed -n "/^    cat > \/etc\/nswap2l\/nswap.conf <<'EOF'$/,/^    EOF$/p" "$REPO_DIR/README.md" |
	sed '1d;$d;s/^    //' | sed "s|/etc/nswap2l/web1.key|$WORK/k.key|;/^flash = /d" >"$WORK/readme.conf"
grep -q "^client = web1 " "$WORK/readme.conf" || fail "no client line in the README's config: $(cat "$WORK/readme.conf")"
print_table "0 131072 nswap2l 4 netram=10.0.0.21:7000,10.0.0.22:7000 key=:32:logon:nswap2l:t client=web1 reliability=mirror" \
	--config "$WORK/readme.conf" --size 64M
echo "ok"
