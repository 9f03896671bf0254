# The README's cluster path, as far as a guest can follow it (issue 28).
# The donors run nswapd --clients DIR with one key file per client name,
# here web1's only (the harness's "default" is revoked).  The client has
# the module installed (the unit's ExecStartPre: modprobe), web1's key in
# /etc/nswap2l/web1.key and /etc/nswap2l/nswap.conf; nswap2l-generator makes
# its units (as systemctl daemon-reload runs it), and their own commands
# create the device (the service), swap on it with the file's priority and
# discard (the .swap unit), then swap off and remove it.  Without "client =" the
# table names client 'default', which the servers do not know: the create
# fails and says so, in dmesg and in nswap2l's error, and leaves nothing.
# With "client = web1" pages swapped out under a memory cgroup's limit come
# back right, and status shows both servers up.
# The README's commands over the module's logic; a cgroup's swap-out takes
# the block layer's swap path that 05 tests on both kernels, so it runs on
# one (tests/README.md, "One kernel").
# kernels: 6.1
# servers: 2
# timeout: 120

S0=$(netram_server 0)
S1=$(netram_server 1)
# donors: "head -c 32 /dev/urandom > /etc/nswapd/clients/web1", SIGHUP
server_ctl grant web1 || die "grant web1"
server_ctl revoke default || die "revoke default"
# the client: the donors' file for web1 (the harness's key) copied over
cp "$NST_KEY_FILE" /etc/nswap2l/web1.key && chmod 600 /etc/nswap2l/web1.key || die "copy the key"
conf() { # the client line, or nothing
	cat >/etc/nswap2l/nswap.conf <<-EOF
	[device]
	netram = $S0,$S1
	key-file = /etc/nswap2l/web1.key
	$1
	size = 64M
	timeout = 10
	[swap]
	enable = yes
	priority = 100
	EOF
}
# systemctl daemon-reload: the generator makes the units, from the config
# file written below; their commands are run as systemd runs them
GENERATED=/tmp/units
generate() {
	rm -rf $GENERATED
	/opt/nswap2l/lib/systemd/system-generators/nswap2l-generator $GENERATED $GENERATED.early $GENERATED.late ||
		die "nswap2l-generator failed"
}
generated() { # KEY FILE: KEY= of a generated unit
	sed -n "s/^$1=//p" "$GENERATED/$2"
}

log "without client =: the servers do not know client 'default'"
conf ""
generate
# Network RAM only: the swap comes after the network, with multi-user.target
[ -L $GENERATED/multi-user.target.wants/dev-mapper-nswap.swap ] ||
	die "no dev-mapper-nswap.swap wanted by multi-user.target: $(ls -R $GENERATED)"
assert_eq "$(generated Requires dev-mapper-nswap.swap)" nswap2l@nswap.service "the swap unit's service"
private_keyring $(generated ExecStartPre nswap2l@nswap.service) || die "ExecStartPre"
dmesg_mark
exits_with 1 "kernel: .*server [0-9.:]+ does not know client 'default'" private_keyring $(generated ExecStart nswap2l@nswap.service)
log "$(grep "kernel: .*does not know" /tmp/.err)"
grep -q "hint: --client (client = in the config file) names this client as the servers do" /tmp/.err ||
	die "no hint in nswap2l's error: $(cat /tmp/.err)"
dmesg_new | grep -q "server [0-9.:]* does not know client 'default'" ||
	die "no dmesg line for the unknown client: $(dmesg_new)"
assert_eq "$(dm_count)" 0 "devices after the refused create"
if grep -q "nswap2l:" /proc/keys; then die "a key is left after the refused create: $(grep nswap2l: /proc/keys)"; fi

log "with client = web1"
conf "client = web1             # the key's file name on the donors (as in the README)"
generate
private_keyring $(generated ExecStart nswap2l@nswap.service) || die "ExecStart: $(generated ExecStart nswap2l@nswap.service)"
dmsetup table nswap | grep -q " client=web1" || die "no client=web1 in the table: $(dmsetup table nswap)"
# the .swap unit: swapon What= with its Priority= and Options=discard
assert_eq "$(generated Options dev-mapper-nswap.swap)" discard "the swap unit's options"
swapon --discard --priority "$(generated Priority dev-mapper-nswap.swap)" "$(generated What dev-mapper-nswap.swap)" ||
	die "swapon as the .swap unit"
awk '$1 ~ /^\/dev\/(mapper\/nswap|dm-[0-9]+)$/ && $5 == 100 { f = 1 } END { exit !f }' /proc/swaps ||
	die "no swap of priority 100: $(cat /proc/swaps)"
# 16 MiB of checked memory in a cgroup that may keep 8 MiB of it: the rest
# goes to swap, to the servers, and comes back
grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup ||
	die "mount cgroup2"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control || die "memory controller"
mkdir -p /sys/fs/cgroup/web1
# memory.high, not memory.max: over it the kernel reclaims and throttles
# the task, where memory.max kills it when swap-out is slower than the task
# (a loaded host)
echo 8M >/sys/fs/cgroup/web1/memory.high || die "memory.high"
sh -c 'echo $$ >/sys/fs/cgroup/web1/cgroup.procs && exec memcheck -m 16 -p 1 -s 28' ||
	die "memcheck: pages wrong after swap on Network RAM"
show_status nswap
assert_gt "$(tier_stat nswap netram writes)" 1024 "pages swapped out to Network RAM"
assert_gt "$(tier_stat nswap netram reads)" 0 "pages swapped in from Network RAM"
nswap2l status nswap >/tmp/st.txt || die "status"
cat /tmp/st.txt
for s in "$S0" "$S1"; do
	grep -Eq "^  $s +up " /tmp/st.txt || die "status does not show $s up"
done
# stopping: the .swap unit first (it is ordered after the service), then the service
swapoff "$(generated What dev-mapper-nswap.swap)" || die "swapoff as the .swap unit"
private_keyring $(generated ExecStop nswap2l@nswap.service) || die "ExecStop: $(generated ExecStop nswap2l@nswap.service)"
[ "$(wc -l </proc/swaps)" = 1 ] || die "swap left after ExecStop: $(cat /proc/swaps)"
assert_eq "$(dm_count)" 0 "devices after ExecStop"
