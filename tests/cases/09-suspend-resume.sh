# suspend/resume under fio with verify; removal while in use (busy, deferred,
# force) must behave and not oops.
# mem: 256M
# disks: flash=16M disk=64M
# timeout: 600

load_nswap2l
PAGES=$(dev_pages "$DISK")
TABLE="0 $((PAGES * 8)) nswap2l 2 flash=$FLASH disk=$DISK"
dm_create nsw "$TABLE" || die "create failed"
DEV=/dev/mapper/nsw

fio --eta=never --name=sr --filename=$DEV --ioengine=libaio --iodepth=16 --direct=1 --size=100% --rw=randwrite \
	--bs=4k --verify=crc32c --do_verify=1 --verify_fatal=1 --output=/tmp/fio-sr.log &
FIO=$!
cycles=0
sleep 2
while kill -0 $FIO 2>/dev/null && [ $cycles -lt 8 ]; do
	dmsetup suspend nsw || die "suspend #$cycles failed"
	dmsetup info nsw | grep -q SUSPENDED || die "device not SUSPENDED after suspend"
	sleep 0.5
	dmsetup resume nsw || die "resume #$cycles failed"
	cycles=$((cycles + 1))
	sleep 1
done
rc=0
wait $FIO || rc=$?
log "suspend/resume cycles under fio: $cycles"
if [ $rc -ne 0 ]; then
	tail -n 20 /tmp/fio-sr.log
	die "fio verify failed across suspend/resume (status $rc)"
fi
assert_ge "$cycles" 3 "suspend/resume cycles done while fio ran"
grep -E 'WRITE:|READ:' /tmp/fio-sr.log
# noflush suspend too
dmsetup suspend --noflush nsw || die "suspend --noflush"
dmsetup resume nsw || die "resume after noflush"
# table reload with the same table
dmsetup reload nsw --table "$TABLE" || die "reload"
dmsetup resume nsw || die "resume after reload"
show_status nsw

# fio has the device open and its I/O has reached the device
busy_open() {
	[ "$(dmsetup info -c --noheadings -o open nsw | tr -d ' ')" -gt 0 ] &&
		[ "$(nsw_total nsw writes)" -gt "$W0" ]
}
busy_fio() { # runs 6 s of random I/O, no verify; returns once that I/O flows
	W0=$(nsw_total nsw writes)
	fio --eta=never --name=busy --filename=$DEV --ioengine=libaio --iodepth=8 --direct=1 --rw=randrw --bs=4k \
		--time_based --runtime=6 --output=/tmp/fio-busy.log &
	FIO=$!
	wait_until 30 nsw "fio's I/O on the device" busy_open
}

# 1. plain remove while open: must fail (busy), device keeps working
busy_fio
if dm_remove nsw 2>/tmp/rm.err; then die "remove succeeded while fio had the device open"; fi
cat /tmp/rm.err
dm_exists nsw || die "device gone after a failed remove"
rc=0
wait $FIO || rc=$?
[ $rc -eq 0 ] || { tail /tmp/fio-busy.log; die "fio failed after refused remove"; }
dm_remove nsw || die "remove after fio ended failed"
dm_exists nsw && die "device still there after remove"

# 2. deferred remove while open: device disappears when closed
dm_create nsw "$TABLE" || die "re-create failed"
busy_fio
dm_remove nsw --deferred || die "remove --deferred failed"
dmsetup info nsw | grep -i deferred || log "(no DEFERRED REMOVE line in dmsetup info)"
wait $FIO || log "fio exit status $? during deferred remove"
i=0
while dm_exists nsw && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
dm_exists nsw && die "deferred remove did not remove the device after close"

# 3. forced remove while open: the table is replaced by an error target; no oops
dm_create nsw "$TABLE" || die "re-create failed"
busy_fio
dm_remove nsw --force || log "remove --force returned failure while open (allowed)"
wait $FIO || log "fio exit status $? after remove --force (I/O errors expected)"
if dm_exists nsw; then dm_remove nsw || die "final remove after --force failed"; fi
assert_eq "$(dm_count)" 0 "devices left"
unload_nswap2l
log "ok"
