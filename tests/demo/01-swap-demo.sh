# The demo: two nswapd memory servers run on the host's loopback; a small
# guest swaps to one nswap2l device over Network RAM (the two servers), a
# flash tier and a disk tier while a program uses twice the guest's RAM
# and checks every page it gets back.  The servers hold 48 MiB each, so swap
# spills to flash and disk.  Shows the table, the status before and after,
# and where the pages went.
# mem: 192M
# servers: 2 max=48M
# disks: flash=64M disk=384M
# timeout: 1200

load_nswap2l
serial=$(netram_load_key) || die "cannot load the key"
echo "== key for the servers: logon key nswap2l:test (serial $serial) in the user keyring"
PAGES=$(dev_pages "$DISK")
TABLE="0 $((PAGES * 8)) nswap2l 4 $(netram_table_arg) flash=$FLASH disk=$DISK"
echo
echo "== dmsetup create nswap --table '$TABLE'"
dm_create nswap "$TABLE" || die "create failed"
echo "== dmsetup table nswap";  dmsetup table nswap
echo "== dmsetup status nswap"; dmsetup status nswap
echo "== /sys/kernel/nswap2l/nswap/servers"; cat /sys/kernel/nswap2l/nswap/servers

mkswap /dev/mapper/nswap >/dev/null || die "mkswap"
swapon --discard /dev/mapper/nswap || die "swapon"
echo "== swapon --discard /dev/mapper/nswap"; cat /proc/swaps

total_mb=$(($(meminfo_kb MemTotal) / 1024))
echo
echo "== memcheck: $((total_mb * 2)) MiB of checksummed pages in a guest with $total_mb MiB of RAM"
memcheck -m $((total_mb * 2)) -p 1 -s 7 || die "memcheck found corrupted memory"

echo
echo "== dmsetup status nswap"; dmsetup status nswap
echo "== /sys/kernel/nswap2l/nswap/tiers"; cat /sys/kernel/nswap2l/nswap/tiers
echo "== /sys/kernel/nswap2l/nswap/servers"; cat /sys/kernel/nswap2l/nswap/servers
for t in netram flash disk; do
	printf '   %-6s %6s of %6s pages used, %6s writes, %6s reads\n' $t \
		"$(tier_stat nswap $t used)" "$(tier_stat nswap $t capacity)" \
		"$(tier_stat nswap $t writes)" "$(tier_stat nswap $t reads)"
done
echo "== server 0 as nswapd --stats sees it"; server_ctl stats 0
swapoff /dev/mapper/nswap || die "swapoff"
dm_remove nswap || die "remove"
echo "== every page came back intact; device removed"
