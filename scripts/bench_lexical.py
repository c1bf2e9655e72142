#!/usr/bin/env python3
"""The bm25s side of the lexical windows benchmark (scripts/bench_lexical.sh):
for each dataset and window, tokenizes the exported chunk texts (English stop
words of lexical/stopwords_en.txt, PyStemmer), indexes them with bm25s (method
"lucene", k1 0.9, b 0.4), saves the index to a temporary directory and loads it
back, then tokenizes every query of the dataset and retrieves the top 100, as
scripts/lexical-bench does in Go.

    python scripts/bench_lexical.py --chunks DIR --data ~/.cache/msrag/data --sets qmsum,nfcorpus
"""
import argparse
import gzip
import json
import os
import tempfile

import bm25s
import numpy as np
import Stemmer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--sets", default="qmsum,nfcorpus")
    ap.add_argument("--windows", default="64,128,254")
    args = ap.parse_args()
    with open(os.path.join(ROOT, "lexical", "stopwords_en.txt"), encoding="utf-8") as f:
        stop = [w.strip() for w in f if w.strip() and not w.startswith("#")]
    stemmer = Stemmer.Stemmer("english")
    for name in args.sets.split(","):
        with gzip.open(os.path.join(args.data, name, "queries.jsonl.gz"), "rt", encoding="utf-8") as f:
            queries = [json.loads(l)["text"] for l in f]
        for w in args.windows.split(","):
            path = os.path.join(args.chunks, name, f"w{w}.jsonl")
            with open(path, encoding="utf-8") as f:
                texts = [json.loads(l) for l in f]
            r = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
            r.index(bm25s.tokenize(texts, stopwords=stop, stemmer=stemmer, show_progress=False), show_progress=False)
            with tempfile.TemporaryDirectory() as d:
                r.save(d)
                r = bm25s.BM25.load(d)
            qt = bm25s.tokenize(queries, stopwords=stop, stemmer=stemmer, return_ids=False, show_progress=False)
            docs, scores = r.retrieve(qt, k=100, show_progress=False)
            print(f"{path}: {len(texts)} rows, {len(queries)} queries, mean top score {float(np.mean(scores[:, 0])):.4f}")


if __name__ == "__main__":
    main()
