#!/usr/bin/env bash
# Memory and time of a scatter-gather search against one process searching the same shards,
# on a synthetic corpus of many small documents (the hash test embedder: no model, dense and
# lexical windows), or on a dataset of BEIR layout with a real model.
#
#   scripts/bench_scatter.sh [NDOCS [NSHARDS [NQUERIES]]]     (default 1000000 4 1000)
#   DATASET=DIR scripts/bench_scatter.sh - [NSHARDS]           (e.g. ~/.cache/msrag/data/scifact)
#
# Synthetic: builds NSHARDS shards (msrag index --shard i/n, --model hash-test-embedder,
# windows 32,64, lexical windows on) of NDOCS documents of 20 to 60 words drawn from a Zipf
# vocabulary of 50,000 words (fixed seed), and NQUERIES queries of 3 to 8 such words. With
# DATASET: its corpus in NSHARDS shards with $MODEL (default all-minilm-l6-v2-int8) and
# $WINDOWS (default 64,128,254), lexical windows on, and its queries. Either is searched
# with the default hybrid: once in one process over every shard, and once as the three
# phases run one task after another. /usr/bin/time -v gives each process's peak RSS and
# wall time; the runs must be byte for byte the same. With Slurm running
# (scripts/slurm/local-cluster.sh start) it also submits the scatter-gather with
# scripts/slurm/submit-search.sh and reports its wall time from submission, against the sum
# of its tasks' own times (what the scheduler adds).
# BATCH=N gives every phase and the one process --batch N (queries a block; default msrag's).
# Everything goes under $WORK (default /tmp/msrag-bench-scatter), kept for a rerun; the runs
# of each corpus and block size under $WORK/run-SHARDS[-bN].
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ndocs=${1:-1000000} n=${2:-4} nq=${3:-1000}
[[ -z ${DATASET:-} || $ndocs == - ]] || { echo "bench_scatter: with DATASET give - for NDOCS" >&2; exit 2; }
work=${WORK:-/tmp/msrag-bench-scatter}
msrag=${MSRAG:-$root/bin/msrag}
[[ -x $msrag ]] || (cd "$root" && make --no-print-directory -s build NO_SETUP=1 >&2)
mkdir -p "$work"
if [[ -n ${DATASET:-} ]]; then
  data=$(cd "$DATASET" && pwd) corpus=$data queries=$data
  shards=$work/shards-$(basename "$data")-${MODEL:-all-minilm-l6-v2-int8}-$n
  args=(--model "${MODEL:-all-minilm-l6-v2-int8}" --windows "${WINDOWS:-64,128,254}" --block-lines 500 --quiet)
else
  data=$work/corpus-$ndocs corpus=$work/corpus-$ndocs/corpus.jsonl queries=$work/corpus-$ndocs/queries.jsonl
  shards=$work/shards-$ndocs-$n
  args=(--model hash-test-embedder --windows 32,64 --block-lines 20000 --quiet)
fi
if [[ -z ${DATASET:-} && ! -s $corpus ]]; then
  mkdir -p "$data"
  python3 - "$data" "$ndocs" "$nq" <<'PY'
import itertools, json, random, sys
d, n, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
vocab = ["w%x" % (i * 2654435761 % 1000003) for i in range(50000)]
cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
def words(k):
    return " ".join(rng.choices(vocab, cum_weights=cum, k=k))
with open(d + "/corpus.jsonl", "w") as f:
    for i in range(n):
        f.write(json.dumps({"_id": "d%07d" % i, "text": words(rng.randint(20, 60))}) + "\n")
with open(d + "/queries.jsonl", "w") as f:
    for i in range(nq):
        f.write(json.dumps({"_id": "q%05d" % i, "text": words(rng.randint(3, 8))}) + "\n")
PY
fi
for ((i = 0; i < n; i++)); do
  [[ -s $shards/shard-$i/manifest.json ]] || "$msrag" index --corpus "$corpus" --out "$shards/shard-$i" --shard "$i/$n" "${args[@]}"
done

run=$work/run-$(basename "$shards")${BATCH:+-b$BATCH}
mkdir -p "$run"

# measure NAME CMD...: runs CMD under /usr/bin/time -v; prints NAME, peak RSS (MiB) and wall (s).
measure() {
  local name=$1 log=$run/time.$1
  shift
  /usr/bin/time -v "$@" 2>"$log" >/dev/null || { cat "$log"; exit 1; }
  awk -v n="$name" '/Maximum resident set size/ { rss = $6 } /Elapsed \(wall clock\)/ { split($8, t, ":"); w = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
    END { printf "%-16s peak %7.0f MiB  wall %7.2f s\n", n, rss / 1024, w }' "$log"
}
search=(search --index "$shards" --queries "$queries" --k 10 --quiet ${BATCH:+--batch "$BATCH"})
measure one-process "$msrag" "${search[@]}" --out "$run/one.trec"
sg=$run/sg-work
rm -rf "$sg"
for ((i = 0; i < n; i++)); do measure "stats-$i" "$msrag" "${search[@]}" --phase stats --work "$sg" --shard "$i/$n"; done
for ((i = 0; i < n; i++)); do measure "scatter-$i" "$msrag" "${search[@]}" --phase scatter --work "$sg" --shard "$i/$n"; done
measure gather "$msrag" "${search[@]}" --phase gather --work "$sg" --out "$run/sg.trec"
if cmp -s "$run/one.trec" "$run/sg.trec"; then echo "runs: the same ($(wc -l <"$run/one.trec") lines)"; else echo "runs: DIFFER"; exit 1; fi
if command -v sbatch >/dev/null && sinfo >/dev/null 2>&1; then
  rm -rf "$sg.slurm"
  t0=$(date +%s.%N)
  MSRAG=$msrag MSRAG_SLURM_POLL=0.5 "$root/scripts/slurm/submit-search.sh" --wait --timeout 3600 "$shards" "$sg.slurm" -- \
    search --queries "$queries" --k 10 --quiet ${BATCH:+--batch "$BATCH"} --out "$run/slurm.trec" >/dev/null 2>"$run/slurm.err"
  t1=$(date +%s.%N)
  tasks=$(grep -ho "exit 0 after [0-9]*s" "$sg.slurm"/logs/*.out | awk '{ s += $4 + 0 } END { print s + 0 }')
  cmp -s "$run/one.trec" "$run/slurm.trec" && same=same || same=DIFFER
  awk -v a="$t0" -v b="$t1" -v t="$tasks" -v s="$same" 'BEGIN { printf "slurm: %.1f s from submission to the gathered run (%s); tasks ran %d s in all (whole seconds)\n", b - a, s, t }'
fi
