# Network RAM harness smoke test (does not need dm-nswap2l): eth0 on the
# restricted user network, two nswapd on the host reached through guestfwd
# (HELLO + key proof with netram-hello), the server-control channel (alive,
# stats, stop/cont, kill/start on the same port, strict command checking),
# the shared key in the kernel keyring and the table words for it.
# The harness, not the module: it runs on one kernel (tests/README.md,
# "One kernel").
# kernels: 6.12
# mem: 256M
# timeout: 240
# servers: 2 max=64M
# needs-module: no

# ---- network and environment
[ -e /sys/class/net/eth0 ] || die "no eth0"
assert_eq "$(cat /sys/class/net/eth0/operstate)" up "eth0 operstate"
ip -4 addr show dev eth0 | grep -q 'inet 169.254.100.15/24' || die "eth0 has no 169.254.100.15/24: $(ip addr show dev eth0)"
assert_eq "$NST_SERVERS" "169.254.100.100:7000 169.254.100.101:7000" "NST_SERVERS"
assert_eq "$NST_CTL" "169.254.100.99:7000" "NST_CTL"
assert_eq "$(wc -c <"$NST_KEY_FILE")" 32 "key file size"
assert_eq "$(netram_server 1)" 169.254.100.101:7000 "netram_server 1"

# ---- every server answers on its forwarded port, with the shared key
for s in $NST_SERVERS; do
	echo | timeout 20 nc -w 10 "${s%:*}" "${s#*:}" >/dev/null || die "no TCP connection to $s"
	out=$(netram-hello "$s" "$NST_KEY_FILE") || die "netram-hello $s failed: $out"
	log "$s: $out"
	case "$out" in *auth=ok*) ;; *) die "no key proof from $s: '$out'" ;; esac
done
# a different key is refused, and the server stays up
head -c 32 /dev/urandom >/tmp/wrong.key
rc=0
netram-hello "$(netram_server 0)" /tmp/wrong.key || rc=$?
assert_eq "$rc" 3 "netram-hello exit status with a wrong key"

# ---- control channel
assert_eq "$(server_ctl alive 0)" yes "alive 0"
assert_eq "$(server_ctl alive 1)" yes "alive 1"
st=$(server_ctl stats 0) || die "stats 0 failed"
log "stats 0: $(echo "$st" | head -c 300)"
case "$st" in '{'*) ;; *) die "stats 0 is not JSON: '$st'" ;; esac
server_ctl set-memavailable 0 64M || die "set-memavailable 0 64M"
server_ctl set-memavailable 1 1G || die "set-memavailable 1 1G"
# the command grammar is strict
expect_fail "index out of range" server_ctl alive 2
expect_fail "unknown command" server_ctl reboot 0
expect_fail "shell syntax" server_ctl 'alive 0; kill 1'
expect_fail "missing index" server_ctl kill
expect_fail "bad size" server_ctl set-memavailable 0 12X
expect_fail "start of a running server" server_ctl start 0
assert_eq "$(server_ctl alive 1)" yes "alive 1 after the rejected commands"

# stop/cont: a stopped server is alive but does not answer
server_ctl stop 1 || die "stop 1"
assert_eq "$(server_ctl alive 1)" yes "alive 1 while stopped"
expect_fail "HELLO to a stopped server" netram-hello -t 3 "$(netram_server 1)"
server_ctl cont 1 || die "cont 1"
netram-hello "$(netram_server 1)" "$NST_KEY_FILE" >/dev/null || die "server 1 does not answer after cont"

# kill/start: gone, then back on the same port with the same key
server_ctl kill 1 || die "kill 1"
assert_eq "$(server_ctl alive 1)" no "alive 1 after kill"
expect_fail "HELLO to a killed server" netram-hello -t 5 "$(netram_server 1)"
# nothing but the server's bytes reaches the guest (no forwarder chatter)
got=$(echo | timeout 20 nc "169.254.100.101" 7000 | wc -c)
assert_eq "$got" 0 "bytes received from a killed server's port"
expect_fail "cont of a killed server" server_ctl cont 1
server_ctl start 1 || die "start 1"
assert_eq "$(server_ctl alive 1)" yes "alive 1 after start"
out=$(netram-hello "$(netram_server 1)" "$NST_KEY_FILE") || die "restarted server 1: $out"
case "$out" in *auth=ok*) ;; *) die "restarted server 1 does not prove the key: '$out'" ;; esac
assert_eq "$(server_ctl alive 0)" yes "alive 0 at the end"

# ---- the key in the kernel keyring, and the table words
serial=$(netram_load_key) || die "netram_load_key"
_num "$serial" "key serial"
log "key serial $serial"
grep -q " logon .*nswap2l:test" /proc/keys || die "nswap2l:test not in /proc/keys: $(cat /proc/keys)"
# what a target's request_key() from dmsetup's context finds
assert_eq "$(addkey -r logon nswap2l:test)" "$serial" "request_key of nswap2l:test"
expect_fail "request_key of a key never added" addkey -r logon nswap2l:absent
serial2=$(netram_load_key nswap2l:other) || die "netram_load_key nswap2l:other"
assert_ne "$serial2" "$serial" "serial of a second key"
expect_fail "logon key without a prefix" addkey logon noprefix "$NST_KEY_FILE" @u
assert_eq "$(netram_table_arg)" "netram=169.254.100.100:7000,169.254.100.101:7000 key=:32:logon:nswap2l:test" "netram_table_arg"
assert_eq "$(netram_table_arg nswap2l:other)" "netram=169.254.100.100:7000,169.254.100.101:7000 key=:32:logon:nswap2l:other" "netram_table_arg DESC"
log "netram harness ok"
