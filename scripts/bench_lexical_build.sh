#!/usr/bin/env bash
# Measures what lexical windows add to a build: builds the first N documents
# of a BEIR corpus with and without lexical windows (--no-lexical), ROUNDS times alternating, and
# prints each build's whole-process wall, user and system time and peak
# memory, then the bytes of the dense and lexical files of the last builds.
#
#   scripts/bench_lexical_build.sh CORPUS.jsonl[.gz] [N=500] [ROUNDS=3] [MODEL=all-minilm-l6-v2-int8]
#
# It needs bin/msrag (make build) and GNU time (/usr/bin/time).
set -euo pipefail
corpus=$1 n=${2:-500} rounds=${3:-3} model=${4:-all-minilm-l6-v2-int8}
msrag=$(cd "$(dirname "$0")/.." && pwd)/bin/msrag
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $corpus == *.gz ]]; then zcat "$corpus"; else cat "$corpus"; fi | head -n "$n" >"$work/sub.jsonl" || true
for ((i = 1; i <= rounds; i++)); do
  for mode in dense lexical; do
    flag=()
    [[ $mode == dense ]] && flag=(--no-lexical)
    rm -rf "$work/idx-$mode"
    /usr/bin/time -f "$mode wall %e s user %U s sys %S s maxrss %M KB" \
      "$msrag" index --corpus "$work/sub.jsonl" --out "$work/idx-$mode" --model "$model" \
      --windows 64,128,254 --quiet "${flag[@]}" 2>&1 | tail -1
  done
done
echo "bytes:"
(cd "$work/idx-lexical" && wc -c -- *.faiss *.chunks.parquet *.bm25 docs.parquet)
