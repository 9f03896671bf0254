#!/bin/bash
# Page keys chosen to collide: keys that the old, unkeyed page table hash
# (the splitmix64 finaliser) sends to one slot at every table size up to
# 4096 slots.  Under that hash, storing N of them made every insertion walk
# the whole run (N slots; 10x CPU, 20-50x latency for other clients).  With
# SipHash under a random key they spread like any keys: the longest probe
# (in the status report) stays as short as for sequential keys.
source "$(dirname "$0")/lib.sh"

N=2048
BOUND=512	# random homes: 40 to 80 slots for 2048 keys; the old hash: 2048

# colliding_keys N BITS: N keys below the key limit whose old hash has BITS
# low zero bits
colliding_keys() {
	python3 - "$1" "$2" <<'PY'
import sys
n, bits = int(sys.argv[1]), int(sys.argv[2])
M = (1 << 64) - 1
def old_hash(k):
	k ^= k >> 30; k = (k * 0xbf58476d1ce4e5b9) & M
	k ^= k >> 27; k = (k * 0x94d049bb133111eb) & M
	return k ^ (k >> 31)
found, k = [], 0
while len(found) < n:
	if old_hash(k) & ((1 << bits) - 1) == 0:
		found.append(k)
	k += 1
print(" ".join(map(str, found)))
PY
}

make_key k
echo "MemAvailable: 67108864 kB" >"$WORK/meminfo"
start_server s --key-file "$WORK/k.key" --memavailable-file "$WORK/meminfo"

read -r -a keys <<<"$(colliding_keys $N 12)"
assert_eq "${#keys[@]}" $N "colliding keys"
((keys[N - 1] < 1 << KEY_LIMIT_SHIFT)) || fail "a key over the key limit"

start=$(date +%s%N)
probe_ok s --key-file "$WORK/k.key" --client-id 5e put 0-$((N - 1)) >/dev/null
sequential_ms=$((($(date +%s%N) - start) / 1000000))
sequential=$(stat_field s longest_probe)
((sequential < BOUND)) || fail "sequential keys: longest probe $sequential"

start=$(date +%s%N)
probe_ok s --key-file "$WORK/k.key" --client-id c0 put "${keys[@]}" >/dev/null
colliding_ms=$((($(date +%s%N) - start) / 1000000))
colliding=$(stat_field s longest_probe)
log "longest probe: $sequential slots for $N sequential keys ($sequential_ms ms)," \
	"$colliding after $N keys colliding under the old hash ($colliding_ms ms)"
((colliding < BOUND)) || fail "keys colliding under the old hash: longest probe $colliding slots"

probe_ok s --key-file "$WORK/k.key" --client-id c0 get "${keys[@]}" >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id 5e get 0-$((N - 1)) >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id c0 free "${keys[@]}" >/dev/null
assert_eq "$(stat_field s held_pages)" $N "pages held after freeing the colliding keys"
stop_server s
echo "ok"
