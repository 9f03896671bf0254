# shellcheck shell=sh
# Helpers for test cases; sourced (busybox sh) before the case script, which
# then runs with `set -e`.  Environment: NST_NAME, NST_CASE, NST_KVER and one
# variable per declared disk (FLASH=/dev/vda, DISK=/dev/vdb, ...); with
# "# servers: N" also NST_SERVERS ("169.254.100.100:7000 ..." one address per
# server, server i = 169.254.100.(100+i)), NST_KEY_FILE (their shared key,
# raw bytes) and NST_CTL (the host's server-control, 169.254.100.99:7000).

log() { echo "[$NST_NAME] $*"; }

# Debian's busybox runs its own applets in preference to PATH (standalone
# shell), so route the names that exist on the tools disk to the real tools
# (util-linux, e2fsprogs, coreutils) with functions.
# (busybox's list read once: a pipe per tool cost every case half a second
# of TCG)
_bb=" $(busybox --list | tr '\n' ' ') "
for _p in /usr/sbin/* /usr/bin/*; do
	_n=${_p##*/}
	case "$_n" in *[!a-zA-Z0-9_]*) continue ;; esac
	case "$_bb" in *" $_n "*) eval "$_n() { $_p \"\$@\"; }" ;; esac
done
unset _p _n _bb

die() {
	echo "[$NST_NAME] FAIL: $*"
	echo "$*" >/tmp/.nst-fail
	exit 1
}

# memcheck_wait PID OUT WHAT : wait for a memcheck started in the
# background with its output in OUT; if it failed, fail with WHAT and why,
# on one line: its first bad page (exit 1), or the signal that ended it and
# the kernel's OOM or swap read-error line (a die message is all CI's
# summary shows).
memcheck_wait() {
	_mw_st=0
	wait "$1" || _mw_st=$?
	[ $_mw_st = 0 ] && return 0
	cat "$2"
	if [ $_mw_st -gt 128 ]; then
		_mw_why="killed by signal $((_mw_st - 128)); kernel: $(dmesg | grep -E 'Out of memory|oom-kill|Read-error on swap' | tail -n 2 | tr '\n' ' ')"
	else
		_mw_why="exit $_mw_st: $(grep -E 'BAD PAGE|differ|holds its generation|FAILED|cannot' "$2" | head -n 4 | tr '\n' ' ')"
	fi
	die "$3: $_mw_why"
}

# wait_until SECONDS NAME WHAT COMMAND... : run COMMAND every half second
# until it succeeds; after SECONDS show NAME's status and fail with WHAT
wait_until() {
	_left=$(($1 * 2)) _secs=$1 _dev=$2 _what=$3
	shift 3
	until "$@"; do
		_left=$((_left - 1))
		[ "$_left" -gt 0 ] || { show_status "$_dev"; die "$_what, still not so after $_secs s"; }
		sleep 0.5
	done
}

assert_eq() { # got want what
	[ "$1" = "$2" ] || die "${3:-value}: got '$1', expected '$2'"
}
assert_ne() { [ "$1" != "$2" ] || die "${3:-value}: got '$1', expected something else"; }
_num() { case "$1" in '' | *[!0-9-]*) die "${2:-value}: '$1' is not a number" ;; esac; }
assert_le() { _num "$1" "$3"; _num "$2" "$3"; [ "$1" -le "$2" ] || die "${3:-value}: $1 > $2"; }
assert_lt() { _num "$1" "$3"; _num "$2" "$3"; [ "$1" -lt "$2" ] || die "${3:-value}: $1 >= $2"; }
assert_ge() { _num "$1" "$3"; _num "$2" "$3"; [ "$1" -ge "$2" ] || die "${3:-value}: $1 < $2"; }
assert_gt() { _num "$1" "$3"; _num "$2" "$3"; [ "$1" -gt "$2" ] || die "${3:-value}: $1 <= $2"; }

# expect_fail what cmd... : the command must fail.
expect_fail() {
	_what=$1
	shift
	if "$@"; then die "$_what: '$*' succeeded but should have failed"; fi
	return 0
}

# Modules
load_nswap2l() {
	[ -d /sys/module/dm_nswap2l ] && return 0
	modprobe dm-nswap2l || die "modprobe dm-nswap2l failed (module not built or does not load)"
	[ -d /sys/module/dm_nswap2l ] || die "dm_nswap2l not in /sys/module after modprobe"
	# for tests/lib/guest-state, which names functions of a hung guest
	echo "dm_nswap2l .text $(cat /sys/module/dm_nswap2l/sections/.text)"
}
unload_nswap2l() {
	rmmod dm_nswap2l || die "rmmod dm_nswap2l failed (refcount: $(cat /sys/module/dm_nswap2l/refcnt 2>/dev/null))"
	[ ! -d /sys/module/dm_nswap2l ] || die "dm_nswap2l still loaded after rmmod"
}
# A benchmark given a second build (bench/run --baseline-module) measures
# both in one boot, in passes current, baseline, baseline, current (a drift
# of the emulator over the run weighs on both alike).  module_passes lists
# the passes ("current" alone without a baseline); use_module loads one.
BASELINE_MODULE=/opt/baseline/dm-nswap2l.ko
module_passes() {
	if [ -f "$BASELINE_MODULE" ]; then echo "current baseline baseline current"; else echo current; fi
}
use_module() { # current|baseline
	if [ -d /sys/module/dm_nswap2l ]; then unload_nswap2l; fi
	case "$1" in
	current) load_nswap2l ;;
	baseline)
		# its dependencies come from the current build's modules.dep
		modprobe dm-nswap2l && rmmod dm_nswap2l || die "cannot load the dependencies of dm-nswap2l"
		insmod "$BASELINE_MODULE" || die "insmod $BASELINE_MODULE failed"
		;;
	*) die "use_module: current or baseline, not $1" ;;
	esac
}
# the @@BENCH name of a pass: NAME alone without a baseline, NAME@current or
# NAME@baseline with one (bench/run tables the two side by side)
bench_name() { # name module
	if [ -f "$BASELINE_MODULE" ]; then echo "$1@$2"; else echo "$1"; fi
}

# Block devices
dev_sectors() { blockdev --getsz "$1"; }
dev_pages() { echo $(($(blockdev --getsz "$1") / 8)); }
dev_majmin() { cat "/sys/class/block/$(basename "$(readlink -f "$1")")/dev"; }

# Device mapper (no udev in the guest: create nodes ourselves)
dm_create() { # name table
	dmsetup create --noudevsync "$1" --table "$2" || return 1
	dmsetup mknodes "$1" >/dev/null 2>&1 || true
	[ -b "/dev/mapper/$1" ] || die "dm_create $1: /dev/mapper/$1 missing after create"
}
dm_remove() { # name [dmsetup remove options]
	_n=$1
	shift
	dmsetup remove --noudevsync "$@" "$_n"
}
dm_exists() { dmsetup info "$1" >/dev/null 2>&1; }
dm_count() { dmsetup ls --target nswap2l 2>/dev/null | grep -vc 'No devices found' || true; }

# nswap2l status:
# 0 <len> nswap2l <policy> <#tiers> [<tier> <cap> <used> <reads> <writes> <discards>]...
#   <zero_reads> <nospace> <rerouted> <moved>
#   [<#servers> [<server> <state> <held> <free> <inflight> <sent> <received>
#                <errors> <reconnects> <evict_asked> <evict_moved>]...]   (with netram=)
#   <prefetch_policy> <prefetched> <prefetched_reads> <cancelled>
#   <read_parallelism> <write_parallelism>
nsw_status() { dmsetup status "$1"; }
# tier_stat name tier capacity|used|reads|writes|discards
tier_stat() {
	dmsetup status "$1" | awk -v t="$2" -v f="$3" '
	BEGIN { split("capacity used reads writes discards", names, " "); for (i in names) off[names[i]] = i }
	{ n = $5; for (i = 0; i < n; i++) { b = 6 + i * 6; if ($b == t) { print $(b + off[f]); found = 1 } } }
	END { if (!found) print "missing" }'
}
nsw_zero_reads() { dmsetup status "$1" | awk '{ print $(6 + $5 * 6) }'; }
nsw_nospace() { dmsetup status "$1" | awk '{ print $(7 + $5 * 6) }'; }
nsw_rerouted() { dmsetup status "$1" | awk '{ print $(8 + $5 * 6) }'; }
nsw_moved() { dmsetup status "$1" | awk '{ print $(9 + $5 * 6) }'; }
# netram_stat name I addr|state|held|free|inflight|sent|received|errors|reconnects|evict_asked|evict_moved
netram_stat() {
	dmsetup status "$1" | awk -v s="$2" -v f="$3" '
	BEGIN { split("addr state held free inflight sent received errors reconnects evict_asked evict_moved", names, " ")
		for (i in names) off[names[i]] = i - 1 }
	{ b = 10 + $5 * 6; if (NF < b || s >= $b) { print "missing"; exit } print $(b + 1 + s * 11 + off[f]) }'
}
# nsw_recovery name reliability|copies_lost|pages_lost|recovering|recovery_ms|protect|refused:
# the Network RAM fields after the servers
nsw_recovery() {
	dmsetup status "$1" | awk -v f="$2" '
	BEGIN { split("reliability copies_lost pages_lost recovering recovery_ms protect refused", names, " ")
		for (i in names) off[names[i]] = i }
	{ b = 10 + $5 * 6; if (NF < b || !(f in off)) { print "missing"; exit } print $(b + $b * 11 + off[f]) }'
}
# netram_stat_of name ADDR FIELD: like netram_stat, for the server at ADDR
# (the one not removed, if any: a server removed and added again may be in
# a new slot or in a removed one's)
netram_stat_of() {
	dmsetup status "$1" | awk -v a="$2" -v f="$3" '
	BEGIN { split("addr state held free inflight sent received errors reconnects evict_asked evict_moved", names, " ")
		for (i in names) off[names[i]] = i - 1 }
	{ b = 10 + $5 * 6; v = "missing"; live = 0
	  for (s = 0; s < $b; s++) {
		e = b + 1 + s * 11
		if ($e != a || (live && $(e + 1) == "removed")) continue
		v = $(e + off[f]); live = $(e + 1) != "removed"
	  }
	  print v }'
}
# sum of a tier field over all tiers
nsw_total() { dmsetup status "$1" | awk -v f="$2" '
	BEGIN { split("capacity used reads writes discards", names, " "); for (i in names) off[names[i]] = i }
	{ s = 0; for (i = 0; i < $5; i++) s += $(6 + i * 6 + off[f]); print s }'; }
# nsw_check_shape name ntiers [nservers] : word count, target name and numeric fields
nsw_check_shape() {
	_st=$(dmsetup status "$1") || die "dmsetup status $1 failed"
	echo "$_st" | awk -v nt="$2" -v ns="${3:-}" '
	function num(i) { if ($i !~ /^[0-9]+$/) { print "field " i " (" $i ") not numeric"; exit 1 } }
	{
		if ($3 != "nswap2l") { print "target is " $3; exit 1 }
		if ($5 != nt) { print "#tiers is " $5 ", expected " nt; exit 1 }
		words = 9 + 6 * nt + (ns == "" ? 0 : 1 + 11 * ns + 5 + 2) + 6
		if (NF != words) { print NF " words, expected " words; exit 1 }
		for (i = 0; i < nt; i++) for (j = 1; j <= 5; j++) num(6 + i * 6 + j)
		for (i = 6 + nt * 6; i <= 9 + nt * 6; i++) num(i)
		# the last six: prefetch policy, prefetched, prefetched_reads, cancelled,
		# read and write parallelism
		if ($(NF - 5) !~ /^(none|rr|random|lrs|mrs|auto)$/) { print "prefetch policy " $(NF - 5); exit 1 }
		for (i = NF - 4; i <= NF - 2; i++) num(i)
		for (i = NF - 1; i <= NF; i++) if ($i !~ /^[0-9]+\.[0-9][0-9]$/) { print "field " i " (" $i ") not a parallelism"; exit 1 }
		if (ns == "") exit 0
		if ($(10 + nt * 6) != ns) { print "#servers is " $(10 + nt * 6) ", expected " ns; exit 1 }
		for (s = 0; s < ns; s++) {
			b = 11 + nt * 6 + s * 11
			if ($b !~ /^[0-9.]+:[0-9]+$/) { print "server address " $b; exit 1 }
			if ($(b + 1) !~ /^(connecting|up|down|failed|draining|removed)$/) { print "server state " $(b + 1); exit 1 }
			for (j = 2; j <= 10; j++) num(b + j)
		}
		b = 11 + nt * 6 + ns * 11
		if ($b !~ /^(none|mirror|parity)$/) { print "reliability " $b; exit 1 }
		for (j = 1; j <= 4; j++) num(b + j)
		if ($(b + 5) !~ /^(none|[a-z0-9]+\(.*\))$/) { print "protect " $(b + 5); exit 1 }
		num(b + 6)
	}' >/tmp/.shape || die "bad status shape for $1 ('$_st'): $(cat /tmp/.shape)"
}

# Kernel log
dmesg_mark() { NST_DMESG_MARK=$(dmesg | wc -l); }
dmesg_new() { dmesg | tail -n +$((NST_DMESG_MARK + 1)); }

# meminfo field in kB
meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# free memory in kB: MemFree and the free pages on the per-CPU lists, which
# MemFree leaves out (since 6.7 the kernel keeps MiBs there, tuned at run time)
free_kb() {
	echo $(($(meminfo_kb MemFree) + $(awk '$1 == "count:" { s += $2 } END { print s * 4 }' /proc/zoneinfo)))
}

# Drop the page cache of a block device / everything
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# run_fio what fio-args... : run fio, show its errors and die if it fails
run_fio() {
	_what=$1
	shift
	if ! fio --eta=never --output-format=normal --output=/tmp/fio-last.log "$@"; then
		grep -iE 'err|verify|bad|fail' /tmp/fio-last.log | head -n 20
		tail -n 15 /tmp/fio-last.log
		die "fio $_what failed"
	fi
	grep -E 'WRITE:|READ:' /tmp/fio-last.log | sed "s/^/[$NST_NAME] fio $_what: /"
}

# kill_during_fio name dev pages server seed: fio writes the device's first
#   pages at random (QD16, --verify=crc32c) and server I is killed (SIGKILL)
#   once 1500 pages have gone to Network RAM; dies unless fio verifies
#   everything after writing
kill_during_fio() {
	_w0=$(tier_stat "$1" netram writes)
	fio --name=kill --filename="$2" --ioengine=libaio --iodepth=16 --direct=1 --bs=4k \
		--size=$(($3 * 4))k --rw=randwrite --randseed="$5" --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --eta=never --output=/tmp/kill-fio.out &
	_fio=$!
	_writing() { [ "$(tier_stat "$1" netram writes)" -gt $((_w0 + 1500)) ]; }
	wait_until 60 "$1" "fio writing" _writing "$1"
	server_ctl kill "$4" || die "kill server $4"
	kill -0 $_fio 2>/dev/null || die "fio ended before server $4 was killed"
	log "server $4 killed after $(($(tier_stat "$1" netram writes) - _w0)) page writes"
	wait $_fio || { cat /tmp/kill-fio.out; die "fio verify failed after server $4 died"; }
}
# fio_verify_again dev pages seed: read back what kill_during_fio wrote
fio_verify_again() {
	run_fio verify-again --name=kill --filename="$1" --ioengine=libaio --iodepth=16 \
		--direct=1 --bs=4k --size=$(($2 * 4))k --rw=randwrite --randseed="$3" --verify=crc32c \
		--verify_fatal=1 --verify_only
}
# blkpat_write_parallel dev count seed writers: blkpat writes pages 0 to
#   count - 1 in that many parts at once (concurrent writes: parity groups fill up)
blkpat_write_parallel() {
	_bw_pids=
	for _bw_r in $(seq 0 $(($4 - 1))); do
		blkpat write "$1" $((_bw_r * $2 / $4)) $(($2 / $4)) "$3" >/dev/null &
		_bw_pids="$_bw_pids $!"
	done
	for _bw_p in $_bw_pids; do wait $_bw_p || die "blkpat write"; done
}
# blkpat_scan_counts dev first count seed: "ok eio bad" of a blkpat scan
blkpat_scan_counts() {
	blkpat scan "$@" | sed -n 's/^blkpat: scan ok=\([0-9]*\) eio=\([0-9]*\) bad=\([0-9]*\)$/\1 \2 \3/p'
}

# nsw_recovered name: no recovery runs and no copy is lost
nsw_recovered() { [ "$(nsw_recovery "$1" recovering)" = 0 ] && [ "$(nsw_recovery "$1" copies_lost)" = 0 ]; }
# servers_in_state name state I...: each server I of the device is in that state
servers_in_state() {
	_si_n=$1 _si_st=$2
	shift 2
	for _i; do [ "$(netram_stat "$_si_n" "$_i" state)" = "$_si_st" ] || return 1; done
}
# kill_servers_and_scan name dev pages seed I...: SIGKILL servers I... at
#   once, wait until they are failed and recovery has stopped, then scan the
#   first pages (written by blkpat with seed): no page may read wrong, and
#   status must count the pages that read EIO; sets SCAN_OK and SCAN_EIO
kill_servers_and_scan() {
	_ks_n=$1 _ks_dev=$2 _ks_pages=$3 _ks_seed=$4
	shift 4
	for _i; do server_ctl kill "$_i" || die "kill server $_i"; done
	wait_until 30 "$_ks_n" "servers $* failed" servers_in_state "$_ks_n" failed "$@"
	_stopped() { [ "$(nsw_recovery "$1" recovering)" = 0 ]; }
	wait_until 120 "$_ks_n" "recovery done" _stopped "$_ks_n"
	show_status "$_ks_n"
	set -- $(blkpat_scan_counts "$_ks_dev" 0 "$_ks_pages" "$_ks_seed")
	log "after servers died: ok=$1 eio=$2 bad=$3"
	assert_eq "$3" 0 "pages with wrong contents"
	assert_eq "$(($1 + $2))" "$_ks_pages" "pages scanned"
	assert_gt "$2" 0 "pages lost (their redundancy was on the dead servers)"
	assert_gt "$1" 0 "pages that survived"
	assert_eq "$(nsw_recovery "$_ks_n" pages_lost)" "$2" "pages lost in status"
	SCAN_OK=$1 SCAN_EIO=$2
}

# nswap2l table helpers
nsw_capacity_pages() { # dev... : sum of floor(sectors/8)
	_s=0
	for _d in "$@"; do _s=$((_s + $(dev_sectors "$_d") / 8)); done
	echo $_s
}
show_status() { log "status $1: $(dmsetup status "$1")"; }
# queue_attr name attr: /sys/block/dm-N/queue/ATTR of the device NAME
queue_attr() { cat "/sys/block/dm-$(dmsetup info -c --noheadings -o minor "$1" | tr -d ' ')/queue/$2"; }

# sysfs_stat name file row column: a field of /sys/kernel/nswap2l/NAME/FILE
# (tiers, servers), the row named ROW in its first column, the column by the
# name in the header line
sysfs_stat() {
	awk -v row="$3" -v col="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; if (!(col in c)) exit 2; next }
		$1 == row { print $(c[col]); found = 1 }
		END { if (!found) exit 1 }' "/sys/kernel/nswap2l/$1/$2" ||
		die "no $4 of $3 in /sys/kernel/nswap2l/$1/$2: $(cat "/sys/kernel/nswap2l/$1/$2")"
}

# ---- Network RAM (cases with "# servers: N") --------------------------------
NST_KEY_DESC_DEFAULT=nswap2l:test

# netram_load_key [DESC]: add the servers' key (NST_KEY_FILE) to the user
# keyring (@u) as a "logon" key DESC (default nswap2l:test), where the
# target's request_key() finds it; prints the key's serial.
netram_load_key() {
	[ -n "${NST_KEY_FILE:-}" ] || die "netram_load_key: no NST_KEY_FILE (case without '# servers:'?)"
	addkey logon "${1:-$NST_KEY_DESC_DEFAULT}" "$NST_KEY_FILE" @u || die "netram_load_key: add_key failed"
}

# netram_table_arg [DESC]: the table words for every server and the key,
#   netram=169.254.100.100:7000,169.254.100.101:7000 key=:32:logon:DESC
netram_table_arg() {
	[ -n "${NST_SERVERS:-}" ] || die "netram_table_arg: no NST_SERVERS (case without '# servers:'?)"
	echo "netram=$(echo $NST_SERVERS | tr ' ' ',') key=:$(wc -c <"$NST_KEY_FILE"):logon:${1:-$NST_KEY_DESC_DEFAULT}"
}

# netram_server I: address of server I (169.254.100.(100+I):7000)
netram_server() { echo "169.254.100.$((100 + $1)):7000"; }

# server_ctl CMD [ARG...]: one command to the host's tests/lib/server-control
#   alive I | kill I | term I | stop I | cont I | start I | stats I |
#   set-memavailable I SIZE        (I = 0..N-1, SIZE e.g. 64M) |
#   misbehave I MODE...            (tests/lib/misbehaving-server; MODE none:
#                                   nswapd again) |
#   grant NAME | revoke NAME       (client NAME, with the test key, in every
#                                   nswapd's --clients directory; "default" is
#                                   granted from the start) |
#   wrong-peer-key I | peer-refusals I
#                                  ("# servers: N peers": restart I with a peer
#                                   key of its own; "ours N theirs M", lines of
#                                   its log on peer keys refused)
# Prints the reply without its final "ok" line and succeeds; on "error ..."
# (or no reply) prints the reply to stderr and fails.
server_ctl() {
	_c=${NST_CTL:-169.254.100.99:7000}
	_r=$(echo "$*" | timeout 90 nc "${_c%:*}" "${_c#*:}" 2>&1 | tr -d '\r')
	case "$_r" in
	ok) return 0 ;;
	*"
ok") echo "${_r%
ok}"; return 0 ;;
	esac
	echo "server_ctl $*: ${_r:-no reply}" >&2
	return 1
}

# server_stat I FIELD: a number from nswapd's own report (server_ctl stats),
#   e.g. held_pages, evict_pending: what the server sees, not the target
server_stat() {
	server_ctl stats "$1" | tr ',{}' '\n\n\n' | sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" | head -n 1
}

# server_alive I: true if server I runs (or is stopped)
server_alive() { [ "$(server_ctl alive "$1")" = yes ]; }

# ---- benchmarks (bench/cases/) ----
# median: the median of the numbers on stdin (spaces or newlines)
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# fio_iops dev rw engine depth -> IOPS of a 4 KiB job over the case's
# REGION_MB, RUNTIME seconds after a 1 s ramp
# prefill_random DEV MB: map every page of DEV's first MB MiB with random
# data (the same MiB over and over), so that reads are served by its tiers
prefill_random() {
	dd if=/dev/urandom of=/tmp/chunk bs=1M count=1 2>/dev/null
	_pr_i=0
	while [ $_pr_i -lt "$2" ]; do
		dd if=/tmp/chunk of="$1" bs=1M seek=$_pr_i count=1 oflag=direct conv=notrunc 2>/dev/null ||
			die "prefill of $1 failed"
		_pr_i=$((_pr_i + 1))
	done
}

# busy time of the guest's CPUs so far, in USER_HZ (100) ticks
cpu_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# sectors moved on a block device so far, both ways
io_sectors() {
	set -- $(stat -L -c '%t %T' "$1")
	awk '{ print $3 + $7 }' "/sys/dev/block/$((0x$1)):$((0x$2))/stat"
}
# bytes the guest has sent on its network interfaces so far (not lo)
net_tx_bytes() {
	awk 'NR > 2 { sub(/^ */, ""); split($0, f, /[: ]+/); if (f[1] != "lo") n += f[10] }
		END { print n + 0 }' /proc/net/dev
}

fio_iops() {
	fio --name=b --filename="$1" --rw="$2" --ioengine="$3" --iodepth="$4" \
		--bs=4k --direct=1 --size=${REGION_MB}M --time_based --runtime="$RUNTIME" \
		--ramp_time=1 --randrepeat=0 --norandommap --output-format=terse --terse-version=3 \
		>/tmp/fio.out 2>/tmp/fio.err || die "fio $2 $3 on $1 failed: $(cat /tmp/fio.err)"
	# terse v3: field 8 is read IOPS, field 49 write IOPS
	case "$2" in
	randread) cut -d';' -f8 /tmp/fio.out ;;
	*) cut -d';' -f49 /tmp/fio.out ;;
	esac
}

# ---- prefetch and profiler ----
# Prefetching (Network RAM -> flash): /sys/kernel/nswap2l/NAME/prefetch/
# {policy,when,amount,interval_ms,stats}, "dmsetup message NAME 0 prefetch
# KEY VALUE" (KEY policy|when|amount|interval).  The profiler:
# /sys/kernel/nswap2l/NAME/profile ("key value..." lines).  Both add six
# fields at the end of the status line:
#   <prefetch_policy> <prefetched> <prefetched_reads> <cancelled>
#   <read_parallelism> <write_parallelism>

# kv_get FILE KEY: the first value of the line "KEY value..." in FILE, or "missing"
kv_get() {
	[ -r "$1" ] || { echo missing; return 0; }
	awk -v k="$2" '$1 == k { print $2; f = 1; exit } END { if (!f) print "missing" }' "$1"
}

# sysfs_put FILE VALUE: write VALUE to FILE; fails as the write fails
sysfs_put() { echo "$2" >"$1"; }

# pf_file NAME KEY: the sysfs file of prefetch setting KEY (interval -> interval_ms)
pf_file() {
	case "$2" in
	interval) echo "/sys/kernel/nswap2l/$1/prefetch/interval_ms" ;;
	*) echo "/sys/kernel/nswap2l/$1/prefetch/$2" ;;
	esac
}
# pf_get NAME KEY / pf_set NAME KEY VALUE: prefetch setting through sysfs
pf_get() { cat "$(pf_file "$1" "$2")" 2>/dev/null || echo missing; }
pf_set() { sysfs_put "$(pf_file "$1" "$2")" "$3"; }
# pf_msg NAME KEY VALUE: the same through a message
pf_msg() { dmsetup message "$1" 0 prefetch "$2" "$3"; }
# pf_config NAME: "policy when amount interval" as sysfs shows them
pf_config() { echo "$(pf_get "$1" policy) $(pf_get "$1" when) $(pf_get "$1" amount) $(pf_get "$1" interval)"; }
# pf_stat NAME FIELD: a value of prefetch/stats (wakeups, prefetched, rr_reads, ...)
pf_stat() { kv_get "/sys/kernel/nswap2l/$1/prefetch/stats" "$2"; }
# pf_stat_ge NAME FIELD MIN: true if that value is a number >= MIN (for wait_until)
pf_stat_ge() {
	_v=$(pf_stat "$1" "$2")
	case "$_v" in '' | *[!0-9]*) return 1 ;; esac
	[ "$_v" -ge "$3" ]
}
# pf_status NAME policy|prefetched|prefetched_reads|cancelled|read_parallelism|write_parallelism:
# one of the six fields at the end of the status line
pf_status() {
	dmsetup status "$1" | awk -v f="$2" '
	BEGIN { split("policy prefetched prefetched_reads cancelled read_parallelism write_parallelism", n, " ")
		for (i in n) off[n[i]] = i }
	{ if (!(f in off) || NF < 12) print "missing"; else print $(NF - 6 + off[f]) }'
}

# prof_file NAME: the profile file; prof_snap NAME FILE: one read of it into FILE
prof_file() { echo "/sys/kernel/nswap2l/$1/profile"; }
prof_snap() { cat "$(prof_file "$1")" >"$2" || die "cannot read $(prof_file "$1")"; }
# prof_get NAME KEY: one value of the live profile
prof_get() { kv_get "$(prof_file "$1")" "$2"; }
# prof_hist_check FILE KEY: the histogram KEY in the profile snapshot FILE has
# 65 counts (0..63 and >= 64 in flight) that sum to the snapshot's samples
prof_hist_check() {
	awk -v k="$2" '
	$1 == "samples" { s = $2 }
	$1 == k { found = 1; n = NF - 1; for (i = 2; i <= NF; i++) { if ($i !~ /^[0-9]+$/) bad = $i; t += $i } }
	END {
		if (!found) { print "no " k " line"; exit 1 }
		if (bad != "") { print k ": count \"" bad "\" is not a number"; exit 1 }
		if (n != 65) { print k ": " n " counts, expected 65"; exit 1 }
		if (s == "" || t != s) { print k " sums to " t ", samples " s; exit 1 }
	}' "$1" >/tmp/.hist || die "profile: $(cat /tmp/.hist)"
}
# prof_bins FILE KEY FROM TO: the sum of histogram KEY's counts FROM..TO (0..64)
prof_bins() {
	awk -v k="$2" -v a="$3" -v b="$4" '$1 == k { for (i = a; i <= b; i++) t += $(i + 2); f = 1 }
		END { if (f) print t + 0; else print "missing" }' "$1"
}

# float_in LO X HI: true if X is a decimal number with LO <= X <= HI
float_in() {
	awk -v lo="$1" -v x="$2" -v hi="$3" 'BEGIN {
		if (x !~ /^[0-9]+(\.[0-9]+)?$/) exit 1
		exit !(x + 0 >= lo + 0 && x + 0 <= hi + 0) }'
}
assert_float_in() { # lo x hi what
	float_in "$1" "$2" "$3" || die "${4:-value}: '$2' is not within [$1, $3]"
}

# uptime_cs: time since boot in hundredths of a second
uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }

# ---- the nswap2l command (tools/nswap2l, installed in /opt/nswap2l) ----------

# exits_with CODE PATTERN CMD...: CMD must exit with CODE and say PATTERN
# (grep -E) on stderr
exits_with() {
	_want=$1 _pat=$2
	shift 2
	_rc=0
	"$@" >/tmp/.out 2>/tmp/.err || _rc=$?
	[ "$_rc" = "$_want" ] || die "'$*': exit status $_rc, expected $_want (stderr: $(cat /tmp/.err))"
	grep -Eq -- "$_pat" /tmp/.err || die "'$*': stderr '$(cat /tmp/.err)' does not say '$_pat'"
	log "as expected: $* -> $_rc: $(head -n 1 /tmp/.err)"
}

# as_nobody CMD...: CMD run as user and group 65534
as_nobody() {
	python3 -c 'import os, sys; os.setgid(65534); os.setuid(65534); os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# private_keyring CMD...: CMD in a new session keyring that is not linked to
# root's user keyring, as systemd starts a system service (KeyringMode=private)
private_keyring() {
	python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(250, 1, None) < 0:	# keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL), x86_64
    sys.exit("private_keyring: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# json_get FILE EXPR: the Python expression EXPR of the JSON value d in FILE
json_get() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" ||
		die "json_get $1 '$2' failed"
}

# png_size FILE: "WIDTHxHEIGHT" of a PNG whose every chunk checks out (CRC,
# image data that inflates), else fails
png_size() {
	python3 - "$1" <<'PY' || die "$1 is not a valid PNG"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
pos, idat, size = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0], kind
    if kind == b"IHDR":
        size = struct.unpack(">II", body[:8])
    idat += body if kind == b"IDAT" else b""
    pos += 12 + length
width, height = size
assert len(zlib.decompress(idat)) > height, "image data"
print(f"{width}x{height}")
PY
}

# export_file PATH [NAME]: hand PATH to the host, where tests/run saves it as
# build/test-logs/<case>.files/NAME (default: PATH's base name)
export_file() {
	echo "@@FILE ${2:-${1##*/}}"
	base64 "$1" || die "export_file $1"
	echo "@@END"
}

# unit_command DIRECTIVE INSTANCE: the command line of nswap2l@INSTANCE's
# DIRECTIVE (ExecStartPre, ExecStart, ExecStop), as systemd would run it
unit_command() {
	sed -n "s/^$1=//p" /opt/nswap2l/systemd/nswap2l@.service | sed "s/%i/$2/g"
}
