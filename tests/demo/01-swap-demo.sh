# The demo: a small guest swaps to one nswap2l device over a flash tier and a
# disk tier while a program uses twice the guest's RAM and checks every page
# it gets back.  Shows the table, the status before and after, and where the
# pages went.
# mem: 192M
# disks: flash=64M disk=384M
# timeout: 900

load_nswap2l
PAGES=$(dev_pages "$DISK")
TABLE="0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK"
echo
echo "== dmsetup create nswap --table '$TABLE'"
dm_create nswap "$TABLE" || die "create failed"
echo "== dmsetup table nswap";  dmsetup table nswap
echo "== dmsetup status nswap"; dmsetup status nswap
echo "   (fields: placement #tiers [tier capacity used reads writes discards]... zero_reads nospace_errors)"

mkswap /dev/mapper/nswap >/dev/null || die "mkswap"
swapon --discard /dev/mapper/nswap || die "swapon"
echo "== swapon --discard /dev/mapper/nswap"; cat /proc/swaps

total_mb=$(($(meminfo_kb MemTotal) / 1024))
echo
echo "== memcheck: $((total_mb * 2)) MiB of checksummed pages in a guest with $total_mb MiB of RAM"
memcheck -m $((total_mb * 2)) -p 2 -s 7 || die "memcheck found corrupted memory"

echo
echo "== dmsetup status nswap"; dmsetup status nswap
echo "   flash: $(tier_stat nswap flash used) of $(tier_stat nswap flash capacity) pages used," \
	"$(tier_stat nswap flash writes) writes, $(tier_stat nswap flash reads) reads"
echo "   disk:  $(tier_stat nswap disk used) of $(tier_stat nswap disk capacity) pages used," \
	"$(tier_stat nswap disk writes) writes, $(tier_stat nswap disk reads) reads"
swapoff /dev/mapper/nswap || die "swapoff"
dm_remove nswap || die "remove"
echo "== every page came back intact; device removed"
