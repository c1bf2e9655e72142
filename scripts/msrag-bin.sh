#!/usr/bin/env bash
# Prints the path of an msrag command for the scripts that fetch through it
# (scripts/fetch-model.sh, scripts/fetch-data.sh): $MSRAG_BIN when set, else the
# repository's bin/msrag, built first by make build (without its setup) when it is
# missing or older than the sources. make build links FAISS as make setup installed it
# (FAISS=wheel by default, FAISS=debian, GPU=1: the same variables as make's).
set -euo pipefail
if [[ -n ${MSRAG_BIN:-} ]]; then
  echo "$MSRAG_BIN"
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
newer() { find . \( -path ./out -o -path ./.cache -o -path ./bin \) -prune -o -name '*.go' -newer bin/msrag -print -quit; }
if [[ ! -x bin/msrag || -n $(newer) || onnx/models.json -nt bin/msrag ]]; then
  make --no-print-directory -s build NO_SETUP=1 >&2
fi
echo "$root/bin/msrag"
