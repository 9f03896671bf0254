# nswap2l trace on I/O whose every bio the test knows: 256 sequential
# one-page writes, then 10 one-page reads of known pages (pages 10, 20 and
# 30 three times each, page 200 once).  The summary must count exactly
# those, on the device and on its flash tier, find the one sequential run,
# the 3 pages written once and read many times and the re-read ratio 6/10;
# the replay of the prefetch policies must cover every read page; the
# access map must be a valid PNG of its set size.  --keep-raw keeps the
# records, and --from on them gives the same analysis.  Bounded space: a
# trace without --keep-raw writes only its summary (--no-picture: the
# picture has a fixed size, and drawing it under TCG takes long), also of
# more bios than their blkparse text would take in its --out (a 5 MiB
# tmpfs); with --keep-raw into a directory that runs short, the recording
# stops, exit status 1, with the summary of what it recorded and room left.
# Bad input: no --seconds, no such device, no blktrace.
# kernels: 6.12
# disks: flash=32M disk=16M
# timeout: 300
# smp: 1

load_nswap2l
nswap2l create tr --flash "$FLASH" --disk "$DISK" >/dev/null || die "create"
exits_with 2 "--seconds N" nswap2l trace tr
exits_with 3 "nosuch: no such device-mapper device" nswap2l trace nosuch --seconds 1
mkdir /tmp/no-blktrace && ln -s "$(command -v dmsetup)" /tmp/no-blktrace/
exits_with 5 "blktrace not found \(apt-get install blktrace\)" env PATH=/tmp/no-blktrace /sbin/nswap2l trace tr --seconds 1
exits_with 3 "/tmp/none: No such file" nswap2l trace --from /tmp/none

nswap2l trace tr --seconds 6 --out /tmp/tr --keep-raw >/tmp/trace.out 2>&1 &
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

assert_eq "$(ls /tmp/tr | tr '\n' ' ')" "access-map.png summary.json summary.txt trace.bin trace.info " \
	"files of a --keep-raw trace"
nswap2l trace --from /tmp/tr/trace.bin --out /tmp/again >/dev/null || die "trace --from"
cmp /tmp/tr/summary.json /tmp/again/summary.json || die "trace --from analysed differently: $(diff /tmp/tr/summary.json /tmp/again/summary.json)"
assert_eq "$(png_size /tmp/again/access-map.png)" 1200x800 "access map of --from"
nswap2l trace --from /tmp/tr --no-picture >/dev/null 2>&1 || die "trace --from DIR"
cmp /tmp/tr/summary.json /tmp/again/summary.json || die "trace --from DIR analysed differently"

# started: the trace is running (blktrace made its debugfs files)
started() {
	wait_until 20 tr "blktrace running" test -e /sys/kernel/debug/block/dm-0/trace0
}
# write_pages N: N one-page direct writes, 32 in flight
write_pages() {
	fio --name=many --filename=/dev/mapper/tr --rw=randwrite --bs=4k --iodepth=32 \
		--ioengine=libaio --direct=1 --size=24M --io_size=$(($1 * 4))k >/tmp/fio.log 2>&1 ||
		die "fio: $(tail -n 5 /tmp/fio.log)"
}

# Without --keep-raw: 25,000 bios, whose blktrace files and blkparse text
# (about 130 and 300 bytes a bio: a line for each of a bio's Q, G, I, P and
# U events) would not fit the 5 MiB --out, and nothing but the summary in
# it.
mkdir /tmp/small && mount -t tmpfs -o size=5M small /tmp/small || die "tmpfs"
nswap2l trace tr --seconds 30 --max-bios 25000 --no-picture --out /tmp/small/t >/tmp/trace.out 2>&1 &
tracer=$!
started
write_pages 15000
wait $tracer || die "nswap2l trace into 5 MiB failed: $(cat /tmp/trace.out)"
# all_bios FILE: the bios of every traced device in summary.json FILE
all_bios() {
	json_get "$1" 'sum(v["writes"] + v["reads"] + v.get("discards", 0) for v in d["summary"]["devices"].values())'
}
bios=$(all_bios /tmp/small/t/summary.json)
[ "$bios" -ge 25000 ] || die "only $bios bios recorded: $(cat /tmp/trace.out)"
json_get /tmp/small/t/summary.json 'd["summary"]["stopped_early"]' | grep -q "^--max-bios 25000 reached" ||
	die "summary does not say why it stopped: $(cat /tmp/trace.out)"
assert_eq "$(ls /tmp/small/t | tr '\n' ' ')" "summary.json summary.txt " "files of a --no-picture trace"
log "$bios bios traced into 5 MiB: $(du -sk /tmp/small/t | cut -f1) KiB written"
umount /tmp/small

# --keep-raw into a directory that runs short: 40 MiB, of which 36 are
# what the trace keeps free (summary and blktrace's buffers), so about 4
# MiB for the records (about 170 bytes a bio: -a queue also records each
# bio's G, I, P and U events): some 25,000 bios.
mount -t tmpfs -o size=40M small /tmp/small || die "tmpfs"
nswap2l trace tr --seconds 60 --keep-raw --no-picture --out /tmp/small/t >/tmp/trace.out 2>&1 &
tracer=$!
started
rc=0
for round in 1 2 3 4 5 6 7 8; do
	kill -0 $tracer 2>/dev/null || break
	write_pages 10000
done
wait $tracer || rc=$?
assert_eq "$rc" 1 "exit status of a trace that ran out of space ($(cat /tmp/trace.out))"
grep -q "ran out of space: the summary covers the [0-9]* bios recorded until then" /tmp/trace.out ||
	die "no message for the space: $(cat /tmp/trace.out)"
json_get /tmp/small/t/summary.json 'd["summary"]["stopped_early"]' | grep -q "ran out of space" ||
	die "summary.json does not say why it stopped"
[ -s /tmp/small/t/summary.txt ] && [ -s /tmp/small/t/trace.bin ] || die "summary or records missing"
free_kb=$(df -k /tmp/small | awk 'NR == 2 {print $4}')
[ "$free_kb" -gt 1024 ] || die "only $free_kb KiB left in --out"
log "stopped with $free_kb KiB free; trace.bin $(du -k /tmp/small/t/trace.bin | cut -f1) KiB of $(all_bios /tmp/small/t/summary.json) bios"
umount /tmp/small
nswap2l remove tr >/dev/null || die "remove"
# for a look at them: build/test-logs/42-nswap2l-trace.files/
export_file /tmp/tr/access-map.png
export_file /tmp/tr/summary.txt
