#!/usr/bin/env bash
# Makes a smaller copy of a BEIR dataset for quick runs: every document judged in one split,
# plus the first N other documents in corpus order (deterministic), all queries, and that
# split's qrels. With Q, only the first Q queries of the split's qrels (in file order) are kept
# judged, and only their documents count as judged: for sets whose split judges most of the
# corpus (NFCorpus). Retrieval over fewer documents is easier: numbers from a subset are a look
# at the method working, not the benchmark (docs/results.md holds full-corpus runs).
#
#   scripts/subset-dataset.sh SRC DST SPLIT N [Q]
#   e.g. scripts/subset-dataset.sh ~/.cache/msrag/data/scifact /tmp/scifact-demo test 1200
#        scripts/subset-dataset.sh ~/.cache/msrag/data/nfcorpus /tmp/nfcorpus-q50 test 300 50
#
# Idempotent: does nothing when DST already holds the subset made with the same arguments.
set -euo pipefail
if (($# != 4 && $# != 5)); then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
src=$1 dst=$2 split=$3 n=$4 q=${5:-all}
stamp="$src $split $n"
[[ $q == all ]] || stamp+=" $q"
if [[ -f $dst/.subset && $(cat "$dst/.subset") == "$stamp" ]]; then
  echo "subset: $dst present ($stamp)"
  exit 0
fi
[[ -f $src/qrels/$split.tsv ]] || { echo "subset: $src/qrels/$split.tsv not found" >&2; exit 1; }
tmp=$(mktemp -d "$(dirname "$dst")/.$(basename "$dst").tmp-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 - "$src" "$tmp" "$split" "$n" "$q" <<'PY'
import gzip, json, os, shutil, sys
src, dst, split, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
max_queries = None if sys.argv[5] == "all" else int(sys.argv[5])
judged, queries, qrels = set(), {}, []  # queries: id -> position, in file order
with open(os.path.join(src, "qrels", split + ".tsv"), encoding="utf-8") as f:
    for i, line in enumerate(f):
        parts = line.rstrip("\n").split("\t")
        if i == 0 and parts[0] == "query-id":
            qrels.append(line)
            continue
        if parts[0] not in queries:
            if max_queries is not None and len(queries) == max_queries:
                continue
            queries[parts[0]] = len(queries)
        judged.add(parts[1])
        qrels.append(line)
def corpus_path():
    for name in ("corpus.jsonl.gz", "corpus.jsonl"):
        p = os.path.join(src, name)
        if os.path.exists(p):
            return p
    sys.exit("subset: no corpus.jsonl[.gz] in " + src)
p = corpus_path()
opener = gzip.open if p.endswith(".gz") else open
kept = others = 0
with opener(p, "rt", encoding="utf-8") as f, gzip.open(os.path.join(dst, "corpus.jsonl.gz"), "wt", encoding="utf-8") as out:
    for line in f:
        doc = json.loads(line)
        if doc["_id"] in judged:
            out.write(line if line.endswith("\n") else line + "\n")
            kept += 1
        elif others < n:
            out.write(line if line.endswith("\n") else line + "\n")
            others += 1
for name in ("queries.jsonl.gz", "queries.jsonl"):
    if os.path.exists(os.path.join(src, name)):
        shutil.copy(os.path.join(src, name), os.path.join(dst, name))
        break
os.makedirs(os.path.join(dst, "qrels"))
with open(os.path.join(dst, "qrels", split + ".tsv"), "w", encoding="utf-8") as out:
    out.writelines(qrels)
print(f"subset: {len(queries)} judged queries, {kept} judged + {others} other documents")
PY
echo "$stamp" >"$tmp/.subset"
rm -rf "$dst"
chmod 755 "$tmp"
mv "$tmp" "$dst"
trap - EXIT
echo "subset: wrote $dst"
