# fio randwrite with crc32c verify over Network RAM alone with one, two and
# three nswapd servers, then over Network RAM + flash + disk (and a
# verify-only pass there, which reads every tier again); per-server
# accounting must add up and every server must take pages.  Over the
# spanning device's fio run, the Prometheus counters move and parse: server
# 0's --metrics endpoint over HTTP (nswapd's bytes received from the
# device's namespace) and nswap2l status --prometheus (bytes written to
# Network RAM).
# Network RAM's data path, which the swap cases also drive on each kernel
# (15 on 6.12; 34, 46 on 6.1), so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 3 max=32M args=--metrics 127.0.0.1:0
# disks: flash=8M disk=16M
# timeout: 1200

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
S0=$(netram_server 0) S1=$(netram_server 1) S2=$(netram_server 2)
DEV=/dev/mapper/nsw
PAGES=2048                      # 8 MiB: fits one server (--max 32M)

COMMON="--filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --size=100% --verify=crc32c --verify_fatal=1"

over_servers() { # servers nr_servers seed
	dm_create nsw "0 $((PAGES * 8)) nswap2l 2 netram=$1 $KEY" || die "create over $1 failed"
	nsw_check_shape nsw 1 "$2"
	# shellcheck disable=SC2086
	run_fio "netram-$2" --name=rw4k $COMMON --randseed="$3" --rw=randwrite --bs=4k --do_verify=1
	blkpat write $DEV 0 $PAGES "$3" || die "blkpat write"
	blkpat verify $DEV 0 $PAGES "$3" || die "blkpat verify"
	show_status nsw
	assert_eq "$(tier_stat nsw netram used)" $PAGES "netram pages used"
	held=0
	i=0
	while [ $i -lt "$2" ]; do
		h=$(netram_stat nsw $i held)
		assert_gt "$h" 0 "pages held by server $i of $2"
		assert_eq "$(netram_stat nsw $i state)" up "server $i state"
		assert_eq "$(netram_stat nsw $i errors)" 0 "server $i errors"
		held=$((held + h))
		i=$((i + 1))
	done
	assert_eq "$held" $PAGES "pages held, summed over the servers"
	assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
	assert_eq "$(nsw_rerouted nsw)" 0 "rerouted writes"
	# discard frees the remote copies
	blkdiscard $DEV || die "blkdiscard"
	assert_eq "$(tier_stat nsw netram used)" 0 "netram pages used after discard"
	blkpat zero $DEV 0 $PAGES || die "discarded pages must read as zeros"
	dm_remove nsw || die "remove"
}

over_servers "$S0" 1 11
over_servers "$S0,$S1" 2 12
over_servers "$S0,$S1,$S2" 3 13

# Network RAM + flash + disk: one 32M server, then flash, then disk
FP=$(dev_pages "$FLASH")
DP=$(dev_pages "$DISK")
TOTAL=$((8192 + FP + DP - 1024))
dm_create nsw "0 $((TOTAL * 8)) nswap2l 4 netram=$S0 $KEY flash=$FLASH disk=$DISK" || die "create spanning"
nsw_check_shape nsw 3 1
# scrape SUFFIX: server 0's /metrics and the device's --prometheus, checked
# as Prometheus text: HELP, TYPE and "name{labels} value" lines only
scrape() {
	server_ctl metrics 0 >/tmp/http.$1 || die "GET /metrics of server 0"
	[ "$(head -n 1 /tmp/http.$1)" = "HTTP/1.1 200 OK" ] || die "GET /metrics: $(head -n 1 /tmp/http.$1)"
	sed '1,/^$/d' /tmp/http.$1 >/tmp/nswapd.$1
	nswap2l status nsw --prometheus >/tmp/nswap2l.$1 || die "nswap2l status --prometheus"
	for f in /tmp/nswapd.$1 /tmp/nswap2l.$1; do
		bad=$(grep -Evc '^(# (HELP|TYPE) [a-z0-9_]+ .+|[a-z0-9_]+(\{[^}]*\})? [0-9.e+-]+)$' $f || true)
		[ "$bad" = 0 ] || die "$f: $bad lines that are not Prometheus text: $(grep -Ev '^(#|[a-z])' $f | head -n 2)"
	done
}
# metric FILE NAME: the sum of NAME's samples in FILE
metric() { awk -v n="$2" '{ sub(/\{.*\}/, "", $1) } $1 == n { s += $2; f = 1 } END { if (f) printf "%.0f\n", s; else print "none" }' "$1"; }
scrape before
# shellcheck disable=SC2086
run_fio spanning --name=span $COMMON --randseed=21 --rw=randwrite --bs=4k --do_verify=1
scrape after
assert_gt "$(($(metric /tmp/nswapd.after nswapd_client_received_bytes_total) - $(metric /tmp/nswapd.before nswapd_client_received_bytes_total)))" \
	$((4096 * 4096)) "bytes server 0 received over the run (its --metrics)"
assert_gt "$(metric /tmp/nswapd.after nswapd_held_bytes)" 0 "bytes server 0 holds (its --metrics)"
assert_ge "$(($(metric /tmp/nswap2l.after nswap2l_tier_written_bytes_total) - $(metric /tmp/nswap2l.before nswap2l_tier_written_bytes_total)))" \
	$((TOTAL * 4096)) "bytes written to the tiers over the run (nswap2l status --prometheus)"
show_status nsw
assert_gt "$(tier_stat nsw netram used)" 4096 "netram pages used"
assert_eq "$(tier_stat nsw flash used)" "$FP" "flash pages used (full)"
assert_gt "$(tier_stat nsw disk used)" 0 "disk pages used"
assert_eq "$(nsw_total nsw used)" $TOTAL "used pages, all tiers"
assert_eq "$(nsw_nospace nsw)" 0 "nospace errors"
# shellcheck disable=SC2086
run_fio spanning-verify-only --name=span $COMMON --randseed=21 --rw=randwrite --bs=4k --verify_only
assert_gt "$(tier_stat nsw netram reads)" 4096 "netram reads in verify"
dm_remove nsw || die "remove"
log "ok"
