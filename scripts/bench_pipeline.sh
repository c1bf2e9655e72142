#!/usr/bin/env bash
# Pipeline throughput and a scale run of msrag index.
#
#   scripts/bench_pipeline.sh bench [BENCHTIME] [COUNT]   (default 3x 3)
#       BenchmarkPipeline in bench_test.go: SciFact and QMSum built through
#       msrag.BuildWithStats, windows 100,200,500, with a no-op embedder (the
#       pipeline alone) and the 64-dim hash test embedder.
#   scripts/bench_pipeline.sh scale N [N...]
#       For each N: a corpus of N documents drawn with replacement from the
#       SciFact and QMSum documents together (uniformly, fixed seed, new ids
#       s0000000...), written as JSONL under $SCALE_DIR (default /tmp/msrag-scale;
#       the corpus of a smaller N is the first N lines of the largest), indexed by
#       bin/msrag index --model hash-test-embedder under /usr/bin/time -v. Prints
#       wall time, peak RSS and the index's bytes on disk per N. The corpora and
#       indices stay in $SCALE_DIR; remove it afterwards.
#
# Needs SciFact and QMSum in msrag's cache (scripts/fetch-data.sh scifact qmsum) and the tokenizer of
# all-MiniLM-L6-v2 in $HOME/.cache/msrag/models/all-minilm-l6-v2 (scripts/fetch-model.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data
eval "$(make -s --no-print-directory go-env)" # FAISS as make build links it
mode=${1:-bench}
shift || true

case "$mode" in
bench)
	go test . -run '^$' -bench 'BenchmarkPipeline' -benchtime "${1:-3x}" -count "${2:-3}"
	;;
scale)
	[ $# -gt 0 ] || { echo "usage: $0 scale N [N...]" >&2; exit 2; }
	dir=${SCALE_DIR:-/tmp/msrag-scale}
	mkdir -p "$dir"
	max=0
	for n in "$@"; do [ "$n" -gt "$max" ] && max=$n; done
	big="$dir/corpus-$max.jsonl"
	if [ ! -s "$big" ]; then
		python3 - "$data" "$max" "$big" <<'PY'
import gzip, json, random, sys
data, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
docs = []
for name in ("scifact", "qmsum"):
    with gzip.open(f"{data}/{name}/corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d.get("title") or "", d["text"]))
rng = random.Random(20261129)
with open(out + ".tmp", "w", encoding="utf-8") as f:
    for i in range(n):
        t, x = docs[rng.randrange(len(docs))]
        f.write(json.dumps({"_id": f"s{i:07d}", "title": t, "text": x}, ensure_ascii=False))
        f.write("\n")
import os
os.replace(out + ".tmp", out)
PY
	fi
	make --no-print-directory -s build NO_SETUP=1 >&2
	printf '| documents | corpus MB | wall s | peak RSS MiB | index MiB on disk | of which .faiss MiB | RSS / index | vectors | tokens embedded | docs/s |\n'
	printf '|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n'
	for n in "$@"; do
		in="$dir/corpus-$n.jsonl"
		[ -s "$in" ] || head -n "$n" "$big" >"$in"
		out="$dir/index-$n"
		rm -rf "$out"
		/usr/bin/time -v bin/msrag index --corpus "$in" --out "$out" --model hash-test-embedder \
			--windows 100,200,500 --quiet 2>"$dir/time-$n.txt"
		wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$dir/time-$n.txt" |
			awk -F: '{s=0; for(i=1;i<=NF;i++) s=s*60+$i; printf "%.1f", s}')
		rss=$(awk -F': ' '/Maximum resident set size/{printf "%.0f", $2/1024}' "$dir/time-$n.txt")
		disk=$(du -sb "$out" | awk '{print $1}')
		fa=$(cat "$out"/*.faiss | wc -c)
		line=$(grep '^index: wrote' "$dir/time-$n.txt")
		vec=$(sed -E 's/.*with (\[[0-9 ]+\]) vectors.*/\1/' <<<"$line")
		tok=$(sed -E 's/.*chunks, ([0-9]+) tokens.*/\1/' <<<"$line")
		awk -v n="$n" -v cb="$(stat -c %s "$in")" -v w="$wall" -v r="$rss" -v d="$disk" -v f="$fa" -v v="$vec" -v t="$tok" 'BEGIN{
			printf "| %d | %.0f | %.0f | %d | %.0f | %.0f | %.2f | %s | %s | %.0f |\n", n, cb/1048576, w, r, d/1048576, f/1048576, r/(d/1048576), v, t, n/w }'
	done
	;;
*)
	echo "usage: $0 bench [BENCHTIME] [COUNT] | scale N [N...]" >&2
	exit 2
	;;
esac
