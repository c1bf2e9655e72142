#!/usr/bin/env bash
# Tokenizer throughput: the Go package against Hugging Face tokenizers (Rust, called
# from Python) on the same texts (the first 4 MiB of SciFact abstracts and of QMSum
# transcripts), content tokens only (no special tokens, no truncation), on one
# thread and on all cores, in one run so that the ratios share the machine's state.
#
#   scripts/bench_tokenizer.sh [BENCHTIME]     (default 3x)
#
# Needs the venv of scripts/gen_tokenizer_golden.py ($HOME/.cache/msrag/venv/tok with tokenizers)
# and SciFact and QMSum in msrag's cache (scripts/fetch-data.sh scifact qmsum). Prints a markdown table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
benchtime=${1:-3x}
py=${PYTHON:-${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/venv/tok/bin/python}
threads=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

go test ./tokenizer -run '^$' -bench 'BenchmarkEncode' -benchtime "$benchtime" -benchmem >"$out/go.txt"
RAYON_NUM_THREADS=1 "$py" scripts/bench_tokenizer_hf.py >"$out/hf1.txt"
RAYON_NUM_THREADS=$threads "$py" scripts/bench_tokenizer_hf.py >"$out/hfall.txt"
"$py" - "$out" "$threads" <<'PY'
import re, sys
d, threads = sys.argv[1], sys.argv[2]
go = {}
for line in open(f"{d}/go.txt"):
    m = re.match(r"BenchmarkEncode/([^/]+)/([^/]+)/threads=(\w+)-\d+\s+\d+\s+\d+ ns/op\s+([\d.]+) MB/s(.*)", line)
    if m:
        name, corpus, th, mbs, rest = m.groups()
        apt = re.search(r"([\d.]+) allocs/token", rest)
        go[(name, corpus, th)] = (float(mbs), float(apt.group(1)) if apt else None)
hf = {}
for f, th in (("hf1.txt", "1"), ("hfall.txt", "all")):
    for line in open(f"{d}/{f}"):
        name, corpus, _, mbs, _ = line.split()
        hf[(name, corpus, th)] = float(mbs)
print(f"| tokenizer | corpus | Go 1 thread MB/s | HF 1 thread MB/s | Go/HF | Go {threads} threads MB/s | HF {threads} threads MB/s | Go/HF | Go allocs/token |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (name, corpus, th), (mbs, apt) in go.items():
    if th != "1":
        continue
    g1, h1 = mbs, hf.get((name, corpus, "1"))
    ga, ha = go.get((name, corpus, "all"), (None,))[0], hf.get((name, corpus, "all"))
    r = lambda a, b: f"{a / b:.2f}" if a and b else "-"
    f = lambda v: f"{v:.2f}" if v else "-"
    print(f"| {name} | {corpus} | {f(g1)} | {f(h1)} | {r(g1, h1)} | {f(ga)} | {f(ha)} | {r(ga, ha)} | {apt:.3f} |")
PY
