#!/usr/bin/env python3
"""Hugging Face tokenizers (Rust, through Python) throughput on the texts the Go
benchmark uses: the first 4 MiB of document texts of SciFact and QMSum, encoded
without special tokens, truncation or padding, with encode_batch on THREADS
threads (RAYON_NUM_THREADS, set by scripts/bench_tokenizer.sh before Python starts).

Prints one line per (tokenizer, corpus): name corpus threads MB/s tokens/s.
"""
import gzip
import json
import os
import sys
import time

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
DATA = os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data")
FILES = {
    "bert-uncased": os.path.join(ROOT, "tokenizer", "testdata", "bert-uncased.tokenizer.json.gz"),
    "xlmr-ja": os.path.join(ROOT, "tokenizer", "testdata", "xlmr-ja.tokenizer.json.gz"),
    "bert-chinese": os.path.join(CACHE, "tokenizers", "bert-chinese", "tokenizer.json"),
}


def texts(corpus, limit=4 << 20):
    out, total = [], 0
    for line in gzip.open(os.path.join(DATA, corpus, "corpus.jsonl.gz")):
        if total >= limit:
            break
        t = json.loads(line)["text"]
        out.append(t)
        total += len(t.encode())
    return out


def main():
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    only = sys.argv[1:]
    for name, path in FILES.items():
        if only and name not in only or not os.path.exists(path):
            continue
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        tok = Tokenizer.from_str(raw.decode())
        tok.no_truncation()
        tok.no_padding()
        for corpus in ("scifact", "qmsum"):
            ts = texts(corpus)
            nbytes = sum(len(t.encode()) for t in ts)
            best, ntok = None, 0
            for _ in range(3):
                t0 = time.perf_counter()
                encs = tok.encode_batch(ts, add_special_tokens=False)
                dt = time.perf_counter() - t0
                ntok = sum(len(e.ids) for e in encs)
                best = dt if best is None else min(best, dt)
            print(f"{name} {corpus} {threads} {nbytes / best / 1e6:.2f} {ntok / best:.0f}", flush=True)


if __name__ == "__main__":
    main()
