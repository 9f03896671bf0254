# Create/remove, table echo, status shape and initial counters, messages,
# repeated create/remove, module unload.
# mem: 256M
# disks: flash=64M disk=256M
# timeout: 300

load_nswap2l
FP=$(dev_pages "$FLASH")
DP=$(dev_pages "$DISK")
FMM=$(dev_majmin "$FLASH")
DMM=$(dev_majmin "$DISK")
LEN=$(((FP + DP) * 8))
log "flash $FLASH ($FMM) $FP pages, disk $DISK ($DMM) $DP pages, device $LEN sectors"

dm_create nsw "0 $LEN nswap2l 2 flash=$FLASH disk=$DISK" || die "create with flash+disk failed"
assert_eq "$(dmsetup table nsw)" "0 $LEN nswap2l 2 flash=$FMM disk=$DMM" "dmsetup table"
nsw_check_shape nsw 2
show_status nsw
st=$(dmsetup status nsw)
set -- $st
assert_eq "$1 $2 $3" "0 $LEN nswap2l" "status prefix"
assert_eq "$4" fastest_free "default placement policy"
assert_eq "$6" flash "first tier name"
assert_eq "${12}" disk "second tier name"
assert_eq "$(tier_stat nsw flash capacity)" "$FP" "flash capacity"
assert_eq "$(tier_stat nsw disk capacity)" "$DP" "disk capacity"
for t in flash disk; do
	for f in used writes discards; do
		assert_eq "$(tier_stat nsw $t $f)" 0 "initial $t $f"
	done
done
assert_eq "$(nsw_nospace nsw)" 0 "initial nospace_errors"
assert_eq "$(blockdev --getsz /dev/mapper/nsw)" "$LEN" "device size"
assert_eq "$(blockdev --getss /dev/mapper/nsw)" 4096 "logical block size"
assert_eq "$(blockdev --getpbsz /dev/mapper/nsw)" 4096 "physical block size"

# messages
help=$(dmsetup message nsw 0 help) || die "message help failed"
log "help: $(echo "$help" | tr '\n' '|')"
echo "$help" | grep -q help || die "help message output does not list 'help': '$help'"
expect_fail "unknown message" dmsetup message nsw 0 frobnicate_the_widget
expect_fail "unknown message with args" dmsetup message nsw 0 frobnicate 1 2
# placement switching: the help lists the built-in policies, unknown ones are refused
echo "$help" | grep -q 'placement <policy>.*fastest_free' || die "help does not list the placement policies: '$help'"
dmsetup message nsw 0 placement fastest_free || die "placement fastest_free refused"
assert_eq "$(dmsetup status nsw | cut -d' ' -f4)" fastest_free "placement after switch"
dmesg_mark
expect_fail "unknown placement policy" dmsetup message nsw 0 placement no_such_policy
dmesg_new | grep -q 'no_such_policy' || die "no dmesg line naming the unknown policy"
assert_eq "$(dmsetup status nsw | cut -d' ' -f4)" fastest_free "placement after a refused switch"
expect_fail "placement without a name" dmsetup message nsw 0 placement

# a little I/O: fastest_free puts the first pages on flash; unwritten reads zero
blkpat write /dev/mapper/nsw 0 16 11 || die "write 16 pages"
blkpat verify /dev/mapper/nsw 0 16 11 || die "verify 16 pages"
zr=$(nsw_zero_reads nsw)
blkpat zero /dev/mapper/nsw 16 16 || die "unwritten pages do not read as zeros"
assert_eq "$(tier_stat nsw flash used)" 16 "flash used after 16 page writes"
assert_eq "$(tier_stat nsw disk used)" 0 "disk used after 16 page writes"
assert_ge "$(tier_stat nsw flash writes)" 16 "flash writes"
assert_gt "$(nsw_zero_reads nsw)" "$zr" "zero_reads after reading unwritten pages"
show_status nsw
dm_remove nsw || die "remove failed"
dm_exists nsw && die "device still exists after remove"

# single-tier tables and overcommit echo
dm_create f1 "0 $((FP * 8)) nswap2l 1 flash=$FLASH" || die "flash-only create failed"
assert_eq "$(dmsetup table f1)" "0 $((FP * 8)) nswap2l 1 flash=$FMM" "flash-only table"
nsw_check_shape f1 1
dm_remove f1 || die "remove f1"
dm_create d1 "0 $((DP * 8)) nswap2l 1 disk=$DISK" || die "disk-only create failed"
assert_eq "$(dmsetup table d1)" "0 $((DP * 8)) nswap2l 1 disk=$DMM" "disk-only table"
nsw_check_shape d1 1
assert_eq "$(tier_stat d1 disk capacity)" "$DP" "disk-only capacity"
dm_remove d1 || die "remove d1"
dm_create oc "0 $((LEN * 4)) nswap2l 3 flash=$FLASH disk=$DISK overcommit" || die "overcommit create failed"
assert_eq "$(dmsetup table oc)" "0 $((LEN * 4)) nswap2l 3 flash=$FMM disk=$DMM overcommit" "overcommit table"
dm_remove oc || die "remove oc"
dm_create pl "0 $LEN nswap2l 3 flash=$FLASH disk=$DISK placement=fastest_free" || die "create with placement=fastest_free failed"
assert_eq "$(dmsetup status pl | cut -d' ' -f4)" fastest_free "placement in status"
dm_remove pl || die "remove pl"
expect_fail "unknown placement= in the table" dmsetup create --noudevsync pl --table "0 $LEN nswap2l 3 flash=$FLASH disk=$DISK placement=no_such_policy"
dm_exists pl && die "device left behind by a table with an unknown placement"

# repeated create/remove
i=0
while [ $i -lt 20 ]; do
	dm_create "rep$i" "0 $LEN nswap2l 2 flash=$FLASH disk=$DISK" || die "create #$i failed"
	blkpat write "/dev/mapper/rep$i" $((i * 100)) 4 $i >/dev/null || die "write on rep$i"
	dm_remove "rep$i" || die "remove #$i failed"
	i=$((i + 1))
done
assert_eq "$(dm_count)" 0 "nswap2l devices left"
dmsetup ls

lsmod | grep -E '^dm_nswap2l' || die "dm_nswap2l not in lsmod"
assert_eq "$(cat /sys/module/dm_nswap2l/refcnt)" 0 "module refcount with no devices"
unload_nswap2l
log "ok"
