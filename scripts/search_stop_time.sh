#!/usr/bin/env bash
# How long msrag search takes to stop after Ctrl-C (SIGINT) inside a large batch of queries,
# and its peak memory at a large --batch against the default, on a lexical-only index of
# NDOCS small synthetic documents (no model: the time is the search's own).
#
#   scripts/search_stop_time.sh BIN [BIN2]       e.g. scripts/search_stop_time.sh bin/msrag
#
# Environment: NDOCS (default 50000), NQ (queries, default 100000), BATCH (the batch of the
# stop test, default 30000), AFTER (seconds before the signal, default 3), ROUNDS (default
# 3), WORK (default a temporary directory, removed). With two binaries they run in turns.
# The index is cut by all-MiniLM-L6-v2's tokenizer (make setup fetches it).
set -euo pipefail
bins=("$@")
((${#bins[@]} >= 1)) || { echo "usage: scripts/search_stop_time.sh BIN [BIN2]" >&2; exit 2; }
ndocs=${NDOCS:-50000} nq=${NQ:-100000} batch=${BATCH:-30000} after=${AFTER:-3} rounds=${ROUNDS:-3}
work=${WORK:-$(mktemp -d)}
[[ -n ${WORK:-} ]] || trap 'rm -rf "$work"' EXIT
python3 - "$work" "$ndocs" "$nq" <<'PY'
import itertools, json, random, sys
d, n, nq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(11)
vocab = ["w%x" % (i * 2654435761 % 1000003) for i in range(20000)]
cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(vocab))))
words = lambda k: " ".join(rng.choices(vocab, cum_weights=cum, k=k))
with open(d + "/corpus.jsonl", "w") as f:
    for i in range(n):
        f.write(json.dumps({"_id": "d%06d" % i, "text": words(rng.randint(10, 40))}) + "\n")
with open(d + "/queries.tsv", "w") as f:
    for i in range(nq):
        f.write("q%06d\t%s\n" % (i, words(rng.randint(2, 6))))
PY
"${bins[0]}" index --corpus "$work/corpus.jsonl" --out "$work/idx" --model none --tokenizer all-minilm-l6-v2 --windows 16,32 --quiet
echo "index: $ndocs documents; queries: $nq; load: $(uptime | sed 's/.*load average: //')"
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    "$b" search --index "$work/idx" --queries "$work/queries.tsv" --batch "$batch" --out "$work/run.trec" --quiet 2>"$work/err" &
    pid=$!
    sleep "$after"
    if ! kill -0 "$pid" 2>/dev/null; then wait "$pid" || true; echo "round $r $b: ended before the signal: not timed"; continue; fi
    t0=$(date +%s.%N); kill -INT "$pid"; wait "$pid" || true; t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" -v r="$r" -v n="$b" -v bt="$batch" 'BEGIN { printf "round %d %s: --batch %d stopped %.2f s after SIGINT\n", r, n, bt, b - a }'
    [[ -e $work/run.trec ]] && echo "  (a run file was left)"
  done
done
for b in "${bins[@]}"; do
  for bt in 1024 "$nq"; do
    /usr/bin/time -v "$b" search --index "$work/idx" --queries "$work/queries.tsv" --batch "$bt" --out "$work/run-$bt.trec" --quiet 2>"$work/time"
    awk -v n="$b" -v bt="$bt" '/Maximum resident set size/ { r = $6 } /Elapsed \(wall clock\)/ { w = $8 } END { printf "%s --batch %d: peak %.0f MiB, wall %s\n", n, bt, r / 1024, w }' "$work/time"
  done
  cmp -s "$work/run-1024.trec" "$work/run-$nq.trec" && echo "  the two runs are the same" || echo "  the two runs DIFFER"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
