#!/usr/bin/env bash
# FAISS search of the default build (the faiss-cpu 1.15.0 wheel's library) against FAISS=debian
# (Debian's FAISS 1.7.3 and OpenBLAS 0.3.21): the faiss package's BenchmarkSearch (a Flat
# inner-product index of 100,000 random 384-d vectors, k = 100, batches of 1, 32 and 1,024
# queries) in two test binaries, one linked each way, run in turns (wheel, debian, wheel, ...)
# ROUNDS times with OMP_NUM_THREADS (default: every core); prints the medians of queries/s and
# queries per CPU-second of each and their ratios, as a markdown table.
#
#   scripts/bench_faiss_builds.sh [ROUNDS] [BENCHTIME]     (default 5 rounds, 2s)
#
# Needs make setup (the wheel) and Debian's libfaiss-dev (make setup FAISS=debian).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${1:-5} benchtime=${2:-2s}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(eval "$(make -s --no-print-directory go-env)" && go test -c -o "$work/wheel.test" ./faiss)
(eval "$(make -s --no-print-directory go-env FAISS=debian)" && go test -c -o "$work/debian.test" ./faiss)
for ((r = 0; r < rounds; r++)); do
  for b in wheel debian; do
    (cd faiss && "$work/$b.test" -test.run '^$' -test.bench '^BenchmarkSearch$' -test.benchtime "$benchtime") >>"$work/$b.txt"
  done
done
python3 - "$work/wheel.txt" "$work/debian.txt" "$OMP_NUM_THREADS" "$rounds" <<'PY'
import re, statistics, sys
def read(path):
    out = {}
    for line in open(path):
        m = re.match(r"BenchmarkSearch/batch=(\d+)", line)
        if not m:
            continue
        qs = {u: float(v) for v, u in re.findall(r"([\d.]+) (queries/s|queries/cpu-s)", line)}
        out.setdefault(int(m.group(1)), []).append((qs["queries/s"], qs["queries/cpu-s"]))
    return out
wheel, debian = read(sys.argv[1]), read(sys.argv[2])
print(f"OMP_NUM_THREADS={sys.argv[3]}, {sys.argv[4]} rounds in turns, medians")
print()
print("| batch | Debian 1.7.3 queries/s | wheel 1.15.0 queries/s | wheel / Debian | Debian queries/CPU-s | wheel queries/CPU-s | wheel / Debian |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for batch in sorted(wheel):
    w, d = wheel[batch], debian.get(batch, [])
    if not d:
        continue
    wq, dq = statistics.median(x[0] for x in w), statistics.median(x[0] for x in d)
    wc, dc = statistics.median(x[1] for x in w), statistics.median(x[1] for x in d)
    print(f"| {batch:,} | {dq:,.1f} | {wq:,.1f} | {wq / dq:.2f} | {dc:,.1f} | {wc:,.1f} | {wc / dc:.2f} |")
PY
