# End-to-end page protection (protect=, on by default): a server that
# changes a page it holds, or gives back another page of ours in its place,
# makes that read fail with EIO, counted in status and dmesg, never wrong
# data.  Without protection the same server hands back the altered page,
# which is what the check is for.  The table shows protect= when it is not
# the default; an unknown AEAD and a reload that changes protect= are
# refused with a dmesg line.
# mem: 256M
# servers: 1 max=64M
# disks: flash=16M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/nsw
PAGES=2048                                   # 8 MiB: 32 PUTs, past the server's --after

table() { # [OPTION...]: a table over server 0
	echo "0 $((PAGES * 8)) nswap2l $((2 + $#)) netram=$(netram_server 0) $KEY $*"
}

# check MODE PROTECT OK EIO BAD: server 0 misbehaves so; a device with
# protect=PROTECT (empty: the default) reads back OK pages, EIO unreadable,
# BAD wrong
check() {
	server_ctl misbehave 0 "$1" >/dev/null || die "misbehave 0 $1"
	dmesg_mark
	dm_create nsw "$(table ${2:+protect=$2})" || die "create with protect='$2'"
	nsw_check_shape nsw 1 1
	blkpat write $DEV 0 $PAGES 1 >/dev/null || die "write ($1, protect '$2')"
	set -- "$@" $(blkpat_scan_counts $DEV 0 $PAGES 1)
	log "$1, protect '$2': ok=$6 eio=$7 bad=$8"
	show_status nsw
	assert_eq "$6 $7 $8" "$3 $4 $5" "pages ok, unreadable and wrong ($1, protect '$2')"
}

# 1. the default protects, and the table does not spell it out
check flip-stored-byte "" $((PAGES - 1)) 1 0
assert_eq "$(nsw_recovery nsw protect)" "rfc7539(chacha20,poly1305)" "protection in status"
assert_ge "$(nsw_recovery nsw refused)" 1 "pages refused, in status"
dmesg_new | grep -q "fails its check" || die "no dmesg line for the altered page"
dmsetup table nsw | grep -q "protect=" && die "default protection spelled out: $(dmsetup table nsw)"

# 2. a reload cannot change it
dmesg_mark
expect_fail "reload to protect=none" dmsetup reload nsw --table "$(table protect=none)"
dmesg_new | grep -q "A reload must keep protect=\|reload changes protect=" ||
	die "no dmesg line for the refused reload: $(dmesg_new | tail -n 3)"
dm_remove nsw || die "remove"

# 3. a page moved to another key
check move-stored-page "" $((PAGES - 1)) 1 0
assert_ge "$(nsw_recovery nsw refused)" 1 "moved pages refused, in status"
dm_remove nsw || die "remove"

# 4. another AEAD by name
check flip-stored-byte "gcm(aes)" $((PAGES - 1)) 1 0
dmsetup table nsw | grep -q " protect=gcm(aes)" || die "protect=gcm(aes) not in the table: $(dmsetup table nsw)"
dm_remove nsw || die "remove"

# 5. protect=none: the altered page reads back altered (the check above is
# what catches it), and the table says so
check flip-stored-byte none $((PAGES - 1)) 0 1
assert_eq "$(nsw_recovery nsw protect)" none "protection in status"
dmsetup table nsw | grep -q " protect=none" || die "protect=none not in the table: $(dmsetup table nsw)"
dm_remove nsw || die "remove"

# 6. bad protect= values
dmesg_mark
expect_fail "unknown AEAD" dmsetup create nsw --table "$(table 'protect=nosuch(aead)')"
dmesg_new | grep -q "protect=nosuch(aead)" || die "no dmesg line for the unknown AEAD"
expect_fail "a hash as AEAD" dmsetup create nsw --table "$(table 'protect=sha256')"
expect_fail "protect= without netram=" dmsetup create nsw --table "0 8 nswap2l 2 flash=$FLASH protect=none"
dmesg_new | grep -q "protect= without netram=\|protect= is about Network RAM" ||
	die "no dmesg line for protect= without netram="
assert_eq "$(dm_count)" 0 "devices left by refused tables"

server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
