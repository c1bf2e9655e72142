#!/usr/bin/env bash
# Measures how long msrag index takes to stop after Ctrl-C (SIGINT) or
# SIGTERM: it writes a corpus of a dataset's documents repeated REPEAT times
# (ids made unique), starts a build with the hash test embedder, sends the
# signal AFTER seconds in, and times from the signal to the process's exit.
# With several binaries it runs them in turns (A, B, A, B, ...) and prints
# each one's median and the median of the per-round ratios B/A.
#
#   scripts/stop_time.sh DATASET REPEAT BIN [BIN2]
#   e.g. scripts/stop_time.sh ~/.cache/msrag/data/qmsum 20 bin/msrag
#
# Environment: ROUNDS (default 5), AFTER (seconds before the signal,
# default 2), SIG (INT or TERM, default INT), WINDOWS (default
# 100,200,500), ARGS (more flags for msrag index). The hash test embedder
# needs all-MiniLM-L6-v2's tokenizer in msrag's cache (make setup). Each
# build must still be running when the signal comes: a build that ended
# first is reported and not timed.
set -euo pipefail
data=${1:?usage: scripts/stop_time.sh DATASET REPEAT BIN [BIN2]}
repeat=${2:?usage: scripts/stop_time.sh DATASET REPEAT BIN [BIN2]}
shift 2
bins=("$@")
((${#bins[@]} >= 1)) || { echo "usage: scripts/stop_time.sh DATASET REPEAT BIN [BIN2]" >&2; exit 2; }
rounds=${ROUNDS:-5} after=${AFTER:-2} sig=${SIG:-INT} windows=${WINDOWS:-100,200,500}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$data/corpus.jsonl.gz" "$repeat" >"$work/corpus.jsonl" <<'EOF'
import gzip, json, sys
lines = gzip.open(sys.argv[1], "rt", encoding="utf-8").readlines()
for r in range(int(sys.argv[2])):
    for line in lines:
        d = json.loads(line)
        d["_id"] = f"{d['_id']}-r{r}"
        sys.stdout.write(json.dumps(d) + "\n")
EOF
echo "corpus: $(wc -l <"$work/corpus.jsonl") documents, $(du -m "$work/corpus.jsonl" | cut -f1) MB; signal SIG$sig after ${after}s; load: $(uptime | sed 's/.*load average: //')"
declare -a times
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    rm -rf "$work/idx" "$work/.idx."*
    "${bins[$i]}" index --corpus "$work/corpus.jsonl" --out "$work/idx" --model hash-test-embedder \
      --windows "$windows" --quiet ${ARGS:-} 2>"$work/err" &
    pid=$!
    sleep "$after"
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" || true
      echo "round $r ${bins[$i]}: the build ended before the signal ($(tail -1 "$work/err")): not timed"
      continue
    fi
    t0=$(date +%s.%N)
    kill -s "$sig" "$pid"
    code=0
    wait "$pid" || code=$?
    t1=$(date +%s.%N)
    s=$(python3 -c "print(f'{$t1 - $t0:.3f}')")
    left=$(ls -A "$work" | { grep -v -e "^corpus.jsonl$" -e "^err$" || true; } | tr "\n" " ")
    echo "round $r ${bins[$i]}: stopped ${s}s after SIG$sig, exit $code, left: ${left:-nothing}; $(tail -1 "$work/err")"
    times[$i]+="$s "
  done
done
python3 - "${#bins[@]}" "${bins[@]}" "${times[@]}" <<'EOF'
import statistics, sys
n = int(sys.argv[1]); names = sys.argv[2:2 + n]; runs = [list(map(float, t.split())) for t in sys.argv[2 + n:]]
for name, t in zip(names, runs):
    print(f"{name}: median {statistics.median(t):.3f}s, max {max(t):.3f}s over {len(t)} runs")
if n == 2 and len(runs[0]) == len(runs[1]):
    print(f"median ratio {names[1]}/{names[0]}: {statistics.median(b / a for a, b in zip(*runs)):.3f}")
EOF
echo "load after: $(uptime | sed 's/.*load average: //')"
