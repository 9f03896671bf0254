# An overwrite costs one message per page (issue 30): a protected page is
# written once per key, so an overwrite is a PUT to a new key and a free of
# the old one, and the free rides on the next PUT (NSWAP2L_CAP_PUT_FREES)
# instead of going alone.  Against an nswapd, with the default protection:
# after the device is filled, 4 KiB random overwrites at QD1 cost at most
# 1.02 messages (PUT, FREE and GET, nswapd's own counters) per page written,
# the few FREEs of a queue flushed when the device goes idle included; at
# QD16, where PUTs carry several pages, fewer than one.  Once the device is
# idle the server holds exactly its live pages: every free arrived.
# Fails on a module that sends a FREE per overwrite (two messages per page)
# or keeps frees queued.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.12
# mem: 256M
# servers: 1
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
DEV=/dev/mapper/ow
PAGES=2048                                   # 8 MiB
WRITES=2000

dm_create ow "0 $((PAGES * 8)) nswap2l 2 $(netram_table_arg)" || die "create"
run_fio fill --name=fill --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --bs=64k \
	--size=100% --rw=write
assert_eq "$(tier_stat ow netram used)" $PAGES "pages on Network RAM after the fill"

# nswapd_stat FIELD: a counter of nswapd's server record
nswapd_stat() {
	_v=$(server_stat 0 "$1")
	_num "$_v" "nswapd's $1 (server_ctl stats 0: $(server_ctl stats 0 | head -c 300))"
	echo "$_v"
}
messages() { echo $(($(nswapd_stat requests_put) + $(nswapd_stat requests_free) + $(nswapd_stat requests_get))); }
server_holds_live() { [ "$(nswapd_stat held_pages)" = "$(tier_stat ow netram used)" ]; }
# overwrite DEPTH ENGINE MAX: WRITES random 4 KiB overwrites at DEPTH; once
# the server holds the device's live pages, messages per page written at
# most MAX (strictly below with "<MAX")
overwrite() {
	wait_until 30 ow "the server holding the live pages before QD$1" server_holds_live
	_m0=$(messages) _p0=$(nswapd_stat pages_put)
	_job="--name=ow --filename=$DEV --ioengine=$2 --iodepth=$1 --direct=1 --bs=4k --size=100%
		--rw=randwrite --number_ios=$WRITES --randseed=$1 --verify=crc32c --verify_fatal=1"
	# shellcheck disable=SC2086
	run_fio "overwrites-qd$1" $_job --do_verify=0
	# the last frees leave after a short delay, in a FREE or a PUT
	wait_until 30 ow "the server holding the live pages after QD$1" server_holds_live
	_msgs=$(($(messages) - _m0)) _put=$(($(nswapd_stat pages_put) - _p0))
	_ratio=$(awk -v m="$_msgs" -v w=$WRITES 'BEGIN { printf "%.3f", m / w }')
	log "QD$1: $_msgs messages for $WRITES pages written: $_ratio messages per page (in all: put $(nswapd_stat requests_put), free $(nswapd_stat requests_free), get $(nswapd_stat requests_get), keys freed $(nswapd_stat keys_freed))"
	assert_eq "$_put" $WRITES "pages the server stored at QD$1"
	case $3 in
	"<"*) awk -v r="$_ratio" -v x="${3#<}" 'BEGIN { exit !(r < x) }' ||
		die "QD$1: $_ratio messages per page written, expected fewer than ${3#<}" ;;
	*) assert_float_in 0 "$_ratio" "$3" "QD$1: messages per page written" ;;
	esac
	assert_eq "$(nswapd_stat held_pages)" $PAGES "pages the server holds after QD$1"
	# shellcheck disable=SC2086
	run_fio "overwrites-qd$1-verify" $_job --verify_only
}
overwrite 1 psync 1.02
overwrite 16 libaio "<1.0"
show_status ow
assert_eq "$(netram_stat ow 0 reconnects)" 0 "reconnects"
assert_eq "$(nswapd_stat keys_freed)" $((2 * WRITES)) "keys the server freed"
dm_remove ow || die "remove"
log "ok"
