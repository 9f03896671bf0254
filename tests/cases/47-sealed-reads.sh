# Reads whose pages only their seals authenticate (NSWAP2L_CAP_SEALED_GET,
# issue 30), with the frees carried by PUTs (NSWAP2L_CAP_PUT_FREES) in
# effect too, against tests/lib/misbehaving-server:
# 1. a page flipped on the way in a GET reply whose MAC is right (it no
#    longer covers the pages): its seal refuses it, the client closes the
#    connection and reads it again on a new one, and gets it: no EIO, no
#    wrong data.  With protect=none the same flip breaks the MAC;
# 2. a page the server holds altered or moved fails again on the new
#    connection: EIO with reliability=none, never wrong data; the other
#    copy with mirror, a rebuild with parity;
# 3. messages injected, changed, replayed or reordered on the way still
#    close the connection, and nothing is lost.
# Every step checks that the capabilities were in effect (the server's
# session counters): against a client without them it would test nothing.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 3 max=64M
# disks: flash=64M
# timeout: 900

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
# 2 MiB: its scan's 512 GETs are far past the server's --after (20 replies);
# every page costs the Python server milliseconds, 2,048 took 13 s a scan
PAGES=512

misbehave() { server_ctl misbehave "$@" >/dev/null || die "misbehave $*"; }
table() { # SERVERS [OPTION...]: a table over them
	_servers=$1
	shift
	echo "0 $((PAGES * 8)) nswap2l $((2 + $#)) netram=$_servers $KEY $*"
}
# caps I sealed|none: every session server I had, and at least two, had
# both capabilities (sealed), or PUT_FREES alone (none: protect=none)
caps() {
	_s=$(server_stat "$1" sessions)
	log "server $1: sessions $_s, sealed-get $(server_stat "$1" sealed_get_sessions), put-frees $(server_stat "$1" put_frees_sessions)"
	assert_ge "$_s" 2 "sessions on server $1 (the client reconnected)"
	assert_eq "$(server_stat "$1" put_frees_sessions)" "$_s" "sessions on server $1 with PUT_FREES"
	case $2 in
	sealed) assert_eq "$(server_stat "$1" sealed_get_sessions)" "$_s" "sessions on server $1 with SEALED_GET" ;;
	none) assert_eq "$(server_stat "$1" sealed_get_sessions)" 0 "sessions on server $1 with SEALED_GET (protect=none)" ;;
	esac
}
# the kernel's lines for a page whose seal fails: on one connection (it
# closes, the page is read again), and again on the next (the read fails)
ON_THE_WAY="fails its seal (changed on the way?): reading it again"
SEAL_FAILS="fails its check"
WRONG_MAC="server $S0: message with a wrong MAC"

# flipped_run PATTERN WHAT [OPTION...]: server 0 flips pages of GET replies
# after their MAC; a device with the options is written with PATTERN and
# read back, the counts of pages ok, unreadable and wrong in $got
flipped_run() {
	_pattern=$1 _what=$2
	shift 2
	misbehave 0 tamper-sealed-in-transit
	dmesg_mark
	dm_create nsw "$(table "$S0" timeout=10 "$@")" || die "create ($_what)"
	blkpat write $DEV 0 $PAGES "$_pattern" >/dev/null || die "write ($_what)"
	got=$(blkpat_scan_counts $DEV 0 $PAGES "$_pattern")
	show_status nsw
}

# 1. pages flipped on the way, under a right MAC: read again, never EIO
flipped_run 1 "sealed, flipped on the way"
log "flipped on the way: ok eio bad = $got, refused $(nsw_recovery nsw refused)"
assert_eq "$got" "$PAGES 0 0" "pages ok, unreadable and wrong after pages flipped on the way"
assert_eq "$(server_stat 0 tampered_replies)" 3 "GET replies with a page flipped after the MAC"
assert_ge "$(netram_stat nsw 0 reconnects)" 3 "connections closed for pages whose seal failed"
caps 0 sealed
assert_ge "$(server_stat 0 sessions)" 4 "connections to server 0 (one more per flipped page)"
assert_eq "$(nsw_recovery nsw refused)" 0 "pages refused for good, in status"
assert_eq "$(dmesg_new | grep -c "$ON_THE_WAY")" 3 "dmesg lines for pages whose seal failed on the way"
assert_ge "$(dmesg_new | grep -c "server $S0: connection lost")" 3 "dmesg lines for the connections closed"
dmesg_new | grep -q "$SEAL_FAILS" && die "a page flipped on the way refused for good: $(dmesg_new | grep "$SEAL_FAILS")"
dmesg_new | grep -q "$WRONG_MAC" && die "a wrong MAC for a page flipped under a GET reply's MAC: the MAC covers the pages"
dm_remove nsw || die "remove"

# without protection there are no seals: the flip breaks the MAC
flipped_run 2 "protect=none, flipped on the way" protect=none
assert_eq "$got" "$PAGES 0 0" "pages ok, unreadable and wrong (protect=none, flipped on the way)"
assert_eq "$(server_stat 0 tampered_replies)" 3 "GET replies with a page flipped after the MAC (protect=none)"
assert_ge "$(netram_stat nsw 0 reconnects)" 3 "connections closed for wrong MACs"
caps 0 none
dmesg_new | grep -q "$WRONG_MAC" || die "no wrong MAC for pages flipped without protection: $(dmesg_new | tail -n 5)"
dm_remove nsw || die "remove"

# 2. pages the server holds altered: they fail again on the new connection
# stored MODE SERVERS WANT OPTION...: server 0 misbehaves so; a device
# over SERVERS reads back WANT ("ok eio bad"); the altered page was refused
# by its seal on two connections (or once, and read elsewhere)
stored() {
	_mode=$1 _servers=$2 _want=$3
	shift 3
	misbehave 0 "$_mode"
	dmesg_mark
	dm_create nsw "$(table "$_servers" timeout=10 "$@")" || die "create ($_mode, $*)"
	blkpat write $DEV 0 $PAGES 3 >/dev/null || die "write ($_mode, $*)"
	_got=$(blkpat_scan_counts $DEV 0 $PAGES 3)
	show_status nsw
	log "$_mode $*: ok eio bad = $_got, refused $(nsw_recovery nsw refused)"
	assert_eq "$(server_stat 0 altered_pages)" 1 "pages server 0 altered ($_mode $*)"
	assert_eq "$_got" "$_want" "pages ok, unreadable and wrong ($_mode $*)"
	assert_ge "$(nsw_recovery nsw refused)" 1 "pages refused, in status ($_mode $*)"
	assert_ge "$(netram_stat nsw 0 reconnects)" 1 "connections closed before the page was failed ($_mode $*)"
	caps 0 sealed
	dmesg_new | grep -q "$ON_THE_WAY" || die "no dmesg line for the altered page's first refusal ($_mode $*)"
	dmesg_new | grep -q "$SEAL_FAILS" || die "no dmesg line for the altered page ($_mode $*)"
	dm_remove nsw || die "remove"
}
for mode in flip-stored-byte move-stored-page; do
	stored $mode "$S0" "$((PAGES - 1)) 1 0"
	stored $mode "$S0,$S1" "$PAGES 0 0" reliability=mirror
	stored $mode "$S0,$S1,$S2" "$PAGES 0 0" reliability=parity,group=2
done

# 3. messages injected, changed, replayed or reordered on the way: each
# closes the connection, nothing is lost; flash takes the writes meanwhile
# onpath MODE SEED: server 0 misbehaves so under fio (QD16, verified)
onpath() {
	misbehave 0 "$1"
	dmesg_mark
	dm_create nsw "$(table "$S0" timeout=10 flash=$FLASH)" || die "create ($1)"
	run_fio "$1" --name=onpath --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=4k \
		--size=$((PAGES * 4))K --rw=randwrite --randseed="$2" --verify=crc32c --verify_fatal=1 --do_verify=1
	run_fio "$1-again" --name=onpath --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 \
		--bs=4k --size=$((PAGES * 4))K --rw=randwrite --randseed="$2" --verify=crc32c --verify_fatal=1 --verify_only
	show_status nsw
	assert_gt "$(netram_stat nsw 0 held)" 0 "pages on server 0 ($1)"
	caps 0 sealed
}
onpath bad-replies 31
assert_ge "$(netram_stat nsw 0 reconnects)" 12 "connections broken by wrong messages"
assert_gt "$(netram_stat nsw 0 errors)" 0 "protocol errors counted on server 0"
dm_remove nsw || die "remove"

for what in tamper:tampered_replies replay:replayed_replies reorder:reordered_replies; do
	onpath "${what%%:*}-in-transit" 32
	assert_eq "$(server_stat 0 "${what#*:}")" 3 "replies changed on the way (${what%%:*})"
	assert_ge "$(netram_stat nsw 0 reconnects)" 3 "connections closed (${what%%:*})"
	dmesg_new | grep -q "$WRONG_MAC" || die "no dmesg line for the wrong MACs (${what%%:*}): $(dmesg_new | tail -n 5)"
	dm_remove nsw || die "remove"
done

misbehave 0 none
log "ok"
