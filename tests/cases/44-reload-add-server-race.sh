# A hurried operator's overlapping commands (issue 27): with 15 of a
# device's 16 server slots in use (a server added and removed 14 times), a
# table reload that adds server 2 waits for its resume while add_server
# adds server 1 to the live table.  The reload's new slot is counted before
# the resume, so add_server takes a removed server's slot instead of the
# last one, and the resume publishes server 2 in slot 15.  (The two used to
# count apart: the resume wrote servers[16] past the array, and the first
# allocation after it overran the stack.)  add_server or remove_server of
# the server a pending reload adds is refused with a dmesg line; a reload
# that is cleared gives its slot back.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 3
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=4096
table() { echo "0 $((PAGES * 8)) nswap2l 2 netram=$1 $KEY"; }
dm_create nsw "$(table $S0)" || die "create failed"
blkpat write $DEV 0 1024 61 || die "blkpat write"

slots() { dmsetup status nsw | awk '{ print $(10 + $5 * 6) }'; }
s1_removed() { [ "$(netram_stat_of nsw $S1 state)" = removed ]; }
i=0
while [ $i -lt 14 ]; do
	dmsetup message nsw 0 add_server $S1 || die "add_server $S1 (#$i)"
	dmsetup message nsw 0 remove_server $S1 || die "remove_server $S1 (#$i)"
	wait_until 30 nsw "server 1 removed (#$i)" s1_removed
	i=$((i + 1))
done
assert_eq "$(slots)" 15 "server slots in use"

dmesg_mark
dmsetup reload nsw --table "$(table $S0,$S2)" || die "reload adding server 2"
dmsetup message nsw 0 add_server $S1 || die "add_server $S1 while the reload waits"
dmsetup resume nsw || die "resume"
assert_eq "$(slots)" 16 "slots after the resume"
for s in $S0 $S1 $S2; do
	assert_eq "$(netram_stat_of nsw $s state)" up "state of server $s"
done
dmesg_new | grep -q "server $S2 added by the reloaded table" || die "no dmesg line for server 2"

blkpat write $DEV 1024 3072 62 || die "blkpat write after the reload"
blkpat verify $DEV 0 1024 61 || die "pages written before"
blkpat verify $DEV 1024 3072 62 || die "pages written after"
assert_gt "$(netram_stat_of nsw $S2 held)" 0 "pages on server 2"
assert_gt "$(netram_stat_of nsw $S1 held)" 0 "pages on server 1"

# a reload that is cleared gives back the slot it reserved
dmsetup message nsw 0 remove_server $S1 || die "remove_server $S1"
wait_until 60 nsw "server 1 removed" s1_removed
dmesg_mark
dmsetup reload nsw --table "$(table $S0,$S2,$S1)" || die "reload adding server 1 back"
expect_fail "add_server of the server a pending reload adds" dmsetup message nsw 0 add_server $S1
expect_fail "remove_server of the server a pending reload adds" dmsetup message nsw 0 remove_server $S1
dmesg_new | grep -q "add_server $S1: a reloaded table that waits for resume adds this server" ||
	die "no dmesg line for add_server during the reload"
dmsetup clear nsw || die "clear"
dmsetup message nsw 0 add_server $S1 || die "add_server $S1 after the reload was cleared"
assert_eq "$(netram_stat_of nsw $S1 state)" up "server 1 added again"
blkpat verify $DEV 0 1024 61 || die "pages written before, at the end"
blkpat verify $DEV 1024 3072 62 || die "pages written after, at the end"
dm_remove nsw || die "remove"
log "ok"
