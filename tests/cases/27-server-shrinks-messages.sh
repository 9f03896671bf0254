# A server whose connection is cut in the middle of a 1 MiB GET comes back
# taking one page per message (tests/lib/misbehaving-server
# shrink-on-reconnect): the multi-page reads it had in flight are now longer
# than it takes.  They are read again in pieces it takes, every page holds
# what was written, and the server is not charged with errors for them.
# Fails on a module that ends those reads with I/O errors, or that counts
# them as the server's.
# The module's own logic, over interfaces that the kernel-facing cases test
# on both kernels, so it runs on one (tests/README.md, "One kernel").
# kernels: 6.1
# mem: 256M
# servers: 1 max=64M
# disks: flash=64M
# timeout: 300

load_nswap2l
netram_load_key >/dev/null
KEY=$(netram_table_arg | cut -d' ' -f2)
DEV=/dev/mapper/shrink
MB=8
server_ctl misbehave 0 shrink-on-reconnect >/dev/null || die "server 0 with shrink-on-reconnect"
dm_create shrink "0 $((MB * 2048)) nswap2l 3 netram=$(netram_server 0) $KEY flash=$FLASH" ||
	die "create failed"
head -c $((MB << 20)) /dev/urandom >/tmp/data
dd if=/tmp/data of=$DEV bs=1M oflag=direct status=none || die "dd write"
assert_eq "$(tier_stat shrink netram used)" $((MB * 256)) "pages on the server"
requests=$(sysfs_stat shrink servers "$(netram_server 0)" requests)
assert_le "$((requests * 16))" $((MB * 256)) "requests for 16 pages at most one (multi-page PUTs)"

dd if=$DEV of=/tmp/back bs=1M iflag=direct status=none || die "1 MiB reads across the reconnect failed"
cmp /tmp/data /tmp/back || die "reads across the reconnect return wrong data"
show_status shrink
assert_gt "$(netram_stat shrink 0 reconnects)" 0 "connections cut by the server"
# the reads were too long for the server it came back as: no fault of it
assert_eq "$(netram_stat shrink 0 errors)" 0 "server errors"
# after the reconnect every page took its own GET
requests=$(($(sysfs_stat shrink servers "$(netram_server 0)" requests) - requests))
log "reads: $requests requests for $((MB * 256)) pages"
assert_gt "$requests" $((MB * 128)) "requests for the reads (one page each after the reconnect)"
dm_remove shrink || die "remove"
server_ctl misbehave 0 none >/dev/null || die "nswapd back"
log "ok"
