# nswap2l trace on I/O whose every bio the test knows: 256 sequential
# one-page writes, then 10 one-page reads of known pages (pages 10, 20 and
# 30 three times each, page 200 once).  The summary must count exactly
# those, on the device and on its flash tier, find the one sequential run,
# the 3 pages written once and read many times and the re-read ratio 6/10;
# the replay of the prefetch policies must cover every read page; the
# access map must be a valid PNG of its set size.  --from on the recorded
# file gives the same analysis.  Bad input: no --seconds, no such device,
# no blktrace.
# disks: flash=16M disk=16M
# timeout: 300

load_nswap2l
nswap2l create tr --flash "$FLASH" --disk "$DISK" >/dev/null || die "create"
exits_with 2 "--seconds N" nswap2l trace tr
exits_with 3 "nosuch: no such device-mapper device" nswap2l trace nosuch --seconds 1
mkdir /tmp/no-blktrace && ln -s "$(command -v dmsetup)" /tmp/no-blktrace/
exits_with 5 "blktrace not found \(apt-get install blktrace\)" env PATH=/tmp/no-blktrace /sbin/nswap2l trace tr --seconds 1
exits_with 3 "/tmp/none: No such file" nswap2l trace --from /tmp/none

nswap2l trace tr --seconds 6 --out /tmp/tr >/tmp/trace.out 2>&1 &
tracer=$!
wait_until 20 tr "blktrace running" test -e /sys/kernel/debug/block/dm-0/trace0
sleep 1
dd if=/dev/urandom of=/dev/mapper/tr bs=4k count=256 oflag=direct 2>/dev/null || die "writes"
for page in 10 20 30 10 20 30 10 20 30 200; do
	dd if=/dev/mapper/tr of=/dev/null bs=4k count=1 skip=$page iflag=direct 2>/dev/null || die "read of page $page"
done
wait $tracer || die "nswap2l trace failed: $(cat /tmp/trace.out)"
cat /tmp/trace.out

j=/tmp/tr/summary.json
dm=$(json_get $j 'd["summary"]["device"]')
assert_eq "$dm" "$(dmsetup info -c --noheadings -o major,minor tr | tr -d " " | tr : ,)" "traced device"
assert_eq "$(json_get $j 'd["summary"]["devices"]["'"$dm"'"]["role"]')" device "role of the device"
dev_counts() { json_get $j '[d["summary"]["devices"]["'"$1"'"][k] for k in ("writes", "write_pages", "reads", "read_pages")]'; }
assert_eq "$(dev_counts "$dm")" "[256, 256, 10, 10]" "device writes, pages written, reads, pages read"
flash=$(dev_majmin "$FLASH" | tr : ,)
assert_eq "$(json_get $j 'd["summary"]["devices"]["'"$flash"'"]["role"]')" flash "role of $FLASH"
assert_eq "$(dev_counts "$flash")" "[256, 256, 10, 10]" "flash writes, pages written, reads, pages read"
assert_eq "$(json_get $j '[d["summary"][k] for k in ("pages_written", "pages_read", "written_once_read_many")]')" \
	"[256, 4, 3]" "pages written, pages read, written once read many"
assert_eq "$(json_get $j 'd["summary"]["reread_ratio"]')" 0.6 "re-read ratio"
assert_eq "$(json_get $j '[d["summary"]["sequential"]["write"][k] for k in ("runs", "run_bios", "longest_run_pages")]')" \
	"[1, 256, 256]" "sequential write runs"
assert_eq "$(json_get $j 'sorted(r["policy"] for r in d["replays"])')" "['lrs', 'mrs', 'random', 'rr']" "replayed policies"
assert_eq "$(json_get $j 'set(r["reads"] for r in d["replays"])')" "{10}" "reads seen by the replays"
grep -q "^best policy on this trace: \|no policy" /tmp/trace.out || die "summary has no verdict"
assert_eq "$(png_size /tmp/tr/access-map.png)" 1200x800 "access map size"

nswap2l trace --from /tmp/tr/trace.blkparse --out /tmp/again >/dev/null || die "trace --from"
cmp /tmp/tr/summary.json /tmp/again/summary.json || die "trace --from analysed differently"
assert_eq "$(png_size /tmp/again/access-map.png)" 1200x800 "access map of --from"
nswap2l remove tr >/dev/null || die "remove"
# for a look at them: build/test-logs/42-nswap2l-trace.files/
export_file /tmp/tr/access-map.png
export_file /tmp/tr/summary.txt
