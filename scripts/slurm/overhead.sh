#!/usr/bin/env bash
# Measures what Slurm adds to a sharded build: the same NSHARDS fake shards (fake-msrag.sh)
# plus the shard check, run REPS times through submit-index.sh --wait and REPS times directly
# (one after another, then check-shards.sbatch). Prints every time and the medians.
#
#   scripts/slurm/overhead.sh [NSHARDS [REPS]]      (defaults 3 and 5; needs a running cluster)
#
# MSRAG_SLURM_POLL sets how often --wait polls (default here 0.5 s; submit-index.sh's own default is 2 s).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
n=${1:-3} reps=${2:-5}
export MSRAG_SLURM_POLL=${MSRAG_SLURM_POLL:-0.5}
fake="$here/fake-msrag.sh"
work=$(mktemp -d /tmp/msrag-slurm-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo '{"id": "d1", "text": "x"}' >"$work/corpus.jsonl"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

slurm=() direct=()
for ((r = 0; r < reps; r++)); do
  t=$(now)
  MSRAG=$fake "$here/submit-index.sh" --wait --timeout 300 "$work/corpus.jsonl" "$work/s$r" "$n" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  slurm+=("$(secs "$t" "$(now)")")
  t=$(now)
  for ((i = 0; i < n; i++)); do
    "$fake" index --corpus "$work/corpus.jsonl" --out "$work/d$r/shard-$i" --shard "$i/$n" >/dev/null
  done
  OUT="$work/d$r" NSHARDS=$n bash "$here/check-shards.sbatch" >/dev/null
  direct+=("$(secs "$t" "$(now)")")
done
echo "nshards=$n reps=$reps cpus=$(nproc) poll=${MSRAG_SLURM_POLL}s load=$(cut -d' ' -f1 /proc/loadavg)"
echo "slurm  (submit to done): ${slurm[*]}  median $(echo "${slurm[*]}" | median)s"
echo "direct (sequential):     ${direct[*]}  median $(echo "${direct[*]}" | median)s"
