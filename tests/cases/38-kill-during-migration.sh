# Servers killed (SIGKILL) while pages migrate.  A mirrored and a parity
# device share four servers.  The machine of server E (of 1-3, the one
# holding most of the mirrored pages) asks its memory back (EVICT), and
# while its pages are being moved away another server (0), which holds
# their other copies or group members and receives moved pages, is killed.
# Then server F (the busier of the other two) asks its memory back and is
# itself killed mid-move.  Each time: nothing is lost, every page reads right,
# recovery ends with every page redundant again and nothing left on the
# dead server.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 4 reserve=32M
# timeout: 900

# timeout=10, as in 34 and 36: a killed server's connections close at once,
# so the timeout only decides when a slow healthy server counts as a second
# failure, which would lose pages whose other copy was on the killed one.
load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2) S3=$(netram_server 3)
PAGES=8192                                  # 32 MiB per device
TABLE="0 $((PAGES * 8)) nswap2l 4 netram=$S0,$S1,$S2,$S3 $KEY timeout=10"
dm_create mir "$TABLE reliability=mirror" || die "create mir failed"
dm_create par "$TABLE reliability=parity,group=3" || die "create par failed"
blkpat write /dev/mapper/mir 0 $PAGES 1 || die "blkpat write mir"
blkpat write /dev/mapper/par 0 $PAGES 2 || die "blkpat write par"

# moving I: server I's pages are being moved away on either device
moving() { [ "$(netram_stat mir "$1" evict_moved)" -gt 0 ] || [ "$(netram_stat par "$1" evict_moved)" -gt 0 ]; }
# after_kill I: server I failed and recovery ended; every page reads right
after_kill() {
	for d in mir par; do
		wait_until 30 $d "server $1 failed" servers_in_state $d failed "$1"
		wait_until 180 $d "recovery done" nsw_recovered $d
		show_status $d
		assert_eq "$(nsw_recovery $d pages_lost)" 0 "$d: pages lost"
		assert_eq "$(netram_stat $d "$1" held)" 0 "$d: pages left on the dead server $1"
	done
	blkpat verify /dev/mapper/mir 0 $PAGES 1 || die "mir: verify after server $1 died mid-move"
	blkpat verify /dev/mapper/par 0 $PAGES 2 || die "par: verify after server $1 died mid-move"
}

# busiest SERVER...: the one of them holding most pages of mir.  Placement
# follows the servers' speed, so which one that is varies from run to run;
# the busiest of three holds more than a third of the copies that server 0
# does not (more than 2730 of mir's 16384).
busiest() {
	_best= _most=-1
	for _s in "$@"; do
		_n=$(netram_stat mir "$_s" held)
		if [ "$_n" -gt "$_most" ]; then _best=$_s _most=$_n; fi
	done
	echo "$_best"
}

# 1. server E's machine wants 24 MiB back; server 0 dies while pages move
E=$(busiest 1 2 3)
assert_gt "$(netram_stat mir "$E" held)" 2048 "mir: pages on server $E"
server_ctl set-memavailable "$E" 8M || die "set-memavailable $E"
wait_until 60 mir "pages of server $E moving" moving "$E"
server_ctl kill 0 || die "kill server 0"
log "server 0 killed: $(netram_stat mir "$E" evict_moved) + $(netram_stat par "$E" evict_moved) pages moved off server $E so far"
after_kill 0

# 2. server 0 back empty, server E's memory given back; server F wants its
#    memory back and dies while its pages move
server_ctl start 0 || die "restart server 0"
server_ctl set-memavailable "$E" 1G || die "set-memavailable $E"
for d in mir par; do wait_until 30 $d "server 0 up" servers_in_state $d up 0; done
F=$(busiest $(echo 1 2 3 | tr ' ' '\n' | grep -v -x "$E"))
assert_gt "$(netram_stat mir "$F" held)" 2048 "mir: pages on server $F"
server_ctl set-memavailable "$F" 8M || die "set-memavailable $F"
wait_until 60 mir "pages of server $F moving" moving "$F"
server_ctl kill "$F" || die "kill server $F"
log "server $F killed: $(netram_stat mir "$F" evict_moved) + $(netram_stat par "$F" evict_moved) pages moved off it so far"
after_kill "$F"
dm_remove mir
dm_remove par
