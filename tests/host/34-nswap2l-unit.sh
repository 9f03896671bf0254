#!/bin/bash
# The nswap2l command's unit tests (tools/nswap2l/tests, `make -C tools
# check`): the trace parser and analysis, the values it takes, the
# redundancy create chooses for the server count and status's "no
# redundancy" mark, status's JSON in bytes, rows (-o) and Prometheus text
# (parsed by python3-prometheus-client), and nswap2l@.service as
# `systemd-analyze verify` reads it (skipped, and said here, on a machine
# without systemd-analyze).  Debian's python3, which the command runs
# with and apt's modules are for, not whatever python3 PATH finds first.
source "$(dirname "$0")/lib.sh"

cd "$REPO_DIR/tools/nswap2l"
/usr/bin/python3 -m unittest discover -s tests -v >"$WORK/unit.out" 2>&1 ||
	fail "unit tests failed: $(grep -E '^(FAIL|ERROR):' "$WORK/unit.out" | head -n 5)"
grep -E " \.\.\. skipped " "$WORK/unit.out" || true
tail -n 3 "$WORK/unit.out"
echo "ok"
