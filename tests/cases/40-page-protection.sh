# End-to-end page protection (protect=AEAD, ChaCha20-Poly1305 by default):
# a server that changes a page it holds, or gives back another page of ours
# in its place, makes that read fail with EIO, counted in status and dmesg,
# never wrong data.  With protect=none the same server hands back the
# altered page, which is what the check is for.  The table shows protect=
# when it is not the default; an unknown AEAD and a reload that changes
# protect= are refused with a dmesg line.  With reliability=mirror such a
# read goes to the other copy, with reliability=parity the page is rebuilt
# from its group, and nothing is lost.  The guest loads the
# x86 SIMD ChaCha20 by name only (tests/lib/initramfs.sh), so the default
# gets the generic C one; step 5 loads it and names it.
# mem: 256M
# servers: 3 max=64M
# disks: flash=16M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
# 2 MiB: its scan's 512 GETs are far past the server's --after (20 replies);
# every page costs the Python server milliseconds, 2,048 took 13 s a scan
PAGES=512

SERVERS=$(netram_server 0)
table() { # [OPTION...]: a table over $SERVERS
	echo "0 $((PAGES * 8)) nswap2l $((2 + $#)) netram=$SERVERS $KEY $*"
}

CHACHA="rfc7539(chacha20,poly1305)"

# check MODE PROTECT OK EIO BAD [OPTION...]: server 0 misbehaves so; a
# device with protect=PROTECT (empty: the default) and the options reads
# back OK pages, EIO unreadable, BAD wrong
check() {
	_mode=$1 _protect=$2 _want="$3 $4 $5" _options=${6:-}
	server_ctl misbehave 0 "$_mode" >/dev/null || die "misbehave 0 $_mode"
	dmesg_mark
	# shellcheck disable=SC2086
	dm_create nsw "$(table ${_protect:+protect=$_protect} $_options)" ||
		die "create with protect='$_protect' $_options"
	nsw_check_shape nsw 1 "$(echo "$SERVERS" | tr ',' ' ' | wc -w)"
	blkpat write $DEV 0 $PAGES 1 >/dev/null || die "write ($_mode, protect '$_protect')"
	_got=$(blkpat_scan_counts $DEV 0 $PAGES 1)
	log "$_mode, protect '$_protect' $_options: ok eio bad = $_got"
	show_status nsw
	assert_eq "$_got" "$_want" "pages ok, unreadable and wrong ($_mode, protect '$_protect' $_options)"
}

# 1. the default protects with ChaCha20-Poly1305; the table does not spell
# the default out; here it takes the generic C ChaCha20
check flip-stored-byte "" $((PAGES - 1)) 1 0
assert_eq "$(nsw_recovery nsw protect)" "$CHACHA" "protection in status"
assert_ge "$(nsw_recovery nsw refused)" 1 "pages refused, in status"
dmesg_new | grep -q "fails its check" || die "no dmesg line for the altered page"
dmsetup table nsw | grep -q "protect=" && die "default protect= spelled out: $(dmsetup table nsw)"
grep -q "^driver *: rfc7539(chacha20-generic," /proc/crypto ||
	die "the default AEAD does not take the generic ChaCha20: $(grep '^driver.*rfc7539' /proc/crypto)"

# 1b. the default AEAD and the session MAC's Poly1305 are the faster of
# their candidates here, timed once per module load (netram_fastest.c)
_line=$(dmesg | grep "page protection: .* ns per page, .* ns: using " | tail -n 1)
[ -n "$_line" ] || die "no dmesg line for the timed AEADs"
# shellcheck disable=SC2046
set -- $(echo "$_line" | sed -E 's/.*protection: ([^ ]+) ([0-9]+) ns per page, ([^ ]+) ([0-9]+) ns: using ([^ ]+).*/\1 \2 \3 \4 \5/')
_want=$1
[ "$4" -lt "$2" ] && _want=$3
assert_eq "$5" "$_want" "the AEAD taken for the default, of: $_line"
_fastest=$(dmesg | sed -nE 's/.*session MAC: poly1305 ([a-z]+) ([0-9]+) ns per page.*/\2 \1/p' | sort -n | head -n 1 | cut -d' ' -f2)
[ -n "$_fastest" ] || die "no dmesg line for the timed Poly1305s"
dmesg | grep -q "session MAC: using poly1305 $_fastest\$" ||
	die "session MAC not the fastest Poly1305 ($_fastest): $(dmesg | grep 'session MAC')"

# 2. a reload cannot change it
dmesg_mark
expect_fail "reload with protect=none" dmsetup reload nsw --table "$(table protect=none)"
dmesg_new | grep -q "A reload must keep protect=\|reload changes protect=" ||
	die "no dmesg line for the refused reload: $(dmesg_new | tail -n 3)"
dm_remove nsw || die "remove"

# 3. a page moved to another key
check move-stored-page "" $((PAGES - 1)) 1 0
assert_ge "$(nsw_recovery nsw refused)" 1 "moved pages refused, in status"
dm_remove nsw || die "remove"

# 4. another AEAD by name, shown in the table
check flip-stored-byte "gcm(aes)" $((PAGES - 1)) 1 0
dmsetup table nsw | grep -q " protect=gcm(aes)" || die "protect=gcm(aes) not in the table: $(dmsetup table nsw)"
dm_remove nsw || die "remove"

# 5. the SIMD ChaCha20 and Poly1305, which the kernel picks on real hardware
modprobe chacha_x86_64 || die "modprobe chacha_x86_64"
check flip-stored-byte "rfc7539(chacha20-simd,poly1305-simd)" $((PAGES - 1)) 1 0
dm_remove nsw || die "remove"

# 6. without protection: the altered page reads back altered (the check
# above is what catches it)
check flip-stored-byte none $((PAGES - 1)) 0 1
assert_eq "$(nsw_recovery nsw protect)" none "protection in status"
dmsetup table nsw | grep -q " protect=none" || die "protect=none not in the table: $(dmsetup table nsw)"
dm_remove nsw || die "remove"

# 7. bad protect= values
dmesg_mark
expect_fail "unknown AEAD" dmsetup create nsw --table "$(table 'protect=nosuch(aead)')"
dmesg_new | grep -q "protect=nosuch(aead)" || die "no dmesg line for the unknown AEAD"
expect_fail "a hash as AEAD" dmsetup create nsw --table "$(table 'protect=sha256')"
expect_fail "protect= without netram=" dmsetup create nsw --table "0 8 nswap2l 2 flash=$FLASH protect=none"
dmesg_new | grep -q "protect= without netram=\|protect= is about Network RAM" ||
	die "no dmesg line for protect= without netram="
assert_eq "$(dm_count)" 0 "devices left by refused tables"

# 8. a mirrored device reads the other copy of an altered page
SERVERS=$(netram_server 0),$(netram_server 1)
check flip-stored-byte "" $PAGES 0 0 reliability=mirror
assert_eq "$(nsw_recovery nsw refused)" 1 "altered pages refused, then read from the mirror"
dmesg_new | grep -q "fails its check" || die "no dmesg line for the altered mirrored page"
dm_remove nsw || die "remove"

# 9. a parity device rebuilds an altered page from its group
SERVERS=$(netram_server 0),$(netram_server 1),$(netram_server 2)
check flip-stored-byte "" $PAGES 0 0 reliability=parity,group=2
assert_eq "$(nsw_recovery nsw refused)" 1 "altered pages refused, then rebuilt from parity"
dm_remove nsw || die "remove"

server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
