#!/usr/bin/env bash
# Build time of late chunking against independent windows, side by side:
# the same corpus, model and windows built by `msrag index` with
# --embedding late and --embedding independent in turns (late, independent,
# late, ...), ROUNDS pairs, each build timed whole by /usr/bin/time; prints
# every pair's wall seconds and late/independent, then the medians.
#
#   scripts/bench_late.sh CORPUS [MODEL] [WINDOWS] [ROUNDS] [-- extra flags for the late build]
#
# Defaults: e5-small-v2-int8, 100,200,500, 3 rounds. Uses bin/msrag (make build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:?usage: scripts/bench_late.sh CORPUS [MODEL] [WINDOWS] [ROUNDS] [-- late flags]}
model=${2:-e5-small-v2-int8}
windows=${3:-100,200,500}
rounds=${4:-3}
shift $(( $# < 4 ? $# : 4 ))
[[ ${1:-} == -- ]] && shift
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() { # MODE OUT [flags]: prints the wall seconds
  local mode=$1 out=$2; shift 2
  rm -rf "$out"
  /usr/bin/time -f %e -o "$work/t" "$root/bin/msrag" index --corpus "$corpus" --out "$out" --model "$model" \
    --windows "$windows" --embedding "$mode" --quiet "$@" 2>/dev/null
  cat "$work/t"
}
late=() ind=() ratio=()
for r in $(seq "$rounds"); do
  l=$(build late "$work/late" "$@")
  i=$(build independent "$work/ind")
  q=$(echo "$l / $i" | bc -l)
  printf 'pair %d: late %.1f s, independent %.1f s, late/independent %.3f\n' "$r" "$l" "$i" "$q"
  late+=("$l") ind+=("$i") ratio+=("$q")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf 'median: late %.1f s, independent %.1f s, late/independent %.3f\n' "$(median "${late[@]}")" "$(median "${ind[@]}")" "$(median "${ratio[@]}")"
