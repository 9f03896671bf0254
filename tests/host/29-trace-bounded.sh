#!/bin/bash
# nswap2l trace analyses 2 million bios in under 1.5 GiB of address space:
# blktrace records (what a live trace reads from blktrace, and --keep-raw
# keeps) of 2,000,000 sequential one-page writes, written the way blktrace
# passes on two CPUs' buffers -- each block of 5,000 after the block that
# follows it in time -- with a process-name record (and its payload) now
# and then.  The analysis must count every bio and, once the records are
# in time order, find one sequential run of them all.
source "$(dirname "$0")/lib.sh"

NSWAP2L=$REPO_DIR/tools/nswap2l/nswap2l
BIOS=2000000
python3 - "$BIOS" >"$WORK/trace.bin" <<'PY'
import struct, sys
bios, block = int(sys.argv[1]), 5000
record = struct.Struct("=IIQQIIIIIHH")  # struct blk_io_trace
MAGIC, DEV = 0x65617407, (253 << 20) | 0
QUEUE_WRITE = 1 | (((1 << 1) | (1 << 4)) << 16)     # __BLK_TA_QUEUE, BLK_TC_WRITE | BLK_TC_QUEUE
PROCESS = (1 << 10) << 16                           # __BLK_TN_PROCESS, BLK_TC_NOTIFY
def blk(b):
    out = [record.pack(MAGIC, 0, 10**9, 0, 0, PROCESS, 42, DEV, b % 2, 0, 8) + b"kswapd0\0"]
    for i in range(b * block, min(bios, (b + 1) * block)):
        out.append(record.pack(MAGIC, i, 10**9 + i * 1000, i * 8, 4096, QUEUE_WRITE, 42, DEV, b % 2, 0, 0))
    return b"".join(out)
blocks = -(-bios // block)
for b in range(0, blocks, 2):
    if b + 1 < blocks:
        sys.stdout.buffer.write(blk(b + 1))
    sys.stdout.buffer.write(blk(b))
PY
log "trace.bin: $(($(stat -c %s "$WORK/trace.bin") >> 20)) MiB"

status=0
(ulimit -v $((1536 * 1024)); exec "$NSWAP2L" trace --from "$WORK/trace.bin" --out "$WORK/out") \
	>"$WORK/summary" 2>"$WORK/err" || status=$?
((status == 0)) || fail "trace of $BIOS bios in 1.5 GiB: exit status $status: $(tail -n 5 "$WORK/err")"
json() { json_query "$1" <"$WORK/out/summary.json"; }
assert_eq "$(json 'd["summary"]["devices"]["253,0"]["writes"]')" "$BIOS" "bios counted"
assert_eq "$(json '[d["summary"]["sequential"]["write"][k] for k in ("runs", "longest_run_pages")]')" \
	"[1, $BIOS]" "sequential runs once in time order"
assert_eq "$(json 'd["summary"]["pages_written"]')" "$BIOS" "pages written"
log "analysed $BIOS bios in 1.5 GiB of address space"
echo "ok"
