#!/usr/bin/env bash
# Times a lexical-only build + search of every window (64, 128, 254 tokens of
# all-MiniLM-L6-v2) of QMSum and NFCorpus, with all their queries, top 100:
# msrag's lexical package (scripts/lexical-bench) against bm25s doing the
# same work (scripts/bench_lexical.py). Both read the same exported chunk
# texts, so cutting the windows is outside the figures; each prints the mean
# top score per window, which must agree. Whole processes, timed with
# /usr/bin/time -v (wall clock and peak memory).
#
#   scripts/bench_lexical.sh [RUNS]
#
# Needs: $MSRAG_CACHE/models/all-minilm-l6-v2/tokenizer.json, QMSum and NFCorpus in msrag's
# cache (scripts/fetch-data.sh qmsum nfcorpus), and the venv of scripts/gen_lexical_golden.py.
set -euo pipefail
cd "$(dirname "$0")/.."
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
DATA=$MSRAG_CACHE/data
PY=$MSRAG_CACHE/venv/lexical/bin/python
RUNS=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test ./lexical -run TestExportChunks -export-chunks "$work/chunks" -export-sets qmsum,nfcorpus >/dev/null
go build -o "$work/lexical-bench" ./scripts/lexical-bench
for i in $(seq "$RUNS"); do
	for side in go bm25s; do
		if [[ $side == go ]]; then
			cmd=("$work/lexical-bench" -chunks "$work/chunks" -data "$DATA")
		else
			cmd=("$PY" scripts/bench_lexical.py --chunks "$work/chunks" --data "$DATA")
		fi
		/usr/bin/time -v "${cmd[@]}" >"$work/$side.out" 2>"$work/$side.time"
		wall=$(grep 'Elapsed (wall clock)' "$work/$side.time" | awk '{print $NF}')
		rss=$(grep 'Maximum resident' "$work/$side.time" | awk '{print $NF}')
		echo "run $i $side: wall $wall, peak RSS $((rss / 1024)) MiB"
	done
	diff <(sed 's/, [0-9]* terms//' "$work/go.out") "$work/bm25s.out" >/dev/null || echo "run $i: the mean top scores differ"
done
