# shellcheck shell=sh
# Helpers for test cases; sourced (busybox sh) before the case script, which
# then runs with `set -e`.  Environment: NST_NAME, NST_CASE, NST_KVER and one
# variable per declared disk (FLASH=/dev/vda, DISK=/dev/vdb, ...).

log() { echo "[$NST_NAME] $*"; }

# Debian's busybox runs its own applets in preference to PATH (standalone
# shell), so route the names that exist on the tools disk to the real tools
# (util-linux, e2fsprogs, coreutils) with functions.
for _p in /usr/sbin/* /usr/bin/*; do
	_n=${_p##*/}
	case "$_n" in *[!a-zA-Z0-9_]*) continue ;; esac
	if busybox --list | grep -qx "$_n"; then eval "$_n() { $_p \"\$@\"; }"; fi
done
unset _p _n

die() {
	echo "[$NST_NAME] FAIL: $*"
	echo "$*" >/tmp/.nst-fail
	exit 1
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
}
unload_nswap2l() {
	rmmod dm_nswap2l || die "rmmod dm_nswap2l failed (refcount: $(cat /sys/module/dm_nswap2l/refcnt 2>/dev/null))"
	[ ! -d /sys/module/dm_nswap2l ] || die "dm_nswap2l still loaded after rmmod"
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
# 0 <len> nswap2l <policy> <#tiers> [<tier> <cap> <used> <reads> <writes> <discards>]... <zero_reads> <nospace>
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
# sum of a tier field over all tiers
nsw_total() { dmsetup status "$1" | awk -v f="$2" '
	BEGIN { split("capacity used reads writes discards", names, " "); for (i in names) off[names[i]] = i }
	{ s = 0; for (i = 0; i < $5; i++) s += $(6 + i * 6 + off[f]); print s }'; }
# nsw_check_shape name ntiers : word count, target name and numeric fields
nsw_check_shape() {
	_st=$(dmsetup status "$1") || die "dmsetup status $1 failed"
	echo "$_st" | awk -v nt="$2" '
	{
		if ($3 != "nswap2l") { print "target is " $3; exit 1 }
		if ($5 != nt) { print "#tiers is " $5 ", expected " nt; exit 1 }
		if (NF != 7 + 6 * nt) { print NF " words, expected " 7 + 6 * nt; exit 1 }
		for (i = 0; i < nt; i++) for (j = 1; j <= 5; j++) if ($(6 + i * 6 + j) !~ /^[0-9]+$/) { print "field " 6 + i * 6 + j " not numeric"; exit 1 }
		if ($(6 + nt * 6) !~ /^[0-9]+$/ || $(7 + nt * 6) !~ /^[0-9]+$/) { print "counters not numeric"; exit 1 }
	}' >/tmp/.shape || die "bad status shape for $1 ('$_st'): $(cat /tmp/.shape)"
}

# Kernel log
dmesg_mark() { NST_DMESG_MARK=$(dmesg | wc -l); }
dmesg_new() { dmesg | tail -n +$((NST_DMESG_MARK + 1)); }

# meminfo field in kB
meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

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

# nswap2l table helpers
nsw_capacity_pages() { # dev... : sum of floor(sectors/8)
	_s=0
	for _d in "$@"; do _s=$((_s + $(dev_sectors "$_d") / 8)); done
	echo $_s
}
show_status() { log "status $1: $(dmsetup status "$1")"; }
