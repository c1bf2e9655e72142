#!/usr/bin/env bash
# Whole-process speed of a lexical-only multi-scale index against bm25s doing
# the same windows: msrag index --model none (windows 64, 128, 254 of
# all-MiniLM-L6-v2's tokenizer, lexical windows and bm25-doc) then msrag
# search of every query of the dataset (top 100 documents, 100 chunks a
# window, the default rule: RRF over the lexical channels), against
# scripts/bench_lexical_windows.py (Hugging Face tokenizers cutting the same
# windows, bm25s with msrag's analyzer, the same RRF), each writing a TREC
# run. It checks that the two runs agree, then times both, alternating,
# ROUNDS times each, with /usr/bin/time -v (wall clock, CPU, peak memory of
# the whole process; msrag's two commands summed, their peaks the larger),
# and prints the medians and their ratio.
#
#   make build && scripts/bench_lexical_windows.sh DATASET [ROUNDS]
#
# DATASET: a directory in BEIR layout (corpus.jsonl.gz, queries.jsonl.gz),
# or the name of a data set in msrag's cache (scripts/fetch-data.sh): qmsum, nfcorpus. ROUNDS
# defaults to 3. Needs bin/msrag, $MSRAG_CACHE/models/all-minilm-l6-v2 and
# the venv of scripts/gen_lexical_golden.py with the tokenizers package:
#
#   $MSRAG_CACHE/venv/lexical/bin/pip install tokenizers
set -euo pipefail
cd "$(dirname "$0")/.."
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
DATA=$MSRAG_CACHE/data
PY=${PY:-$MSRAG_CACHE/venv/lexical/bin/python}
MSRAG=${MSRAG:-bin/msrag}
MODEL=all-minilm-l6-v2
TOK=$MSRAG_CACHE/models/$MODEL/tokenizer.json
ds=${1:?usage: $0 DATASET [ROUNDS]}
ROUNDS=${2:-3}
[[ -d $ds ]] || ds=$DATA/$ds
for f in "$ds/corpus.jsonl.gz" "$ds/queries.jsonl.gz" "$TOK" "$MSRAG" "$PY"; do
	[[ -e $f ]] || { echo "$0: $f is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

msrag_side() { # index + search; each step's /usr/bin/time -v report in $1.index, $1.search
	rm -rf "$work/idx"
	/usr/bin/time -v -o "$1.index" "$MSRAG" index --model none --tokenizer "$MODEL" --windows 64,128,254 \
		--corpus "$ds" --out "$work/idx" --quiet 2>/dev/null
	/usr/bin/time -v -o "$1.search" "$MSRAG" search --index "$work/idx" --queries "$ds" --k 100 --window-k 100 \
		--out "$work/msrag.trec"
}
bm25s_side() {
	/usr/bin/time -v -o "$1.py" "$PY" scripts/bench_lexical_windows.py --dataset "$ds" --tokenizer "$TOK" \
		--out "$work/bm25s.trec"
}
# seconds reads a /usr/bin/time -v wall clock (h:mm:ss or m:ss.ss).
seconds() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$1"; }
cpu() { awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$1"; }
rss() { awk -F': ' '/Maximum resident/ {print $2}' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "== $(basename "$ds"): agreement of the two runs"
msrag_side "$work/check" && bm25s_side "$work/check"
"$PY" scripts/bench_lexical_windows.py --compare "$work/msrag.trec" "$work/bm25s.trec"
: >"$work/rows"
for i in $(seq "$ROUNDS"); do
	msrag_side "$work/r$i"
	bm25s_side "$work/r$i"
	a_wall=$(echo "$(seconds "$work/r$i.index") + $(seconds "$work/r$i.search")" | bc)
	a_cpu=$(echo "$(cpu "$work/r$i.index") + $(cpu "$work/r$i.search")" | bc)
	a_rss=$(printf '%s\n' "$(rss "$work/r$i.index")" "$(rss "$work/r$i.search")" | sort -n | tail -1)
	b_wall=$(seconds "$work/r$i.py") b_cpu=$(cpu "$work/r$i.py") b_rss=$(rss "$work/r$i.py")
	echo "round $i: msrag wall $a_wall s (index $(seconds "$work/r$i.index") + search $(seconds "$work/r$i.search")), cpu $a_cpu s, peak $((a_rss / 1024)) MiB;" \
		"bm25s wall $b_wall s, cpu $b_cpu s, peak $((b_rss / 1024)) MiB; ratio $(echo "scale=3; $b_wall / $a_wall" | bc)"
	echo "$a_wall $a_cpu $a_rss $b_wall $b_cpu $b_rss" >>"$work/rows"
done
col() { awk -v c="$1" '{print $c}' "$work/rows" | median; }
echo "== $(basename "$ds"), medians of $ROUNDS: msrag wall $(col 1) s, cpu $(col 2) s, peak $(($(col 3) / 1024)) MiB;" \
	"bm25s wall $(col 4) s, cpu $(col 5) s, peak $(($(col 6) / 1024)) MiB; bm25s / msrag wall $(echo "scale=2; $(col 4) / $(col 1)" | bc)"
