# Bad table lines: dmsetup create fails, dmesg gets an nswap2l error naming
# the problem, no device is left behind, the module unloads, no oops.
# mem: 256M
# disks: flash=16M disk=32M
# timeout: 240

load_nswap2l
FP=$(dev_pages "$FLASH")
DP=$(dev_pages "$DISK")
LEN=$(((FP + DP) * 8))
# a 7-sector (3.5 KiB) device to be a too-small tier
dm_create tiny "0 7 linear $DISK 0" || die "cannot create the tiny linear device"
TINY=/dev/mapper/tiny

# positive control: the same form, valid, must work
dm_create good "0 $LEN nswap2l 2 flash=$FLASH disk=$DISK" || die "control: valid table rejected"
dm_remove good || die "control: remove"

n=0
# bad KEYWORD-REGEX TABLE...
bad() {
	kw=$1
	table=$2
	n=$((n + 1))
	name="bad$n"
	dmesg_mark
	if dmsetup create --noudevsync "$name" --table "$table" >/tmp/bad.out 2>&1; then
		dmsetup remove --noudevsync "$name" >/dev/null 2>&1 || true
		die "bad table #$n accepted: '$table'"
	fi
	dm_exists "$name" && die "bad table #$n left device $name behind"
	new=$(dmesg_new | grep -i nswap2l || true)
	[ -n "$new" ] || die "bad table #$n ('$table'): no new nswap2l line in dmesg"
	echo "$new" | grep -qiE "$kw" || die "bad table #$n ('$table'): dmesg does not mention /$kw/: $new"
	log "rejected #$n '$table': $(echo "$new" | head -n1)"
}

bad 'tier' "0 $LEN nswap2l 0"
bad 'tier' "0 $LEN nswap2l 1 overcommit"
bad 'foo' "0 $LEN nswap2l 3 flash=$FLASH disk=$DISK foo=1"
bad 'nonexistent|device|lookup|no such' "0 $((DP * 8)) nswap2l 2 flash=/dev/nonexistent disk=$DISK"
bad 'multiple|length|8 sectors|4 ?KiB|align' "0 $((LEN - 4)) nswap2l 2 flash=$FLASH disk=$DISK"
bad 'multiple|length|8 sectors|4 ?KiB|align' "0 12 nswap2l 1 flash=$FLASH"
bad 'overcommit|larger|exceed|capacity|too (big|large)' "0 $((LEN + 8)) nswap2l 2 flash=$FLASH disk=$DISK"
bad 'small|4 ?KiB|capacity|size|empty|no pages|zero' "0 $((DP * 8)) nswap2l 3 flash=$TINY disk=$DISK overcommit"
bad 'twice|duplicate|again|more than once' "0 $((FP * 8)) nswap2l 2 flash=$FLASH flash=$FLASH"
bad 'twice|duplicate|again|more than once' "0 $LEN nswap2l 4 flash=$FLASH disk=$DISK overcommit overcommit"
bad 'same|share|twice|both' "0 $((FP * 8)) nswap2l 2 flash=$FLASH disk=$FLASH"
bad 'arg' "0 $LEN nswap2l 3 flash=$FLASH disk=$DISK"
bad 'arg' "0 $LEN nswap2l 1 flash=$FLASH disk=$DISK"
bad 'arg' "0 $LEN nswap2l x flash=$FLASH"

assert_eq "$(dm_count)" 0 "nswap2l devices left"
dm_remove tiny || die "remove tiny"
assert_eq "$(cat /sys/module/dm_nswap2l/refcnt)" 0 "module refcount"
unload_nswap2l
log "ok: $n bad tables rejected"
