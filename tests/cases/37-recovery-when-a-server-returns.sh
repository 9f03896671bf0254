# A recovery that finds no room is tried again when a server comes up.
# Two devices over the same two servers, no flash: one mirrored, one with
# parity.  A server killed (SIGKILL) leaves one: no page can be made
# redundant again, so copies stay lost, and every page still reads right
# (from its mirror, or rebuilt from its group).  The server restarted comes
# back empty; recovery runs again by itself and puts the copies there.
# Last, the other server is killed: every page still reads right, from the
# copies made on the restarted server alone.  First, a mirror of one
# server: dmesg says that it takes no page until another server is added.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 2
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
PAGES=2048                                  # 8 MiB per device
TABLE="0 $((PAGES * 8)) nswap2l 4 netram=$(netram_server 0),$(netram_server 1) $KEY timeout=3"
# one server: redundancy needs another, dmesg says so
dmesg_mark
dm_create one "0 8192 nswap2l 4 netram=$(netram_server 0) $KEY timeout=3 reliability=mirror" ||
	die "create with one server failed"
dmesg_new | grep -q "reliability=mirror with one server: no page goes to Network RAM until another is added" ||
	die "no dmesg line for a mirror of one server: $(dmesg_new)"
dd if=/dev/zero of=/dev/mapper/one bs=4k count=1 oflag=direct 2>/dev/null && die "a write found room with one server"
dmsetup message one 0 add_server "$(netram_server 1)" || die "add_server"
blkpat write /dev/mapper/one 0 16 3 || die "blkpat write with a second server"
blkpat verify /dev/mapper/one 0 16 3 || die "blkpat verify with a second server"
dm_remove one

dm_create mir "$TABLE reliability=mirror" || die "create mir failed"
dm_create par "$TABLE reliability=parity,group=2" || die "create par failed"
# no page may change while it is written: parity is computed from it
assert_eq "$(queue_attr par stable_writes)" 1 "par: stable_writes (a table without devices)"

blkpat write /dev/mapper/mir 0 $PAGES 1 || die "blkpat write mir"
blkpat write /dev/mapper/par 0 $PAGES 2 || die "blkpat write par"
for d in mir par; do
	assert_gt "$(netram_stat $d 1 held)" 0 "$d: pages on server 1"
done

# 1. server 1 killed: one server left, recovery finds no room
server_ctl kill 1 || die "kill server 1"
stopped() { [ "$(netram_stat "$1" 1 state)" = failed ] && [ "$(nsw_recovery "$1" recovering)" = 0 ]; }
for d in mir par; do wait_until 60 $d "server 1 failed, recovery stopped" stopped $d; done
show_status mir
show_status par
dmesg | grep -q "could not be moved (no room elsewhere" || die "no dmesg line for the pages left"
for d in mir par; do
	assert_gt "$(nsw_recovery $d copies_lost)" 0 "$d: copies lost with one server left"
	assert_eq "$(nsw_recovery $d pages_lost)" 0 "$d: pages lost"
done
blkpat verify /dev/mapper/mir 0 $PAGES 1 || die "mir: verify with server 1 dead"
blkpat verify /dev/mapper/par 0 $PAGES 2 || die "par: verify with server 1 dead (rebuilds)"

# 2. server 1 restarted empty: recovery runs again and finishes
server_ctl start 1 || die "restart server 1"
for d in mir par; do
	wait_until 120 $d "copies made again on the restarted server" nsw_recovered $d
	show_status $d
	assert_gt "$(netram_stat $d 1 held)" 0 "$d: pages on the restarted server"
	assert_eq "$(nsw_recovery $d pages_lost)" 0 "$d: pages lost"
done

# 3. server 0 killed: the copies on server 1 alone serve every page
server_ctl kill 0 || die "kill server 0"
failed0() { [ "$(netram_stat "$1" 0 state)" = failed ]; }
for d in mir par; do wait_until 60 $d "server 0 failed" failed0 $d; done
blkpat verify /dev/mapper/mir 0 $PAGES 1 || die "mir: verify from the recovered copies"
blkpat verify /dev/mapper/par 0 $PAGES 2 || die "par: verify from the recovered groups"
for d in mir par; do assert_eq "$(nsw_recovery $d pages_lost)" 0 "$d: pages lost"; done
dm_remove mir
dm_remove par
