#!/usr/bin/env bash
# Integration test: a sharded build of SciFact on the local one-node Slurm cluster
# gives exactly the search results of one index built in one process.
#
#   scripts/slurm/test-scifact.sh [NSHARDS]      (as root; default 3 shards)
#
# Uses the non-semantic hash test embedder (fast, no model), SciFact from
# CACHE/data/scifact, CACHE being msrag's cache (scripts/fetch-data.sh scifact) and bin/msrag (built here).
# Starts the local cluster if it is not running and stops it again if it started it.
# Prints "slurm-scifact: N passed, M failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=${1:-3}
data=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data/scifact
[[ -f $data/corpus.jsonl.gz ]] || scripts/fetch-data.sh scifact
go build -o bin/msrag ./cmd/msrag
msrag=$root/bin/msrag
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}

work=$(mktemp -d /tmp/msrag-slurm-scifact.XXXXXX)
started=0
cleanup() {
  ((started)) && scripts/slurm/local-cluster.sh stop >/dev/null 2>&1 || true
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
if ! scripts/slurm/local-cluster.sh status >/dev/null 2>&1; then
  scripts/slurm/local-cluster.sh start >&2
  started=1
fi
eval "$(scripts/slurm/local-cluster.sh env)"

pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

args=(--model hash-test-embedder --windows 100,200,500 --block-lines 500 --quiet)
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t0=$(now)
if MSRAG=$msrag scripts/slurm/submit-index.sh --wait --timeout 300 "$data" "$work/shards" "$n" -- "${args[@]}" \
  >"$work/submit.out" 2>"$work/submit.err"; then
  ok "slurm: $n shards built and checked"
else
  bad "slurm: sharded build"; cat "$work/submit.err"
fi
t1=$(now)
"$msrag" index --corpus "$data" --out "$work/single" "${args[@]}"
t2=$(now)

for fusion in rrf maxp w=100 w=500; do
  "$msrag" search --index "$work/single" --queries "$data" --fusion "$fusion" --k 100 --format jsonl --out "$work/single.$fusion"
  "$msrag" search --index "$work/shards" --queries "$data" --fusion "$fusion" --k 100 --format jsonl --out "$work/shards.$fusion"
  if cmp -s "$work/single.$fusion" "$work/shards.$fusion"; then
    ok "fusion $fusion: $n shards rank exactly as one index ($(wc -l <"$work/single.$fusion") queries)"
  else
    bad "fusion $fusion: shards and one index differ"
    diff <(head -c 2000 "$work/single.$fusion") <(head -c 2000 "$work/shards.$fusion") | head -20
  fi
done
echo "slurm-scifact: sharded build through Slurm $(secs "$t0" "$t1")s, one process $(secs "$t1" "$t2")s"
echo "slurm-scifact: $pass passed, $fail failed"
((fail == 0))
