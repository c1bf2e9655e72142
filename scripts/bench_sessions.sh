#!/usr/bin/env bash
# Times whole-process int8 index builds and searches of this tree's msrag, which
# runs one ONNX Runtime session per core when texts go one per run, against an
# earlier revision's, in turns (one round runs every variant once), and prints
# each variant's median wall and CPU (user + system) seconds and peak RSS, and
# the median of the per-round wall ratios BASE_REV / variant (> 1: faster).
#
#   scripts/bench_sessions.sh BASE_REV DATASET DOCS [ROUNDS]
#   e.g. scripts/bench_sessions.sh e3538d9 ~/.cache/msrag/data/scifact 300
#
# Builds of the first DOCS documents of DATASET/corpus.jsonl.gz with
# all-MiniLM-L6-v2 int8, windows 64,128,254, --no-lexical:
#   base        BASE_REV's msrag, its defaults (one text per run, one session)
#   sessions    this tree's msrag, its defaults (one text per run, one session per core)
#   padded      this tree's msrag --batching padded (one session of all cores)
#   sessions-4  this tree's msrag --sessions 4
# Searches of every query of DATASET (queries.jsonl.gz) against the index
# 'sessions' built (k 10, TREC run to a file): base, sessions, padded.
# Defaults: ROUNDS 5. Needs git, Go and GNU time (/usr/bin/time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/bench_sessions.sh BASE_REV DATASET DOCS [ROUNDS]"
rev=${1:?$usage}
data=${2:?$usage}
docs=${3:?$usage}
rounds=${4:-5}
model=all-minilm-l6-v2-int8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/base-src"
git -C "$root" archive "$rev" | tar -x -C "$work/base-src"
eval "$(make -s --no-print-directory go-env)" # FAISS as make build links it, for both builds
(cd "$work/base-src" && go build -o "$work/msrag-base" ./cmd/msrag)
(cd "$root" && go build -o "$work/msrag" ./cmd/msrag)
python3 - "$data" "$docs" "$work" <<'PY'
import gzip, itertools, json, sys
data, docs, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(work + "/corpus.jsonl", "w", encoding="utf-8") as f:
    f.writelines(itertools.islice(gzip.open(data + "/corpus.jsonl.gz", "rt", encoding="utf-8"), docs))
with open(work + "/queries.tsv", "w", encoding="utf-8") as f:
    for line in gzip.open(data + "/queries.jsonl.gz", "rt", encoding="utf-8"):
        q = json.loads(line)
        f.write(q["_id"] + "\t" + " ".join(q["text"].split()) + "\n")
PY
index() { # NAME BINARY FLAGS...
  local name=$1 bin=$2
  shift 2
  rm -rf "$work/ix-$name"
  /usr/bin/time -f "build-$name %e %U %S %M" -a -o "$work/times.txt" \
    "$bin" index --corpus "$work/corpus.jsonl" --out "$work/ix-$name" --model "$model" \
    --windows 64,128,254 --no-lexical --quiet "$@"
}
search() { # NAME BINARY FLAGS...
  local name=$1 bin=$2
  shift 2
  /usr/bin/time -f "search-$name %e %U %S %M" -a -o "$work/times.txt" \
    "$bin" search --index "$work/ix-sessions" --queries "$work/queries.tsv" --out "$work/run-$name.trec" --quiet "$@"
}
for r in $(seq "$rounds"); do
  index base "$work/msrag-base"
  index sessions "$work/msrag"
  index padded "$work/msrag" --batching padded
  index sessions-4 "$work/msrag" --sessions 4
  search base "$work/msrag-base"
  search sessions "$work/msrag"
  search padded "$work/msrag" --batching padded
  echo "round $r of $rounds done (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
cmp -s "$work/run-base.trec" "$work/run-sessions.trec" && same=identical || same=DIFFERENT
python3 - "$work/times.txt" "$data" "$docs" "$rev" "$same" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and not line.startswith("Command"):
        runs[f[0]].append((float(f[1]), float(f[2]) + float(f[3]), int(f[4]) / 1024))
print("dataset %s, first %s documents, base %s; search runs of base and sessions: %s" % tuple(sys.argv[2:6]))
print("%-20s %8s %8s %10s %16s" % ("variant", "wall s", "cpu s", "peak MiB", "base/variant"))
for kind in ("build", "search"):
    base = runs[kind + "-base"]
    for name in [k for k in runs if k.startswith(kind + "-")]:
        r = runs[name]
        ratios = [b[0] / v[0] for b, v in zip(base, r)]
        print("%-20s %8.2f %8.2f %10.0f %8.3f (%.3f-%.3f)" % (name, statistics.median(w for w, _, _ in r),
              statistics.median(c for _, c, _ in r), statistics.median(m for _, _, m in r),
              statistics.median(ratios), min(ratios), max(ratios)))
PY
