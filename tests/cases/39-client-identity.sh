# Per-client identity.  The servers hold one key per client name (nswapd
# --clients); the table's client= names the device's client (default
# "default"), `dmsetup table` shows it, a reload must keep it.  Revoking the
# client on every server (its key file removed, SIGHUP) closes its
# connections at once and refuses its reconnects: the servers fail, dmesg
# says why ("does not know client 'web1'", where a wrong key is "rejected
# the key"), reads of its pages end with an I/O error, never other data.
# Granting it again lets it back in; the servers kept its namespace (grace
# period), so every page reads back right.  Pages go out under a session
# MAC computed before they are sent, so the device asks for stable writes.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# servers: 2
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
NETRAM=$(netram_table_arg)
PAGES=1024

# bad client names fail the table with a reason in dmesg
for bad in "a/b" ".hidden" "0123456789012345678901234567890123" "x:y"; do
	dmesg_mark
	expect_fail "client=$bad" dmsetup create bad --table "0 8192 nswap2l 3 $NETRAM client=$bad"
	dmesg_new | grep -q "client=.*: need 1 to 31 characters of A-Z a-z 0-9 _ . -" ||
		die "no dmesg reason for client=$bad: $(dmesg_new)"
done
dmesg_mark
expect_fail "client= without netram=" dmsetup create bad --table "0 8192 nswap2l 2 disk=/dev/vdb client=x"
dmesg_new | grep -q "client= names us to Network RAM servers, but no netram= is given" ||
	die "no dmesg reason for client= without netram=: $(dmesg_new)"
# a name the servers do not know is refused at create time, and dmesg says
# so; a known name with a wrong key is refused as such
dmesg_mark
expect_fail "an unknown client" dmsetup create bad --table "0 8192 nswap2l 3 $NETRAM client=stranger"
dmesg_new | grep -q "server [0-9.:]* does not know client 'stranger' (error -126)" ||
	die "no dmesg reason for an unknown client: $(dmesg_new)"
rc=0
out=$(netram-hello -c stranger "$(netram_server 0)" "$NST_KEY_FILE") || rc=$?
assert_eq "$rc" 4 "netram-hello exit status for an unknown client ($out)"
head -c 32 /dev/urandom >/tmp/wrong.key
addkey logon nswap2l:wrong /tmp/wrong.key @u >/dev/null || die "add the wrong key"
dmesg_mark
expect_fail "a wrong key" dmsetup create bad --table "0 8192 nswap2l 2 $(netram_table_arg nswap2l:wrong)"
dmesg_new | grep -q "server [0-9.:]* rejected the key of client 'default' (error -129)" ||
	die "no dmesg reason for a wrong key: $(dmesg_new)"
if dmesg_new | grep -q "does not know client"; then die "a wrong key reads as an unknown client: $(dmesg_new)"; fi

server_ctl grant web1 || die "grant web1"
TABLE="0 $((PAGES * 8)) nswap2l 4 $NETRAM client=web1 timeout=3"
dm_create c "$TABLE" || die "create with client=web1"
dmsetup table c | grep -q " client=web1" || die "dmsetup table does not show client=web1: $(dmsetup table c)"
# pages go out under a MAC computed before they are sent: none may change meanwhile
assert_eq "$(queue_attr c stable_writes)" 1 "stable_writes of a Network RAM device"
# the default name is not shown, and a reload must keep the name
dm_create d "0 8192 nswap2l 3 $NETRAM timeout=3" || die "create with the default client"
dmsetup table d | grep -q "client=" && die "dmsetup table shows the default name: $(dmsetup table d)"
dm_remove d
dmesg_mark
expect_fail "a reload that changes client=" dmsetup reload c --table "0 $((PAGES * 8)) nswap2l 4 $NETRAM client=web2 timeout=3"
dmesg_new | grep -q "reload changes client= from 'web1' to 'web2'" || die "no dmesg reason for the reload: $(dmesg_new)"
dmsetup clear c

blkpat write /dev/mapper/c 0 $PAGES 5 || die "blkpat write"
for i in 0 1; do
	[ "$(server_ctl stats $i | tr ',{}' '\n\n\n' | grep -c '"client": "web1"')" -ge 1 ] ||
		die "server $i has no namespace of client web1: $(server_ctl stats $i)"
done
drop_caches

# revoke web1: connections closed, reconnects refused, servers fail
dmesg_mark
server_ctl revoke web1 || die "revoke web1"
failed() { servers_in_state c failed 0 1; }
wait_until 60 c "both servers failed after the revocation" failed
show_status c
dmesg_new | grep -q "server .*: cannot reconnect: does not know client 'web1'" ||
	die "no dmesg line for the refused reconnect: $(dmesg_new)"
# every read fails: an I/O error, never data that is not ours
set -- $(blkpat_scan_counts /dev/mapper/c 0 $PAGES 5)
log "scan while revoked: ok=$1 eio=$2 bad=$3"
assert_eq "$3" 0 "pages read wrong while revoked"
assert_eq "$2" $PAGES "pages that read EIO while revoked"

# grant web1 again: the servers come back with its namespace and pages
server_ctl grant web1 || die "grant web1 again"
up() { servers_in_state c up 0 1; }
wait_until 60 c "both servers up after the new grant" up
blkpat verify /dev/mapper/c 0 $PAGES 5 || die "pages wrong after the client came back"
dm_remove c
