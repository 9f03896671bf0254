#!/bin/bash
# libFuzzer on the parser and the connection state machine, for
# NST_FUZZ_SECONDS (default 30), from the generated seed corpus.  Any crash,
# sanitizer report or failed invariant fails the test.
source "$(dirname "$0")/lib.sh"

FUZZER=$REPO_DIR/tools/nswapd/fuzz_parser
SEEDS=$REPO_DIR/tools/nswapd/fuzz-corpus
[[ -x $FUZZER && -d $SEEDS ]] || fail "fuzz_parser or its corpus missing: run make -C tools fuzz"
seconds=${NST_FUZZ_SECONDS:-30}
mkdir "$WORK/corpus"
# new inputs go to the work corpus; the generated seeds stay as they are
status=0
"$FUZZER" -max_total_time="$seconds" -max_len=32768 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$WORK/" "$WORK/corpus" "$SEEDS" \
	>"$WORK/fuzz.log" 2>&1 || status=$?
if ((status != 0)) || compgen -G "$WORK/crash-*" >/dev/null; then
	grep -E -A 20 'ERROR|==[0-9]+==|SUMMARY|deadly signal' "$WORK/fuzz.log" | head -n 40 >&2
	fail "fuzzer found a problem (exit $status)"
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/fuzz.log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$WORK/fuzz.log")
[[ -n $runs ]] && ((runs > 0)) || fail "fuzzer ran nothing: $(tail -n 3 "$WORK/fuzz.log")"
log "fuzz: $runs inputs in $seconds s ($rate/s), no crash"
echo "ok"
