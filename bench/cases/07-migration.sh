# How fast a donor that leaves gives its pages up, and what that costs its
# clients (issue 31): server to server (Nswap's Migrate: the pages go to a
# peer, the client only changes its map on MOVED) against back through the
# client (EVICT: the client reads each page and writes it elsewhere).  Two
# nswapd, each the other's --peer.  Per round, side by side in one boot: a
# reliability=none device over both servers holding BENCH_REGION_MB MiB
# (default 64), the default protect= (its client takes MOVED); server 0
# leaves (SIGTERM) and its pages go to server 1; server 0 is started again.
# Then the same with protect=none, whose client does not announce
# NSWAP2L_CAP_MOVED, so that the pages come back through it (this favours
# EVICT a little: no decryption and encryption on the way).  Reported, medians over
# BENCH_ROUNDS rounds (default 3): pages per second of the leave (from the
# SIGTERM to nswapd's exit), and the bytes the client sent and received per
# page moved (every connection of the device).  Goal: a migrated page costs
# the client only its share of the location update, no page payload.
# mem: 256M
# servers: 2 peers
# timeout: 3600

REGION_MB=${BENCH_REGION_MB:-64}
ROUNDS=${BENCH_ROUNDS:-3}

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1)
now_cs() { awk '{ printf "%d", $1 * 100 }' /proc/uptime; }
bytes() { echo $(($(netram_stat mig 0 sent) + $(netram_stat mig 0 received) + $(netram_stat mig 1 sent) + $(netram_stat mig 1 received))); }
# the first peer record of server 0's report is server 1's
peer_connected() { [ "$(server_stat 0 connected)" = 1 ]; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# leave WAY PROTECT: one leave of server 0: sets PAGES, RATE (pages/s), BYTES (per page)
leave() {
	wait_until 60 mig "server 0 is not connected to its peer server 1" peer_connected
	options="netram=$S0,$S1 $KEY reliability=none${2:+ protect=$2}"
	dm_create mig "0 $((REGION_MB * 2048)) nswap2l $(echo $options | wc -w) $options" || die "create ($1)"
	prefill_random /dev/mapper/mig "$REGION_MB"
	pages=$(netram_stat mig 0 held)
	[ "$pages" -gt 0 ] || die "$1: no page on server 0"
	b=$(bytes) t=$(now_cs)
	out=$(server_ctl term 0) || die "$1: server_ctl term 0"
	t=$(($(now_cs) - t)) b=$(($(bytes) - b))
	case "$out" in
	*"every page given back"*) ;;
	*) die "$1: server 0 did not give every page back: $out" ;;
	esac
	[ "$(netram_stat mig 0 held)" = 0 ] || die "$1: the device still has pages on server 0"
	moved=$(sysfs_stat mig servers "$S0" moved_out) evicted=$(netram_stat mig 0 evict_moved)
	case $1 in
	migrate) [ "$moved" = "$pages" ] || die "migrate: $moved of $pages pages moved server to server" ;;
	evict) [ "$evicted" = "$pages" ] || die "evict: $evicted of $pages pages moved by the client" ;;
	esac
	dm_remove mig || die "remove ($1)"
	server_ctl start 0 >/dev/null || die "start 0"
	PAGES=$pages
	RATE=$(awk -v p="$pages" -v t="$t" 'BEGIN { printf "%.0f", p * 100 / (t ? t : 1) }')
	BYTES=$(awk -v b="$b" -v p="$pages" 'BEGIN { printf "%.1f", b / p }')
}

for way in migrate evict; do eval "rate_$way= bytes_$way= pages_$way="; done
round=1
while [ $round -le "$ROUNDS" ]; do
	for way in migrate evict; do
		log "round $round of $ROUNDS: $way"
		if [ $way = evict ]; then leave $way none; else leave $way; fi
		log "$way: $PAGES pages, $RATE pages/s, $BYTES client bytes per page"
		eval "pages_$way=\"\$pages_$way $PAGES\" rate_$way=\"\$rate_$way $RATE\" bytes_$way=\"\$bytes_$way $BYTES\""
	done
	round=$((round + 1))
done
for way in migrate evict; do
	eval "p=\$pages_$way r=\$rate_$way b=\$bytes_$way"
	echo "@@BENCH migration $way pages=$(echo $p | tr ' ' '\n' | median) pages_per_s=$(echo $r | tr ' ' '\n' | median) bytes_per_page=$(echo $b | tr ' ' '\n' | median) rounds_pages_per_s=$(echo $r | tr ' ' ,) rounds_bytes_per_page=$(echo $b | tr ' ' ,)"
done
echo "@@BENCH migration ratio pages_per_s=$(awk -v m="$(echo $rate_migrate | tr ' ' '\n' | median)" -v e="$(echo $rate_evict | tr ' ' '\n' | median)" 'BEGIN { printf "%.2f", m / e }')"
