#!/usr/bin/env python3
"""The bm25s side of scripts/bench_lexical_windows.sh: the whole work of
`msrag index --model none` + `msrag search` of every query, done with Hugging
Face `tokenizers` and bm25s, written as a TREC run.

    python scripts/bench_lexical_windows.py --dataset DIR --tokenizer tokenizer.json --out RUN.trec
    python scripts/bench_lexical_windows.py --compare RUN_A RUN_B

--compare prints how far two runs agree: the queries with the same first
document, the same first 10 in the same order, the mean overlap of the first
10 and 100 documents, and the largest score difference of a document both
rank.

1. Reads the dataset's corpus.jsonl.gz; a document's text is title + " " +
   text (the text alone without a title), as msrag indexes it; documents
   whose text is blank are left out, as msrag's reader skips them.
2. Tokenizes every document with the tokenizer (no special tokens, no
   truncation) and cuts each window as package chunk does: windows of SIZE
   tokens every SIZE tokens, the last one moved back to end at the
   document's end with SIZE tokens (aligned tail), a document shorter than
   SIZE being one window; a window's text is the document's text from its
   first token's start to its last token's end.
3. Analyses the windows' texts, the whole documents and the queries with
   msrag's analyzer as scripts/gen_lexical_golden.py reproduces it (its
   `analyse`, imported: stop words of lexical/stopwords_en.txt, PyStemmer
   2.0.1), indexes each window and the whole documents with bm25s (method
   "lucene", k1 0.9, b 0.4) and retrieves the top --window-k (100) rows of
   each for every query of queries.jsonl.gz, ordered as msrag orders them
   (score, then document id, then start: 32 rows more are retrieved for the
   ties); rows of score 0 match no term and are dropped.
4. Fuses the channels as msrag's rule does (package fuse): --fusion rrf
   (msrag's default: every chunk adds 1/(rank + c), ranks from 0, c = 1) or
   docrrf (each channel's chunks mapped to documents at their best rank,
   then 1/(rank + c) per document); ties are broken by document id, as msrag
   numbers documents in id order. Writes the top --k (100) documents per
   query as a TREC run (tag bm25s).
"""
import argparse
import gzip
import json
import os
import sys

import bm25s
from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_lexical_golden import K1, B, analyse  # noqa: E402  msrag's analyzer, reproduced there


def read_jsonl_gz(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def document_text(d):
    return d["title"] + " " + d["text"] if d.get("title") else d["text"]


def cut(offsets, size):
    """Character spans of the windows of `size` tokens over a document's token offsets (aligned tail)."""
    n, out, start = len(offsets), [], 0
    while start < n:
        end = min(start + size, n)
        if end == n:
            start = max(0, n - size)
        out.append((offsets[start][0], offsets[end - 1][1]))
        if end == n:
            break
        start += size
    return out


def windows(texts, tokenizer, sizes):
    """Per window size, the chunk texts and each chunk's (document, start)."""
    tok = Tokenizer.from_file(tokenizer)
    tok.no_truncation()
    tok.no_padding()
    out = {s: ([], []) for s in sizes}
    for di, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        text = texts[di]
        for s in sizes:
            chunks, keys = out[s]
            for a, b in cut(enc.offsets, s):
                chunks.append(text[a:b])
                keys.append((di, a))
    return out


# TIE_MARGIN rows beyond k are retrieved, so that rows tied with the k-th
# are ordered as msrag orders them (score, then document id, then start).
TIE_MARGIN = 32


def retrieve(texts, keys, ids, qterms, k):
    """Per query, the documents of the top k rows of an index of texts (score > 0), in msrag's order."""
    r = bm25s.BM25(k1=K1, b=B, method="lucene")
    r.index(analyse(texts), show_progress=False)
    rows, scores = r.retrieve(qterms, k=min(k + TIE_MARGIN, len(texts)), show_progress=False)
    out = []
    for rs, ss in zip(rows, scores):
        hits = sorted((-float(s), ids[keys[d][0]], keys[d][1], keys[d][0]) for d, s in zip(rs, ss) if s > 0)
        out.append([h[3] for h in hits[:k]])
    return out


def fuse(channels, ids, fusion, c, k):
    """Documents of each query by the fused score; channels hold, per query, ranked document indices (one per chunk)."""
    out = []
    for q in range(len(channels[0])):
        acc = {}
        for ch in channels:
            seen, rank = set(), 0
            for d in ch[q]:
                if fusion == "docrrf":
                    if d in seen:
                        continue
                    seen.add(d)
                acc[d] = acc.get(d, 0.0) + 1.0 / (rank + c)
                rank += 1
        out.append(sorted(acc.items(), key=lambda x: (-x[1], ids[x[0]]))[:k])
    return out


def read_run(path):
    run = {}
    with open(path) as f:
        for line in f:
            q, _, d, rank, score, _ = line.split()
            run.setdefault(q, []).append((int(rank), d, float(score)))
    return {q: sorted(hits) for q, hits in run.items()}


def compare(a_path, b_path):
    a, b = read_run(a_path), read_run(b_path)
    qs = sorted(set(a) | set(b))
    top1 = top10 = 0
    over10 = over100 = diff = 0.0
    for q in qs:
        da, db = [d for _, d, _ in a.get(q, [])], [d for _, d, _ in b.get(q, [])]
        top1 += bool(da) and bool(db) and da[0] == db[0]
        top10 += da[:10] == db[:10]
        over10 += len(set(da[:10]) & set(db[:10])) / max(1, min(10, max(len(da), len(db))))
        over100 += len(set(da) & set(db)) / max(1, max(len(da), len(db)))
        sa, sb = {d: s for _, d, s in a.get(q, [])}, {d: s for _, d, s in b.get(q, [])}
        diff = max([diff] + [abs(sa[d] - sb[d]) for d in set(sa) & set(sb)])
    n = len(qs)
    print(f"{n} queries ({len(a)} in {a_path}, {len(b)} in {b_path}): same first document {top1} ({100 * top1 / n:.2f}%), "
          f"same first 10 in order {top10} ({100 * top10 / n:.2f}%), mean overlap of the first 10 {100 * over10 / n:.2f}%, "
          f"of the first 100 {100 * over100 / n:.2f}%; largest score difference {diff:.3g}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json")
    ap.add_argument("--windows", default="64,128,254")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--window-k", type=int, default=100)
    ap.add_argument("--fusion", choices=["rrf", "docrrf"], default="rrf")
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    docs = [d for d in read_jsonl_gz(os.path.join(args.dataset, "corpus.jsonl.gz")) if document_text(d).strip()]
    texts, ids = [document_text(d) for d in docs], [d["_id"] for d in docs]
    queries = read_jsonl_gz(os.path.join(args.dataset, "queries.jsonl.gz"))
    qterms = analyse([q["text"] for q in queries])
    sizes = [int(s) for s in args.windows.split(",")]
    channels = []
    for s, (chunks, keys) in windows(texts, args.tokenizer, sizes).items():
        channels.append(retrieve(chunks, keys, ids, qterms, args.window_k))
    channels.append(retrieve(texts, [(d, 0) for d in range(len(texts))], ids, qterms, args.window_k))
    with open(args.out, "w") as f:
        for q, hits in zip(queries, fuse(channels, ids, args.fusion, args.c, args.k)):
            for rank, (d, score) in enumerate(hits, 1):
                f.write(f"{q['_id']} Q0 {ids[d]} {rank} {score:.10g} bm25s\n")


if __name__ == "__main__":
    main()
