#!/usr/bin/env bash
# Times whole-process index builds with --batching padded against --batching
# single, in turns (padded, single, padded, ...), and prints each side's median
# wall and CPU (user + system) seconds and the median of the per-round ratios
# single/padded.
#
#   scripts/bench_batching.sh DATASET DOCS [MODEL] [WINDOWS] [ROUNDS]
#   e.g. scripts/bench_batching.sh ~/.cache/msrag/data/scifact 300
#        scripts/bench_batching.sh ~/.cache/msrag/data/qmsum 10
#
# DOCS: the first DOCS documents of DATASET/corpus.jsonl.gz, in file order.
# Defaults: MODEL all-minilm-l6-v2-int8, WINDOWS 100,200, ROUNDS 5. Builds
# msrag from this tree into a temporary directory first; needs GNU time
# (/usr/bin/time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:?usage: scripts/bench_batching.sh DATASET DOCS [MODEL] [WINDOWS] [ROUNDS]}
docs=${2:?usage: scripts/bench_batching.sh DATASET DOCS [MODEL] [WINDOWS] [ROUNDS]}
model=${3:-all-minilm-l6-v2-int8}
windows=${4:-100,200}
rounds=${5:-5}
export MSRAG_CACHE=${MSRAG_CACHE:-$root/.cache}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && eval "$(make -s --no-print-directory go-env)" && go build -o "$work/msrag" ./cmd/msrag)
python3 -c 'import gzip, itertools, sys
sys.stdout.writelines(itertools.islice(gzip.open(sys.argv[1], "rt", encoding="utf-8"), int(sys.argv[2])))' \
  "$data/corpus.jsonl.gz" "$docs" >"$work/corpus.jsonl"
for r in $(seq "$rounds"); do
  for b in padded single; do
    rm -rf "$work/ix-$b"
    /usr/bin/time -f "$b %e %U %S" -a -o "$work/times.txt" \
      "$work/msrag" index --corpus "$work/corpus.jsonl" --out "$work/ix-$b" --model "$model" \
      --windows "$windows" --batching "$b" --quiet
  done
  echo "round $r of $rounds done" >&2
done
python3 - "$work/times.txt" "$data" "$docs" "$model" "$windows" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and not l.startswith("Command")]
side = {"padded": [], "single": []}
for b, wall, user, sys_ in rows:
    side[b].append((float(wall), float(user) + float(sys_)))
n = min(len(side["padded"]), len(side["single"]))
print("dataset %s, first %s documents, model %s, windows %s, %d rounds" % tuple(sys.argv[2:6] + [n]))
print("%-8s %12s %12s" % ("batching", "wall s", "cpu s"))
for b in ("padded", "single"):
    print("%-8s %12.1f %12.1f" % (b, statistics.median(w for w, _ in side[b]), statistics.median(c for _, c in side[b])))
wr = [s[0] / p[0] for p, s in zip(side["padded"], side["single"])]
cr = [s[1] / p[1] for p, s in zip(side["padded"], side["single"])]
print("single/padded: wall %.3f (rounds %.3f-%.3f), cpu %.3f (rounds %.3f-%.3f)" % (
    statistics.median(wr), min(wr), max(wr), statistics.median(cr), min(cr), max(cr)))
PY
