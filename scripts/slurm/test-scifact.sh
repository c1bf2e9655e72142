#!/usr/bin/env bash
# Integration test: a sharded build of SciFact on the local one-node Slurm cluster
# gives exactly the search results of one index built in one process, and a
# scatter-gather search through Slurm (scripts/slurm/submit-search.sh: statistics and
# scatter as job arrays, the gather after them) gives exactly the runs of one process
# searching the shards, and of the one index: dense RRF, lexical RRF, the default hybrid and
# a fusion model of msrag tune; msrag eval through the phases the numbers of msrag eval.
#
#   scripts/slurm/test-scifact.sh [NSHARDS]      (as root; default 4 shards)
#
# The whole corpus with the non-semantic hash test embedder (fast, no model); then a
# subset of SciFact with all-minilm-l6-v2 (fp32) and its int8 export (MSRAG_SLURM_MODELS
# overrides the list; empty skips). SciFact from CACHE/data/scifact, CACHE being msrag's
# cache (scripts/fetch-data.sh scifact) and bin/msrag (make build, here).
# Starts the local cluster if it is not running and stops it again if it started it.
# Prints "slurm-scifact: N passed, M failed".
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=${1:-4}
data=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data/scifact
[[ -f $data/corpus.jsonl.gz ]] || scripts/fetch-data.sh scifact
make --no-print-directory -s build NO_SETUP=1 >&2
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
# same NAME A B: the files are byte for byte the same.
same() {
  if [[ -s $2 ]] && cmp -s "$2" "$3"; then
    ok "$1 ($(wc -l <"$2") lines)"
  else
    bad "$1: $2 and $3 differ"
    diff <(head -c 2000 "$2") <(head -c 2000 "$3") | head -20
  fi
}

# scatter NAME SHARDS WORK -- ARGS: a scatter-gather run through Slurm.
scatter() {
  local name=$1 shards=$2 w=$3
  shift 4
  if MSRAG=$msrag scripts/slurm/submit-search.sh --wait --timeout 600 "$shards" "$w" -- "$@" >"$w.out" 2>"$w.err"; then
    return 0
  fi
  bad "$name: scatter-gather through Slurm"; tail -n 30 "$w.err"
  return 1
}

# searches LABEL SHARDS SINGLE QUERIES FUSION...: for each fusion, the run of a
# scatter-gather search through Slurm, of one process over the shards and of the one index.
searches() {
  local label=$1 shards=$2 single=$3 queries=$4 f tag
  shift 4
  for f in "$@"; do
    tag=$label.${f//[:=,\/]/_}
    local fl=(--fusion "$f")
    [[ $f == default ]] && fl=()
    [[ $f == model:* ]] && fl=(--fusion-model "${f#model:}")
    "$msrag" search --index "$single" --queries "$queries" "${fl[@]}" --k 100 --quiet --out "$work/$tag.single"
    "$msrag" search --index "$shards" --queries "$queries" "${fl[@]}" --k 100 --quiet --out "$work/$tag.one"
    scatter "$tag" "$shards" "$work/$tag.work" -- search --queries "$queries" "${fl[@]}" --k 100 --quiet --out "$work/$tag.sg" || continue
    same "$label fusion $f: scatter-gather = one process over $n shards" "$work/$tag.one" "$work/$tag.sg"
    same "$label fusion $f: scatter-gather = one index" "$work/$tag.single" "$work/$tag.sg"
  done
}

t3=$(now)
"$msrag" tune --dataset "$data" --split train --index "$work/shards" --out "$work/fusion.json" --quiet
searches hash "$work/shards" "$work/single" "$data" rrf rrf:windows=lexical default "model:$work/fusion.json"
t4=$(now)

# msrag eval through the phases against msrag eval of the shards in one process.
ev=(eval --dataset "$data" --split test --model hash-test-embedder --windows 100,200,500 --quiet)
"$msrag" "${ev[@]}" --index "$work/shards" --out "$work/eval.one" >/dev/null
if scatter eval "$work/shards" "$work/eval.work" -- "${ev[@]}" --out "$work/eval.sg"; then
  if python3 - "$work/eval.one/results.json" "$work/eval.sg/results.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
ca = {c["name"]: c["results"] for c in a["configs"]}
cb = {c["name"]: c["results"] for c in b["configs"]}
sys.exit(0 if ca and ca == cb else 1)
PY
  then
    ok "eval: scatter-gather results.json = one process ($(grep -c '"name"' "$work/eval.one/results.json") names)"
  else
    bad "eval: scatter-gather results.json differs from one process's"
  fi
fi

# Real models on a subset of SciFact: the shards built here, searched through Slurm.
sub=$work/scifact-sub
scripts/subset-dataset.sh "$data" "$sub" test 100 40 >/dev/null
for model in ${MSRAG_SLURM_MODELS-all-minilm-l6-v2 all-minilm-l6-v2-int8}; do
  margs=(--model "$model" --windows 64,128,254 --block-lines 20 --quiet)
  for ((i = 0; i < n; i++)); do
    "$msrag" index --corpus "$sub" --out "$work/$model/shard-$i" --shard "$i/$n" "${margs[@]}"
  done
  "$msrag" index --corpus "$sub" --out "$work/$model.single" "${margs[@]}"
  searches "$model" "$work/$model" "$work/$model.single" "$sub" rrf rrf:windows=lexical default
done
t5=$(now)
echo "slurm-scifact: scatter-gather searches and eval $(secs "$t3" "$t4")s (hash), models $(secs "$t4" "$t5")s"
echo "slurm-scifact: sharded build through Slurm $(secs "$t0" "$t1")s, one process $(secs "$t1" "$t2")s"
echo "slurm-scifact: $pass passed, $fail failed"
((fail == 0))
