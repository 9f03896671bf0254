# Prefetch control.  The table option: dmsetup table shows it in full form
# (absent when all default), bad ones fail the create with a dmesg line.
# Sysfs and messages switch policy, when, amount and interval while fio
# writes and verifies under aggressive prefetching; prefetch moves race
# trim+write (fio randtrimwrite, verified) and write/discard cycles
# (discarded pages must read as zeros).  Prefetched pages that are rewritten
# go back to Network RAM and free their flash slots.  Bad values are refused
# with a dmesg line naming the valid choices and change nothing.  A reload
# changing only prefetch= keeps the data.  Suspend stops a busy worker (no
# flash I/O, no files) and resume starts it again; removing the device
# while the worker is busy is prompt.  A prefetched page inside a
# multi-page overwrite is placed again.  The module unloads.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1
# disks: flash=64M
# timeout: 600

load_nswap2l
netram_load_key >/dev/null
T="$(netram_table_arg) flash=$FLASH"          # 3 table args
PAGES=8192                                    # 32 MiB, all of it fits on flash
LEN=$((PAGES * 8))

# table_has NAME OPTION: the live table shows OPTION (whole word)
table_has() { case "$(dmsetup table "$1") " in *" $2 "*) return 0 ;; esac; return 1; }
table_ok() { # NAME: <#args> is the number of words after it
	dmsetup table "$1" | awk '{ exit !($4 == NF - 4) }' || die "table of $1: wrong <#args>: $(dmsetup table "$1")"
}

# --- 1. the table option ----------------------------------------------------------
echo_case() { # OPTION|"" NORMALIZED|"" [SYSFS_CONFIG]
	if [ -n "$1" ]; then
		dm_create t "0 $LEN nswap2l 4 $T $1" || die "create with $1"
	else
		dm_create t "0 $LEN nswap2l 3 $T" || die "create without prefetch="
	fi
	table_ok t
	if [ -z "$2" ]; then
		case "$(dmsetup table t)" in *prefetch=*) die "'${1:-no option}': table shows prefetch=: $(dmsetup table t)" ;; esac
	else
		table_has t "prefetch=$2" || die "'$1': table does not show prefetch=$2: $(dmsetup table t)"
	fi
	[ -z "${3:-}" ] || assert_eq "$(pf_config t)" "$3" "'${1:-no option}': policy, when, amount, interval in sysfs"
	[ -z "${3:-}" ] || assert_eq "$(pf_status t policy)" "${3%% *}" "'${1:-no option}': policy in the status line"
	dm_remove t || die "remove t"
}
echo_case "" "" "none pays:25 written:10:4096 500"
echo_case prefetch=none "" "none pays:25 written:10:4096 500"
echo_case prefetch=none,when=pays:25,amount=written:10:4096,interval=500 ""
echo_case prefetch=lrs lrs,when=pays:25,amount=written:10:4096,interval=500 "lrs pays:25 written:10:4096 500"
echo_case prefetch=rr,amount=held:5,interval=200 rr,when=pays:25,amount=held:5:4096,interval=200
echo_case prefetch=rr,when=always rr,when=always,amount=written:10:4096,interval=500 "rr always written:10:4096 500"
echo_case prefetch=lrs,when=pays:5 lrs,when=pays:5,amount=written:10:4096,interval=500 "lrs pays:5 written:10:4096 500"
echo_case prefetch=mrs,when=swapping,amount=written:25:64 mrs,when=swapping,amount=written:25:64,interval=500 \
	"mrs swapping written:25:64 500"
echo_case prefetch=none,interval=200 none,when=pays:25,amount=written:10:4096,interval=200
echo_case prefetch=auto,interval=10 auto,when=pays:25,amount=written:10:4096,interval=10
echo_case prefetch=random,amount=held:100:16,interval=60000 random,when=pays:25,amount=held:100:16,interval=60000 \
	"random pays:25 held:100:16 60000"

bad_table() { # OPTION REGEX: create refused, dmesg says /REGEX/
	dmesg_mark
	expect_fail "create with $1" dm_create bad "0 $LEN nswap2l 4 $T $1"
	if dm_exists bad; then
		dm_remove bad
		die "a device is left after the refused create with $1"
	fi
	_new=$(dmesg_new | grep nswap2l || true)
	echo "$_new" | grep -qE "$2" || die "create with $1: no dmesg line matching /$2/: $_new"
	log "refused $1: $(echo "$_new" | grep -E "$2" | tail -n 1)"
}
bad_table prefetch=bogus "bogus"
bad_table prefetch=lrs,when=sometimes "sometimes"
bad_table prefetch=lrs,amount=held:101 "held:101"
bad_table prefetch=rr,interval=5 "interval"
bad_table prefetch=rr,speed=3 "speed"

# --- 2. switching while fio writes and verifies -------------------------------------
DEV=/dev/mapper/pf
dm_create pf "0 $LEN nswap2l 4 $T prefetch=rr,amount=held:100,interval=50" || die "create pf"
table_has pf prefetch=rr,when=pays:25,amount=held:100:4096,interval=50 || die "table of pf: $(dmsetup table pf)"
# pages 0..2047: section 3's fio (fio 3.33's randtrimwrite writes nothing at an offset)
R1=2048 N1=1024                               # pages 2048..3071
# fio runs again and again until a whole round of switches is done: a
# single run (4 MiB, twice) ended after 8 switches on a fast host
rm -f /tmp/sw-done
(
	while [ ! -e /tmp/sw-done ]; do
		fio --eta=never --name=sw --filename=$DEV --offset=$((R1 * 4096)) --size=$((N1 * 4096)) --rw=randwrite \
			--bs=4k --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --verify_fatal=1 --do_verify=1 \
			--loops=2 --randseed=30 --output=/tmp/fio-sw.log || exit 1
	done
) &
FIO=$!
switches=0 live=0
sw() { # sysfs|msg KEY VALUE EXPECTED(pattern of what sysfs shows then)
	if [ "$1" = sysfs ]; then
		pf_set pf "$2" "$3" || die "sysfs: prefetch $2 '$3' refused"
	else
		pf_msg pf "$2" "$3" || die "message: prefetch $2 '$3' refused"
	fi
	_got=$(pf_get pf "$2")
	# shellcheck disable=SC2254
	case "$_got" in $4) ;; *) die "prefetch $2 set to '$3' by $1 reads back '$_got', expected '$4'" ;; esac
	switches=$((switches + 1))
	if kill -0 $FIO 2>/dev/null; then live=$((live + 1)); fi
	sleep 0.2
}
round() {
	sw sysfs policy random random
	sw msg policy lrs lrs
	sw sysfs policy mrs mrs
	sw msg policy auto auto
	sw sysfs policy none none
	sw msg policy rr rr
	sw sysfs when swapping swapping
	sw msg when idle 'idle*'
	sw sysfs when always always
	sw msg when pays:10 pays:10
	sw sysfs when pays pays:25
	sw msg when always always
	sw msg amount written:100 written:100:4096
	sw sysfs amount held:50:512 held:50:512
	sw msg interval 20 20
	sw sysfs interval 200 200
	sw sysfs amount held:100 held:100:4096
	sw msg interval 50 50
	sw msg when always always
	sw sysfs policy lrs lrs
	sw msg policy random random
}
round
touch /tmp/sw-done
wait $FIO || {
	grep -iE 'verify|bad|err' /tmp/fio-sw.log | head -n 20
	die "fio verify failed while prefetch settings changed"
}
grep -E 'WRITE:|READ:' /tmp/fio-sw.log
log "$switches switches, $live of them while fio ran"
assert_ge "$live" 9 "switches while fio ran"
assert_gt "$(pf_stat pf prefetched)" 0 "pages prefetched while fio ran"
assert_gt "$(pf_stat pf rewritten)" 0 "prefetched pages fio rewrote"

# --- 3. races: trim+write and write/discard cycles under aggressive prefetching --
R2=0 N2=1024                                  # pages 0..1023: fio trim, write, verify
R3=$((R1 + N1)) N3=1024                       # pages 3072..4095: write, rewrite, discard
assert_eq "$(pf_config pf)" "random always held:100:4096 50" "prefetch settings for the races"
c0=$(pf_stat pf cancelled) d0=$(nsw_total pf discards)
_num "$c0" cancelled
fio --eta=never --name=tw --filename=$DEV --offset=$((R2 * 4096)) --size=$((N2 * 4096)) --rw=randtrimwrite \
	--bs=4k --ioengine=libaio --iodepth=16 --direct=1 --serialize_overlap=1 --verify=crc32c --verify_fatal=1 \
	--do_verify=1 --loops=2 --randseed=31 --output=/tmp/fio-tw.log &
FIO=$!
pass=0
while kill -0 $FIO 2>/dev/null || [ $pass -lt 2 ]; do
	pass=$((pass + 1))
	blkpat write $DEV $R3 $N3 $((100 + pass)) >/dev/null || die "pass $pass: write"
	sleep 0.1                                 # prefetching takes some of them...
	blkpat write $DEV $R3 $N3 $((200 + pass)) >/dev/null || die "pass $pass: rewrite"   # ...and races this
	blkpat verify $DEV $R3 $N3 $((200 + pass)) || die "pass $pass: rewritten pages corrupted"
	sleep 0.1
	blkdiscard -f -o $((R3 * 4096)) -l $((N3 * 4096)) $DEV || die "pass $pass: discard"
	blkpat zero $DEV $R3 $N3 || die "pass $pass: discarded pages do not read as zeros (a prefetch move undid the discard?)"
done
wait $FIO || {
	grep -iE 'verify|bad|err' /tmp/fio-tw.log | head -n 20
	die "fio trim+write+verify failed under prefetching"
}
grep -E 'WRITE:|READ:|TRIM:' /tmp/fio-tw.log
grep -q 'WRITE:' /tmp/fio-tw.log || die "fio randtrimwrite wrote nothing"
assert_gt "$(nsw_total pf discards)" "$d0" "discards"
log "$pass write/rewrite/discard passes; moves cancelled by a racing write or discard: $(($(pf_stat pf cancelled) - c0))"
show_status pf
assert_eq "$(nsw_nospace pf)" 0 "nospace errors"
assert_eq "$(netram_stat pf 0 errors)" 0 "server errors"

# --- 4. rewriting prefetched pages places them again ----------------------------------
pf_set pf policy rr || die "policy rr"
blkdiscard -f $DEV || die "discard all"
empty() { [ "$(nsw_total pf used)" -eq 0 ]; }
wait_until 30 pf "device empty after discarding it all" empty
N=1024
blkpat write $DEV 0 $N 51 || die "write $N pages"
all_on_flash() { [ "$(tier_stat pf flash used)" -ge $N ] && [ "$(tier_stat pf netram used)" -eq 0 ]; }
wait_until 30 pf "all $N pages prefetched to flash" all_on_flash
pf_set pf amount held:0 || die "amount held:0"   # nothing moves any more
assert_eq "$(tier_stat pf flash used)" $N "pages on flash"
fr0=$(tier_stat pf flash reads) pr0=$(pf_stat pf prefetched_reads) rr0=$(pf_stat pf rr_reads)
_num "$pr0" prefetched_reads
_num "$rr0" rr_reads
blkpat verify $DEV 0 $N 51 || die "prefetched pages corrupted"
assert_ge "$(($(tier_stat pf flash reads) - fr0))" $N "flash reads of the prefetched pages"
assert_ge "$(($(pf_stat pf prefetched_reads) - pr0))" $N "prefetched_reads"
assert_ge "$(($(pf_stat pf rr_reads) - rr0))" $N "rr_reads"
float_in 0.01 "$(pf_stat pf reads_per_prefetch)" 1000000 ||
	die "reads_per_prefetch '$(pf_stat pf reads_per_prefetch)' after reading prefetched pages"
nw0=$(tier_stat pf netram writes) rw0=$(pf_stat pf rewritten)
_num "$rw0" rewritten
blkpat write $DEV 0 $N 52 || die "rewrite"
assert_ge "$(($(tier_stat pf netram writes) - nw0))" $N "Network RAM writes of the rewritten pages"
placed_again() { [ "$(tier_stat pf flash used)" -eq 0 ] && [ "$(tier_stat pf netram used)" -eq $N ]; }
wait_until 30 pf "rewritten pages in Network RAM, their flash slots freed" placed_again
assert_ge "$(($(pf_stat pf rewritten) - rw0))" $N "rewritten"
blkpat verify $DEV 0 $N 52 || die "rewritten pages corrupted"

# --- 5. bad values are refused and change nothing ---------------------------------
cfg=$(pf_config pf)
assert_eq "$cfg" "rr always held:0:4096 50" "prefetch settings before the bad values"
bad() { # sysfs|msg KEY VALUE REGEX: refused, dmesg says /REGEX/, nothing changed
	dmesg_mark
	if [ "$1" = sysfs ]; then
		expect_fail "sysfs prefetch $2 '$3'" pf_set pf "$2" "$3"
	else
		expect_fail "message prefetch $2 '$3'" pf_msg pf "$2" "$3"
	fi
	bad_line=$(dmesg_new | grep nswap2l | grep -E "$4" | tail -n 1 || true)
	[ -n "$bad_line" ] || die "$1 prefetch $2 '$3': no dmesg line matching /$4/: $(dmesg_new)"
	assert_eq "$(pf_config pf)" "$cfg" "prefetch settings after $1 prefetch $2 '$3'"
}
names_listed() { # WHAT NAME...: the last refused value's dmesg line names them all
	_what=$1
	shift
	for _n in "$@"; do
		echo "$bad_line" | grep -qw "$_n" || die "$_what: dmesg line does not name '$_n': $bad_line"
	done
}
bad sysfs policy bogus "policy.*bogus"
names_listed "sysfs policy bogus" none rr random lrs mrs auto
log "$bad_line"
bad sysfs when bogus "when.*bogus"
names_listed "sysfs when bogus" pays always swapping idle
bad sysfs amount held:101 "held:101"
bad sysfs amount written:x "written:x"
bad sysfs amount seldom:10 "seldom"
bad sysfs interval 0 "interval"
bad sysfs interval 5 "interval"
bad sysfs interval 99999999 "interval"
bad msg policy bogus "policy.*bogus"
names_listed "message policy bogus" none rr random lrs mrs auto
bad msg when never "never"
bad msg amount held:101 "held:101"
bad msg interval 60001 "interval"
bad msg speed 3 "speed"
expect_fail "sysfs stats is read-only" sysfs_put /sys/kernel/nswap2l/pf/prefetch/stats 0
assert_eq "$(pf_config pf)" "$cfg" "prefetch settings after the bad values"

# --- 6. a reload that changes only prefetch= keeps the data --------------------------
# what sysfs set shows in the live table
table_has pf prefetch=rr,when=always,amount=held:0:4096,interval=50 ||
	die "live table does not show the settings made through sysfs: $(dmsetup table pf)"
blkpat write $DEV $N $N 53 || die "write"
pf_set pf amount held:10:64 || die "amount held:10:64"   # a few pages to flash, most stay
has_flash() { [ "$(tier_stat pf flash used)" -gt 0 ]; }
wait_until 30 pf "some pages prefetched" has_flash
pf_set pf amount held:0 || die "amount held:0"
show_status pf
assert_gt "$(tier_stat pf netram used)" 0 "pages in Network RAM before the reload"
used0=$(nsw_total pf used)
dmsetup reload pf --table "0 $LEN nswap2l 4 $T prefetch=lrs,amount=written:20,interval=200" || die "reload"
dmsetup resume pf || die "resume after reload"
assert_eq "$(pf_config pf)" "lrs pays:25 written:20:4096 200" "prefetch settings after the reload"
table_has pf prefetch=lrs,when=pays:25,amount=written:20:4096,interval=200 || die "table after reload: $(dmsetup table pf)"
assert_eq "$(pf_status pf policy)" lrs "policy in the status line after the reload"
assert_eq "$(nsw_total pf used)" "$used0" "pages stored after the reload"
blkpat verify $DEV 0 $N 52 || die "pages lost by a reload changing prefetch= (first region)"
blkpat verify $DEV $N $N 53 || die "pages lost by a reload changing prefetch= (second region)"
dmsetup reload pf --table "0 $LEN nswap2l 3 $T" || die "reload without prefetch="
dmsetup resume pf || die "resume after reload without prefetch="
assert_eq "$(pf_config pf)" "none pays:25 written:10:4096 500" "prefetch settings after a reload without prefetch="
case "$(dmsetup table pf)" in *prefetch=*) die "table shows prefetch= after a reload without it: $(dmsetup table pf)" ;; esac
blkpat verify $DEV 0 $N 52 || die "pages lost by a reload dropping prefetch= (first region)"
blkpat verify $DEV $N $N 53 || die "pages lost by a reload dropping prefetch= (second region)"
dm_remove pf || die "remove pf"

# --- 7. suspend, resume and remove while the worker is busy -----------------------------
# at most 8 pages per 20 ms wake-up: moving NB pages takes 10 s at the least
NB=4096
DEV=/dev/mapper/busy
dm_create busy "0 $((NB * 8)) nswap2l 3 $T" || die "create busy"
blkpat write $DEV 0 $NB 71 || die "write busy"
pf_set busy amount held:100:8 || die "amount held:100:8"
pf_set busy interval 20 || die "interval 20"
pf_set busy when always || die "when always"   # flash is not measured: pays would move a probe only
pf_set busy policy rr || die "policy rr"
wait_until 30 busy "prefetching started" pf_stat_ge busy prefetched 1
flash=$(basename "$FLASH")
io_count() { awk '{ print $1 + $5 }' "/sys/block/$flash/stat"; }   # reads + writes completed
dmsetup suspend busy || die "suspend while the worker is busy"
p1=$(pf_status busy prefetched) f1=$(tier_stat busy flash used) c1=$(io_count)
assert_lt "$p1" $NB "pages prefetched when suspended (the worker must still have work)"
[ ! -e /sys/kernel/nswap2l/busy/prefetch ] || die "prefetch files exist while suspended"
sleep 1
assert_eq "$(pf_status busy prefetched)" "$p1" "pages prefetched while suspended"
assert_eq "$(tier_stat busy flash used)" "$f1" "flash used while suspended"
assert_eq "$(io_count)" "$c1" "I/O the flash device completed while suspended"
dmsetup resume busy || die "resume"
[ -d /sys/kernel/nswap2l/busy/prefetch ] || die "no prefetch files after resume"
assert_eq "$(pf_config busy)" "rr always held:100:8 20" "prefetch settings after suspend and resume"
blkpat verify $DEV 0 $NB 71 || die "pages corrupted across suspend/resume of a busy worker"
wait_until 30 busy "prefetching goes on after resume" pf_stat_ge busy prefetched $((p1 + 1))
p2=$(pf_status busy prefetched)
assert_lt "$p2" $NB "pages prefetched before removal (the worker must still have work)"
t0=$(uptime_cs)
dm_remove busy || die "remove while the worker is busy"
t1=$(uptime_cs)
log "remove took $(((t1 - t0) * 10)) ms with $((NB - p2)) pages left to prefetch"
assert_le "$((t1 - t0))" 1000 "remove while the worker is busy, in 1/100 s"

# --- 8. a prefetched page inside a multi-page overwrite is placed again -----------
# Page 0 spills to flash slot 0 (Network RAM is full), page 1 is prefetched
# into slot 1: one write over both is cut after page 0, and page 1 is placed
# again and counted as rewritten.  (The run used to go on over the next
# slot: page 1 was updated in place on flash, kept its prefetched bits and
# skewed prefetched_reads and auto.)
server_ctl misbehave 0 few-free >/dev/null || die "a server with room for 512 pages"
DEV=/dev/mapper/ow
dm_create ow "0 $LEN nswap2l 3 $T" || die "create ow"
blkpat write $DEV 1 512 81 || die "fill Network RAM"
blkpat write $DEV 0 1 82 || die "page 0"
assert_eq "$(tier_stat ow flash used)" 1 "page 0 spilled to flash"
pf_set ow interval 20 && pf_set ow amount held:100:1 && pf_set ow policy rr ||
	die "prefetch one page per wake-up"
wait_until 30 ow "page 1 prefetched" pf_stat_ge ow prefetched 1
pf_set ow policy none || die "policy none"
rw0=$(pf_stat ow rewritten)
blkpat write $DEV 0 2 83 || die "one write over pages 0 and 1"
assert_eq "$(($(pf_stat ow rewritten) - rw0))" 1 "prefetched pages placed again"
blkpat verify $DEV 0 2 83 || die "pages 0 and 1"
blkpat verify $DEV 2 511 81 || die "pages 2 to 512"
dm_remove ow || die "remove ow"
server_ctl misbehave 0 none >/dev/null || die "nswapd back"
unload_nswap2l
log "ok"
