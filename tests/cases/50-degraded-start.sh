# Degraded start (issue 31): a server that cannot be reached when the table
# is loaded (killed: down, rebooting) does not fail the load while pages
# have another home (another server up, flash or disk).  It starts as
# "connecting" (status, the sysfs servers file, one dmesg line saying why
# and that it keeps trying), takes no page, is never "failed" (it holds
# nothing), and joins when it answers, taking new pages.  With
# reliability=mirror or parity the pages go to the two servers that are up,
# so they keep their redundancy meanwhile (server 0 may die after).  What still fails: no server reached and
# no flash or disk; a server that answers but refuses the key (even with
# another down); add_server of a server that is down (asked for now).  A
# reload that adds a server that is down loads, like a create.  Suspend and
# remove of a device whose server never came up (down, or an address nobody
# answers at) return at once, and say nothing of the attempt they cut short.
# Server 2 is down from the start; every page written is checked (blkpat).
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# servers: 3
# disks: flash=16M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
PAGES=1024                                  # 4 MiB
HALF=$((PAGES / 2))
server_ctl kill 2 >/dev/null || die "kill server 2"

# 1. one server, down, no flash or disk: no home for a page, the load fails
#    with the reason the server gave
dmesg_mark
expect_fail "a device whose only server is down" \
	dm_create nope "0 8192 nswap2l 2 netram=$S2 $KEY"
dmesg_new | grep -q "netram: server $S2 [a-z ]* (error -[0-9]*)\$" ||
	die "no dmesg reason for the server that is down: $(dmesg_new)"

# 2. a server that answers but refuses the key fails the load, whatever the others
head -c 32 /dev/urandom >/tmp/wrong.key
addkey logon nswap2l:wrong /tmp/wrong.key @u >/dev/null || die "add the wrong key"
dmesg_mark
expect_fail "a wrong key, with one server down" \
	dm_create nope "0 8192 nswap2l 3 netram=$S0,$S2 key=:32:logon:nswap2l:wrong flash=$FLASH"
dmesg_new | grep -q "server $S0 rejected the key of client 'default' (error -129)" ||
	die "no dmesg reason for the wrong key: $(dmesg_new)"
dm_exists nope && die "device left behind by the failed loads"

# 3. flash is a home: a device with server 2 down loads; add_server of the
#    server that is down fails at once, a reload that adds it loads
dm_create f "0 $((PAGES * 8)) nswap2l 3 netram=$S0 $KEY flash=$FLASH" || die "create over server 0 and flash"
dmesg_mark
expect_fail "add_server of a server that is down" dmsetup message f 0 add_server "$S2"
dmesg_new | grep -q "server $S2 [a-z ]* (error -[0-9]*)\$" ||
	die "no dmesg reason for add_server of a server that is down: $(dmesg_new)"
dmesg_mark
dmsetup reload f --table "0 $((PAGES * 8)) nswap2l 3 netram=$S0,$S2 $KEY flash=$FLASH" ||
	die "a reload that adds a server that is down failed: $(dmesg_new)"
dmsetup resume f || die "resume after the reload"
dmesg_new | grep -q "server $S2 .* (error -[0-9]*): connecting, tried again every" ||
	die "no dmesg line for the server the reload left connecting: $(dmesg_new)"
assert_eq "$(netram_stat f 1 state)" connecting "server 2's state after the reload"
blkpat write /dev/mapper/f 0 $PAGES 3 || die "blkpat write to f"
blkpat verify /dev/mapper/f 0 $PAGES 3 || die "blkpat verify f"
assert_eq "$(netram_stat f 1 held)" 0 "pages on the server that is down"
# suspend and remove do not wait for a server that never came up
t0=$(uptime_cs)
dmsetup suspend f || die "suspend f"
dmsetup resume f || die "resume f"
dm_remove f || die "remove f"
assert_lt $(($(uptime_cs) - t0)) 300 "centiseconds to suspend, resume and remove f"
# an address nobody answers at: its thread may be in the middle of an attempt
dmesg_mark
dm_create bh "0 8192 nswap2l 3 netram=169.254.100.123:7000 $KEY flash=$FLASH" ||
	die "create over an address nobody answers at, and flash: $(dmesg_new)"
log "nobody answers: $(dmesg_new | grep 169.254.100.123)"
sleep 1
t0=$(uptime_cs)
dm_remove bh || die "remove bh"
assert_lt $(($(uptime_cs) - t0)) 300 "centiseconds to remove bh"
if dmesg_new | grep "cannot connect"; then die "an attempt stopped by the remove was reported"; fi

# 4. reliability=mirror and =parity over the three, server 2 down, no
#    flash: the two up take every page, two copies each, or a group's page
#    and its parity (the scheme picks among the servers up, as when one fails)
for rel in mirror parity; do
	dmesg_mark
	dm_create $rel "0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2 $KEY reliability=$rel timeout=3" ||
		die "create of $rel with server 2 down failed: $(dmesg_new)"
	nsw_check_shape $rel 1 3
	dmesg_new | grep -q "server $S2 .* (error -[0-9]*): connecting, tried again every" ||
		die "no dmesg line for the server left connecting ($rel): $(dmesg_new)"
	assert_eq "$(netram_stat $rel 2 state)" connecting "server 2's state in status ($rel)"
	assert_eq "$(sysfs_stat $rel servers "$S2" state)" connecting "server 2's state in sysfs ($rel)"
	assert_eq "$(netram_stat $rel 0 state) $(netram_stat $rel 1 state)" "up up" "servers 0 and 1 ($rel)"
	blkpat write /dev/mapper/$rel 0 $HALF 5 || die "blkpat write while server 2 is down ($rel)"
done
# longer than timeout=3: a server that was never up is not failed
sleep 4
for rel in mirror parity; do
	assert_eq "$(netram_stat $rel 2 state)" connecting "server 2's state after the timeout ($rel)"
	assert_eq "$(netram_stat $rel 2 held)" 0 "pages on the server that is down ($rel)"
	assert_ge "$(($(netram_stat $rel 0 held) + $(netram_stat $rel 1 held)))" $((2 * HALF)) \
		"server pages on servers 0 and 1 ($rel)"
	blkpat verify /dev/mapper/$rel 0 $HALF 5 || die "blkpat verify while server 2 is down ($rel)"
done

# 5. server 2 comes back: it joins within the back-off (at most 10 s apart)
#    and takes new pages
dmesg_mark
server_ctl start 2 >/dev/null || die "start server 2"
joined() { [ "$(netram_stat mirror 2 state) $(netram_stat parity 2 state)" = "up up" ]; }
wait_until 30 mirror "server 2 joined both devices" joined
assert_eq "$(dmesg_new | grep -c "server $S2 joined")" 2 "dmesg lines for the joins"
for rel in mirror parity; do
	blkpat write /dev/mapper/$rel $HALF $HALF 6 || die "blkpat write after the join ($rel)"
	assert_gt "$(netram_stat $rel 2 held)" 0 "pages on server 2 after it joined ($rel)"
	show_status $rel
	blkpat verify /dev/mapper/$rel 0 $HALF 5 || die "blkpat verify of the first half after the join ($rel)"
	blkpat verify /dev/mapper/$rel $HALF $HALF 6 || die "blkpat verify of the second half ($rel)"
done
# every page is kept redundantly off server 0: it may die
server_ctl kill 0 >/dev/null || die "kill server 0"
for rel in mirror parity; do
	blkpat verify /dev/mapper/$rel 0 $HALF 5 || die "blkpat verify of the first half without server 0 ($rel)"
	blkpat verify /dev/mapper/$rel $HALF $HALF 6 || die "blkpat verify of the second half without server 0 ($rel)"
	dm_remove $rel || die "remove $rel"
done
log "degraded start: ok"
