# The demo: two nswapd memory servers run on the host's loopback; a small
# guest makes one nswap2l device over Network RAM (the two servers), a flash
# tier and a disk tier with `nswap2l create --swap`, and swaps to it while a
# program uses twice the guest's RAM and checks every page it gets back.
# The servers hold 48 MiB each, so swap spills to flash and disk.  Shows the
# status before and after, and `nswap2l trace` draws the first seconds of
# the swap traffic: the picture and the summary land on the host in
# build/test-logs/46-swap-demo.files/.  `make demo` runs this case alone,
# with its output on the terminal; `make test` runs it with the others (on
# 6.1, the kernel `make demo` builds for), so CI sees the demo fail.
# One vCPU, as 42: with two, multi-threaded TCG once hung both for good
# at block_bio_queue's static branch as `nswap2l trace` stopped blktrace
# under swap (cross-modified code); one is faster here too (79 s, not 105-177).
# kernels: 6.1
# smp: 1
# mem: 192M
# servers: 2 max=48M
# disks: flash=64M disk=384M
# timeout: 600

load_nswap2l
servers=$(echo $NST_SERVERS | tr ' ' ',')
create="nswap2l create nswap --netram $servers --key-file $NST_KEY_FILE --flash $FLASH --disk $DISK --prefetch lrs --swap"
echo "== $create"
$create || die "nswap2l create failed"
echo "== dmsetup table nswap"; dmsetup table nswap
echo "== nswap2l status nswap"; nswap2l status nswap

total_mb=$(($(meminfo_kb MemTotal) / 1024))
echo
echo "== memcheck: $((total_mb * 2)) MiB of checksummed pages in a guest with $total_mb MiB of RAM,"
echo "   its first 15 s traced by: nswap2l trace nswap --seconds 15 --out /tmp/trace"
nswap2l trace nswap --seconds 15 --out /tmp/trace >/tmp/trace.out &
tracer=$!
memcheck -m $((total_mb * 2)) -p 1 -s 7 || die "memcheck found corrupted memory"
wait $tracer || die "nswap2l trace failed: $(cat /tmp/trace.out)"

echo
echo "== nswap2l trace: what the swap traffic looked like"; cat /tmp/trace.out
export_file /tmp/trace/access-map.png
export_file /tmp/trace/summary.txt
echo
echo "== server 0 as nswapd --stats sees it"; server_ctl stats 0
echo "== nswap2l status nswap"; nswap2l status nswap
echo "== nswap2l remove nswap"; nswap2l remove nswap || die "remove"
echo "== every page came back intact; device removed"
