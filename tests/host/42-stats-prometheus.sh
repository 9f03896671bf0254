#!/bin/bash
# nswapd --stats --prometheus: the status report as Prometheus text for
# node_exporter's textfile collector, which prometheus_client's own parser
# reads: pages held in all and per namespace (client and namespace as
# labels), capacity, free room, in bytes; counters in _total, each metric's
# HELP and TYPE once.  --json and --prometheus exclude each other.
source "$(dirname "$0")/lib.sh"

make_key k
start_server s --key-file "$WORK/k.key" --max 64M
probe_ok s --key-file "$WORK/k.key" --client-id a1 put 0-99 >/dev/null
probe_ok s --key-file "$WORK/k.key" --client-id b2 put 0-9 >/dev/null
stats s --prometheus >"$WORK/metrics.prom" || fail "nswapd --stats --prometheus"

cat >"$WORK/check.py" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families

text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}
def value(name, **labels):
    for f in fams.values():
        for s in f.samples:
            if s.name == name and s.labels == labels:
                return s.value
    sys.exit(f"no sample {name} {labels}")
held = value("nswapd_held_bytes")
per_ns = sorted(s.value for s in fams["nswapd_client_held_bytes"].samples)
assert held == 110 * 4096, held
assert per_ns == [10 * 4096, 100 * 4096], per_ns
assert value("nswapd_max_bytes") == 64 << 20
assert value("nswapd_capacity_bytes") <= 64 << 20
assert fams["nswapd_put_bytes"].type == "counter"
assert value("nswapd_put_bytes_total") == 110 * 4096
assert all(s.labels["client"] == "default" for s in fams["nswapd_client_held_bytes"].samples)
# no sample of a value nswapd does not have (not leaving)
assert "nswapd_leave_left_bytes" not in fams
for line in text.splitlines():
    if line.startswith("# TYPE "):
        name = line.split()[2]
        assert text.count(f"# TYPE {name} ") == 1, name
        assert (line.split()[3] == "counter") == name.endswith("_total"), line
print(len(fams), "metrics")
PY
/usr/bin/python3 "$WORK/check.py" "$WORK/metrics.prom" >"$WORK/check.out" 2>&1 ||
	fail "Prometheus text: $(tail -n 3 "$WORK/check.out")"
log "$(cat "$WORK/check.out")"
status=0
stats s --json --prometheus >/dev/null 2>"$WORK/err" || status=$?
((status == 2)) || fail "--json --prometheus: exit status $status, expected 2"
grep -q "exclude each other" "$WORK/err" || fail "--json --prometheus: $(cat "$WORK/err")"
echo "ok"
