# The nswap2l command against live devices.  Bad input first: every
# subcommand with a wrong device, size, server or policy, and without root,
# says what is wrong, exits with its status and creates or changes nothing.
# Then a device from options: --print-table, create, status (text,
# --json in bytes, -o rows and --prometheus, checked against dmsetup and
# the data written), servers add (not saved: no config file) and remove
# (the pages move, the data stays), prefetch set and show, profile with its
# plot, remove.  Then swap from a config file, through the systemd unit's
# own ExecStart and ExecStop lines, run in a session keyring of their own
# as systemd runs them: created, swapped on with the priority of the file,
# a prefetch change and a resize (a reload) saved back into the file, its
# comments kept; swapped off and removed.  (Settings that are wrong
# on any machine are refused in host test 22; here, what needs a system.)
# The command is user space over the status, sysfs and messages that the
# other cases test on every kernel, so it runs on one.
# kernels: 6.12
# servers: 2
# disks: flash=32M disk=64M
# timeout: 300

load_nswap2l
S0=$(netram_server 0)
S1=$(netram_server 1)
KEY=$NST_KEY_FILE
no_device_left() { # what
	assert_eq "$(dm_count)" 0 "nswap2l devices after $1"
	if grep -q "nswap2l:" /proc/keys; then die "a key is left in the keyring after $1: $(grep nswap2l: /proc/keys)"; fi
}

log "bad input"
exits_with 2 "--prefetch 'bogus': expected one of none, rr, random, lrs, mrs, auto" \
	nswap2l create n --netram "$S0" --key-file "$KEY" --flash "$FLASH" --prefetch bogus
exits_with 2 "--size '0': expected a size of more than 0" nswap2l create n --flash "$FLASH" --size 0
exits_with 2 "larger than the tiers" nswap2l create n --flash "$FLASH" --size 1G
exits_with 2 "--flash /tmp: not a block device" nswap2l create n --flash /tmp
exits_with 3 "/dev/nonexistent: No such file" nswap2l create n --disk /dev/nonexistent
# one device under two names: refused before anything is loaded
ln -s "$FLASH" /tmp/flash-link
exits_with 2 "--disk /tmp/flash-link is the device --flash names" \
	nswap2l create n --netram "$S0" --key-file "$KEY" --flash "$FLASH" --disk /tmp/flash-link
exits_with 2 "needs --key-file" nswap2l create n --netram "$S0" --flash "$FLASH"
exits_with 4 "create needs root" as_nobody nswap2l create n --flash "$FLASH"
# the kernel refuses (the port has no server, and no flash or disk could
# take the pages: degraded start needs another home): its own words come through
exits_with 1 "kernel: .*169.254.100.100:7999" \
	nswap2l create n --netram 169.254.100.100:7999 --key-file "$KEY" --size 4M --timeout 2
no_device_left "refused creates"
for cmd in status remove "servers" "prefetch" "profile"; do
	exits_with 3 "nosuch: no such device-mapper device" nswap2l $cmd nosuch
done
dmsetup create --noudevsync lin --table "0 8 linear $DISK 0" || die "dmsetup create lin"
exits_with 3 "lin: not an nswap2l device \(its target is linear\)" nswap2l status lin
exits_with 3 "lin: not an nswap2l device" nswap2l remove lin
dm_exists lin || die "nswap2l remove removed a linear device"
dmsetup remove --noudevsync lin

log "create from options"
# prefetching set up but moving nothing (written:0) until the test says so
opts="--netram $S0 --key-file $KEY --flash $FLASH --disk $DISK --timeout 20 --prefetch lrs --amount written:0 --interval 100"
table=$(nswap2l create n $opts --print-table) || die "--print-table failed"
want="0 $(( ($(dev_sectors "$FLASH") + $(dev_sectors "$DISK")) / 8 * 8)) nswap2l 6 netram=$S0 key=:32:logon:nswap2l:n timeout=20 flash=$FLASH disk=$DISK prefetch=lrs,amount=written:0,interval=100"
assert_eq "$table" "$want" "--print-table"
no_device_left "--print-table"
nswap2l create n $opts >/tmp/create.out || die "create failed"
log "$(cat /tmp/create.out)"
[ -b /dev/mapper/n ] || die "no /dev/mapper/n after create"
live=$(dmsetup table n)
for word in "netram=$S0" key=:32:logon:nswap2l:n "flash=$(dev_majmin "$FLASH")" \
	timeout=20 prefetch=lrs,when=pays:25,amount=written:0:4096,interval=100; do
	case " $live " in *" $word "*) ;; *) die "live table '$live' has no $word" ;; esac
done
exits_with 1 "n: a device-mapper device of that name exists" nswap2l create n --flash "$FLASH"
exits_with 1 "kernel: .*server 169.254.100.100:7999 refused the connection" nswap2l servers n add 169.254.100.100:7999

# 1024 pages of a known pattern: all on the one server
prom_written() { # Network RAM's written bytes, from --prometheus
	nswap2l status n --prometheus | sed -n 's/^nswap2l_tier_written_bytes_total{device="n",tier="netram"} //p'
}
written0=$(prom_written)
dd if=/dev/urandom of=/tmp/data bs=4k count=1024 2>/dev/null
dd if=/tmp/data of=/dev/mapper/n bs=4k oflag=direct 2>/dev/null || die "write"
assert_ge "$(($(prom_written) - written0))" 4194304 "written bytes counted by --prometheus"
sum=$(sha256sum </tmp/data)
nswap2l status n --json >/tmp/st.json || die "status --json"
assert_eq "$(json_get /tmp/st.json 'd[0]["tiers"][0]["tier"], d[0]["tiers"][0]["used_bytes"]')" "('netram', 4194304)" "netram used (json, bytes)"
assert_eq "$(json_get /tmp/st.json 'd[0]["servers"][0]["held_bytes"]')" 4194304 "server held (json, bytes)"
assert_eq "$(json_get /tmp/st.json 'd[0]["size_bytes"]')" "$(($(dev_sectors /dev/mapper/n) * 512))" "size (json, bytes)"
assert_eq "$(json_get /tmp/st.json 'd[0]["swap"]')" None "swap (json)"
nswap2l status n >/tmp/st.txt || die "status"
cat /tmp/st.txt
grep -Eq "^  netram +4\.0 MiB " /tmp/st.txt || die "status does not show 4.0 MiB used on netram"
grep -Eq "^  $S0 +up +4\.0 MiB " /tmp/st.txt || die "status does not show the server up holding 4.0 MiB"
# one row per device, and Prometheus text
assert_eq "$(nswap2l status n -o name,netram_used,servers --noheadings | tr -s ' ')" "n 4.0 MiB 1/1" "status -o"
nswap2l status n --prometheus >/tmp/st.prom || die "status --prometheus"
grep -qx 'nswap2l_tier_used_bytes{device="n",tier="netram"} 4194304' /tmp/st.prom ||
	die "status --prometheus: $(grep tier_used /tmp/st.prom)"
grep -qx "nswap2l_server_up{device=\"n\",server=\"$S0\"} 1" /tmp/st.prom ||
	die "status --prometheus: $(grep server_up /tmp/st.prom)"
nswap2l status >/tmp/all.txt || die "status of all"
grep -q "^n: " /tmp/all.txt || die "status without NAME does not list n"
exits_with 4 "status needs root" as_nobody nswap2l status
exits_with 4 "needs root" as_nobody nswap2l status n
# --watch before the NAME: refreshes of n's status until stopped
timeout -s INT 5 nswap2l status --watch 1 n >/tmp/watch.txt 2>&1 || true   # stopped by SIGINT
assert_gt "$(grep -c "^n: " /tmp/watch.txt)" 1 "refreshes of status --watch 1 n in 5 s"
if grep -q Traceback /tmp/watch.txt; then die "status --watch: $(cat /tmp/watch.txt)"; fi

log "servers add and remove"
nswap2l servers n add "$S1" 2>/tmp/add.err || die "servers add"
grep -q "not saved: n was not created from a config file" /tmp/add.err ||
	die "servers add on a device made from options: $(cat /tmp/add.err)"
wait_until 30 n "second server up" sh -c "nswap2l servers n | grep -q '^$S1 up'"
exits_with 2 "expected IPv4-ADDRESS:PORT" nswap2l servers n remove nonsense
exits_with 2 "argument action: invalid choice" nswap2l servers n drop "$S0"
nswap2l servers n remove "$S0" || die "servers remove"
wait_until 60 n "first server drained" sh -c "nswap2l servers n | grep -q '^$S0 removed'"
nswap2l status n --json >/tmp/st.json
assert_eq "$(json_get /tmp/st.json '[s["held_bytes"] for s in d[0]["servers"]]')" "[0, 4194304]" "held after the drain"
assert_eq "$(dd if=/dev/mapper/n bs=4k count=1024 iflag=direct 2>/dev/null | sha256sum)" "$sum" "data after the drain"

log "prefetch"
nswap2l prefetch n >/tmp/pf.txt || die "prefetch show"
grep -q "^policy=lrs when=pays:25 amount=written:0:4096 interval_ms=100$" /tmp/pf.txt || die "prefetch show: $(head -n 1 /tmp/pf.txt)"
exits_with 2 "POLICY 'bogus'" nswap2l prefetch n bogus
exits_with 2 "--amount 'lots'" nswap2l prefetch n rr --amount lots
exits_with 4 "prefetch needs root" as_nobody nswap2l prefetch n rr
# a value only the kernel checked once: the policy changed, then the amount failed
exits_with 2 "--amount 'held:200'" nswap2l prefetch n rr --amount held:200
assert_eq "$(pf_config n)" "lrs pays:25 written:0:4096 100" "prefetch after refused changes"
nswap2l prefetch n rr --when always --amount held:100 --interval 50 >/dev/null || die "prefetch set"
assert_eq "$(pf_config n)" "rr always held:100:4096 50" "prefetch after the change"
wait_until 30 n "pages prefetched" pf_stat_ge n prefetched 1024
nswap2l prefetch n --json >/tmp/pf.json
assert_eq "$(json_get /tmp/pf.json 'd["stats"]["prefetched"] >= 1024')" True "prefetched (json)"
nswap2l prefetch n none >/dev/null
assert_eq "$(dd if=/dev/mapper/n bs=4k count=1024 iflag=direct 2>/dev/null | sha256sum)" "$sum" "data read from flash"

log "profile"
nswap2l profile n --reset >/dev/null || die "profile --reset"
dd if=/dev/mapper/n of=/dev/null bs=4k count=1024 iflag=direct 2>/dev/null
nswap2l profile n --plot /tmp/profile.png >/tmp/prof.txt || die "profile --plot"
grep -q "^  read: average in flight when busy 1" /tmp/prof.txt || die "profile: $(cat /tmp/prof.txt)"
grep -Eq "^ +1 #+ +[0-9.]+ %" /tmp/prof.txt || die "profile has no bar at 1 in flight"
assert_eq "$(png_size /tmp/profile.png)" 1200x600 "profile plot size"

log "remove"
nswap2l remove n || die "remove"
no_device_left "remove"

log "swap from a config file, by the systemd unit's commands"
cat >/etc/nswap2l/sw.conf <<EOF
# a test device
[device]
netram = $S0,$S1
key-file = $KEY
flash = $FLASH
disk = $DISK
timeout = 20

[prefetch]
policy = mrs

[swap]
enable = yes
priority = 7
EOF
for cmd in "$(unit_command ExecStartPre sw)" "$(unit_command ExecStart sw)"; do
	log "unit: $cmd"
	private_keyring $cmd || die "unit command '$cmd' failed"
done
awk '$1 ~ /^\/dev\/(mapper\/sw|dm-[0-9]+)$/ && $5 == 7 { f = 1 } END { exit !f }' /proc/swaps ||
	die "no swap of priority 7: $(cat /proc/swaps)"
nswap2l status sw >/tmp/sw.txt
grep -q "^sw: .*, swap, priority 7, " /tmp/sw.txt || die "status of swap: $(head -n 1 /tmp/sw.txt)"
dmsetup table sw | grep -q "prefetch=mrs" || die "config prefetch not in the table: $(dmsetup table sw)"
# live changes go back to the config file; resize grows through a reload
nswap2l prefetch sw lrs --interval 200 >/dev/null 2>/tmp/pf.err || die "prefetch sw lrs: $(cat /tmp/pf.err)"
grep -q "saved in /etc/nswap2l/sw.conf" /tmp/pf.err || die "prefetch did not save: $(cat /tmp/pf.err)"
assert_eq "$(sed -n 's/^policy = //p; s/^interval = //p' /etc/nswap2l/sw.conf | xargs)" "lrs 200" "saved prefetch"
grep -q "^# a test device$" /etc/nswap2l/sw.conf || die "the config's comment is gone: $(cat /etc/nswap2l/sw.conf)"
old_sectors=$(dev_sectors /dev/mapper/sw)
new_mib=$((old_sectors / 2048 + 4))
exits_with 2 "does not shrink" nswap2l resize sw $((old_sectors / 2048 - 4))M
nswap2l resize sw ${new_mib}M >/tmp/resize.out 2>/tmp/resize.err || die "resize: $(cat /tmp/resize.err)"
assert_eq "$(dev_sectors /dev/mapper/sw)" $((new_mib * 2048)) "sectors after resize"
grep -q "keeps its old size until swapoff, mkswap and swapon" /tmp/resize.err || die "resize of swap: $(cat /tmp/resize.err)"
assert_eq "$(sed -n 's/^size = //p' /etc/nswap2l/sw.conf)" "${new_mib}M" "saved size"
# bad config files are refused before anything is done
printf '[device]\nflash = %s\nsise = 1G\n' "$FLASH" >/etc/nswap2l/bad.conf
exits_with 2 "unknown key 'sise' in \[device\]" nswap2l create --config /etc/nswap2l/bad.conf bad
exits_with 3 "config /etc/nswap2l/none.conf: No such file" nswap2l create --config /etc/nswap2l/none.conf none
cmd=$(unit_command ExecStop sw)
log "unit: $cmd"
private_keyring $cmd || die "unit command '$cmd' failed"
[ "$(wc -l </proc/swaps)" = 1 ] || die "swap left after ExecStop: $(cat /proc/swaps)"
no_device_left "ExecStop"
