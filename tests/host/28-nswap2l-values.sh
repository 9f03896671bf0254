#!/bin/bash
# Issue 28: every value of nswap2l is checked before anything is printed or
# created.  A bad value exits 2 with a message that names it, prints nothing
# on stdout and calls no dmsetup: each is tried with --print-table and as a
# real create, with a dmsetup on PATH that only records its calls.  Then the
# values now accepted: decimal sizes (rounded up to whole pages), host names
# (resolved, the address said on stderr), inline comments in a config file;
# status --json is a list for one device as for two; --help names the
# default client.
source "$(dirname "$0")/lib.sh"

NSWAP2L=$REPO_DIR/tools/nswap2l/nswap2l
make_key k

# A dmsetup that records its calls in $WORK/dmsetup.calls and knows the
# devices in $FAKE_DM_DEVICES, each a flash-only nswap2l device of 16 sectors.
mkdir "$WORK/bin"
cat >"$WORK/bin/dmsetup" <<'EOF'
#!/bin/bash
echo "$*" >>"$FAKE_DM_CALLS"
name=${*: -1}
known=0
for dev in $FAKE_DM_DEVICES; do [[ $dev == "$name" ]] && known=1; done
case $1 in
info) ((known)) ;;
table) ((known)) && echo "0 16 nswap2l 1 flash=7:0" ;;
status) ((known)) && echo "0 16 nswap2l fastest_free 1 flash 2 1 3 4 0 0 0 0 0 none 0 0 0 0.00 0.00" ;;
ls) for dev in $FAKE_DM_DEVICES; do echo "$dev (253:0)"; done ;;
*) exit 0 ;;
esac
EOF
chmod +x "$WORK/bin/dmsetup"
export FAKE_DM_CALLS=$WORK/dmsetup.calls FAKE_DM_DEVICES=""
# fake_dm ARGS...: nswap2l ARGS with the recording dmsetup first on PATH
fake_dm() {
	rm -f "$FAKE_DM_CALLS"
	PATH=$WORK/bin:$PATH "$NSWAP2L" "$@"
}
dm_calls() {
	cat "$FAKE_DM_CALLS" 2>/dev/null || true
}

# refused_by WHAT PATTERN ARGS...: nswap2l ARGS exits 2, says PATTERN on
# stderr, prints nothing on stdout and calls no dmsetup
refused_by() {
	local what=$1 pattern=$2 status=0
	shift 2
	fake_dm "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
	((status == 2)) || fail "$what: exit status $status, expected 2 ($(cat "$WORK/err"))"
	grep -Eq -- "$pattern" "$WORK/err" || fail "$what: '$(cat "$WORK/err")' does not say '$pattern'"
	[[ ! -s $WORK/out ]] || fail "$what: printed '$(cat "$WORK/out")'"
	[[ -z $(dm_calls) ]] || fail "$what: called dmsetup $(dm_calls)"
	log "$what: $(head -n 1 "$WORK/err")"
}
# refused WHAT PATTERN CREATE-ARGS...: refused with --print-table, and as a
# real create (that needs root: without it, nswap2l exits 4 first)
refused() {
	local what=$1 pattern=$2
	shift 2
	refused_by "$what (--print-table)" "$pattern" create t --print-table "$@"
	if ((EUID == 0)); then
		refused_by "$what" "$pattern" create t "$@"
	fi
}

# The recorder is on PATH and reached: a good create asks dmsetup whether
# the name is taken (here it is, so nothing is loaded).
if ((EUID == 0)); then
	status=0
	FAKE_DM_DEVICES=t fake_dm create t --netram 127.0.0.1:7000 --key-file "$WORK/k.key" --size 1G \
		>/dev/null 2>"$WORK/err" || status=$?
	((status == 1)) && grep -q "a device-mapper device of that name exists" "$WORK/err" ||
		fail "create over a taken name: exit status $status ($(cat "$WORK/err"))"
	[[ $(dm_calls) == "info t" ]] || fail "the recording dmsetup saw '$(dm_calls)', expected 'info t'"
fi

N=(--netram 127.0.0.1:7000 --key-file "$WORK/k.key" --size 1G)
refused "placement" "--placement 'bogus': expected one of fastest_free" "${N[@]}" --placement bogus
refused "protect" "--protect 'bogus': expected one of none, rfc7539\(chacha20,poly1305\), gcm\(aes\)" \
	"${N[@]}" --protect bogus
refused "flash not a block device" "--flash /dev/null: not a block device" --flash /dev/null
refused "disk a directory" "--disk $WORK: not a block device" --disk "$WORK"
refused "negative size" "--size '-1G': expected a size" "${N[@]}" --size=-1G
refused "zero size" "--size '0': expected a size of more than 0" "${N[@]}" --size 0
refused "zero decimal size" "--size '0.0M': expected a size of more than 0" "${N[@]}" --size 0.0M
refused "size not a number" "--size 'lots': expected a size such as 8G" "${N[@]}" --size lots
refused "size with two points" "--size '1.2.3G'" "${N[@]}" --size 1.2.3G
refused "unresolvable server" "--netram 'nosuchhost.invalid:7000': cannot resolve nosuchhost.invalid" \
	--netram 127.0.0.1:7000,nosuchhost.invalid:7000 --key-file "$WORK/k.key" --size 1G
refused "IPv6 server" "--netram '\[::1\]:7000': .*takes no IPv6" --netram '[::1]:7000' --key-file "$WORK/k.key" --size 1G
refused "short address" "--netram '10.1:7000': expected IPv4-ADDRESS:PORT or HOST-NAME:PORT" \
	--netram 10.1:7000 --key-file "$WORK/k.key" --size 1G
refused "name and address of one server" "server 127.0.0.1:7000 given twice" \
	--netram localhost:7000,127.0.0.1:7000 --key-file "$WORK/k.key" --size 1G
refused "swap priority" "--priority 'high': expected a whole number" "${N[@]}" --priority high
refused "prefetch policy" "--prefetch 'bogus': expected one of none, rr, random, lrs, mrs, auto" \
	"${N[@]}" --prefetch bogus
printf '[device]\nnetram = 127.0.0.1:7000   # a comment\nkey-file = %s\nsize = 1G\nplacement = bogus  # why\n' \
	"$WORK/k.key" >"$WORK/bad.conf"
refused "config placement" "--placement 'bogus': expected one of fastest_free" --config "$WORK/bad.conf"
# the other subcommands: values checked before dmsetup is asked anything
FAKE_DM_DEVICES=t refused_by "servers add: unresolvable" "server 'nosuchhost.invalid:7000': cannot resolve" \
	servers t add nosuchhost.invalid:7000
FAKE_DM_DEVICES=t refused_by "prefetch policy" "POLICY 'bogus': expected one of none, rr" prefetch t bogus
FAKE_DM_DEVICES=t refused_by "prefetch interval" "--interval '5': expected milliseconds" prefetch t rr --interval 5

# table WANT ARGS...: nswap2l create t --print-table ARGS prints WANT
table() {
	local want=$1 got
	shift
	got=$("$NSWAP2L" create t --print-table "$@" 2>"$WORK/err") || fail "--print-table $*: $(cat "$WORK/err")"
	[[ $got == "$want" ]] || fail "--print-table $*: got '$got', expected '$want'"
}
K=(--key-file "$WORK/k.key")
line() { echo "0 $1 nswap2l 2 netram=127.0.0.1:7000 key=:32:logon:nswap2l:t"; }
table "$(line 3145728)" --netram 127.0.0.1:7000 "${K[@]}" --size 1.5G
table "$(line 3145728)" --netram 127.0.0.1:7000 "${K[@]}" --size 1.5GiB
table "$(line 1048576)" --netram 127.0.0.1:7000 "${K[@]}" --size .5g
# 1.1 GiB is 288358.4 pages: rounded up to 288359
table "$(line 2306872)" --netram 127.0.0.1:7000 "${K[@]}" --size 1.1G
table "$(line 8)" --netram 127.0.0.1:7000 "${K[@]}" --size 1000
table "$(line 2097152)" --netram localhost:7000 "${K[@]}" --size 1G
grep -qx "nswap2l: localhost is 127.0.0.1" "$WORK/err" || fail "a resolved name is not said: '$(cat "$WORK/err")'"

# a config file with comments on their own lines and after values; a '#'
# inside a value is part of it
cp "$WORK/k.key" "$WORK/a#b.key"
cat >"$WORK/c.conf" <<EOF
# the test device
[device]   # its settings
netram = 127.0.0.1:7000   # the one donor
key-file = $WORK/a#b.key
	# an indented comment
size = 4M	# a tab before it
EOF
table "$(line 8192)" --config "$WORK/c.conf"

# status --json: a list, of one device as of two
FAKE_DM_DEVICES="t u" fake_dm status t --json >"$WORK/one.json" || fail "status t --json"
FAKE_DM_DEVICES="t u" fake_dm status t u --json >"$WORK/two.json" || fail "status t u --json"
FAKE_DM_DEVICES="t u" fake_dm status --json >"$WORK/all.json" || fail "status --json"
shape() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(type(d).__name__, [x["name"] for x in d] if isinstance(d, list) else d.get("name"))' "$1"; }
assert_eq "$(shape "$WORK/one.json")" "list ['t']" "status t --json"
assert_eq "$(shape "$WORK/two.json")" "list ['t', 'u']" "status t u --json"
assert_eq "$(shape "$WORK/all.json")" "list ['t', 'u']" "status --json"

"$NSWAP2L" create --help >"$WORK/help"
tr -s ' \n' ' ' <"$WORK/help" >"$WORK/help1"
grep -q 'client name on the servers (default "default": a server run with --clients DIR needs the key in DIR/default' \
	"$WORK/help1" || fail "create --help does not name the default client"
grep -q "rounded up to whole 4 KiB pages" "$WORK/help1" || fail "create --help does not say how a size is rounded"
grep -q "placement policy: fastest_free" "$WORK/help1" || fail "create --help does not list the placements"
echo "ok"
