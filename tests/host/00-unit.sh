#!/bin/bash
# Unit tests of nswapd's parts (SHA-256/HMAC/Poly1305 vectors, session MACs,
# parser, page store, output queue, connection state machine), built by
# tests/host/run.
source "$(dirname "$0")/lib.sh"

"$REPO_DIR/tools/nswapd/unit-test" || fail "unit tests failed"
echo "ok"
