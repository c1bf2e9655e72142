#!/usr/bin/env python3
"""Writes the reference vectors of late chunking that the Go tests compare with
(testdata/late/MODEL.json and MODEL.f16), computed independently of msrag.

Reference: Hugging Face `tokenizers` on the model's tokenizer.json, Python
`onnxruntime` on its model.onnx and NumPy, following the rule package late
documents (docs/late-chunking.md):

  - a document's content tokens (no special tokens) are cut into segments of
    M = max_tokens - special tokens - passage prefix tokens: one segment when
    the document fits, else segments starting every M - overlap tokens, the last
    moved back to end with the document; overlap = M // 4;
  - each segment is encoded once as [CLS] + prefix + content + [SEP];
  - a window takes its token vectors from the segment that holds all of it with
    the most context on both sides (min of the tokens before and after it in
    the segment; the earliest of equals), or, when none holds it, each token
    from the segment that holds that token with the most context;
  - a piece that starts where its segment's content starts also pools the rows
    before the content ([CLS] and the prefix), one that ends where it ends the
    rows after it ([SEP]); the window's vector is the mean of the rows pooled,
    normalised.

Windows are msrag's: sizes of the model's window set, starting every size
tokens, the last one moved back to end at the document's end (a document
shorter than the size is one window), and the full window (the first M
tokens). Texts: the first 16 SciFact documents (each window) and the
two shortest QMSum meetings (every fifth window and every window no segment
holds whole, so that the overlap path is covered), from msrag's cache
(scripts/fetch-data.sh).

Vectors are stored as float16 (relative error 2^-11 per component; the Go test
renormalises them, which keeps the cosine within 1e-7 of float32's).

Run (after scripts/setup.sh and scripts/fetch-model.sh NAME):

    python3 -m venv $HOME/.cache/msrag/venv/embed
    $HOME/.cache/msrag/venv/embed/bin/pip install onnxruntime==1.30.0 tokenizers numpy
    $HOME/.cache/msrag/venv/embed/bin/python scripts/gen_late_golden.py
"""
import argparse
import gzip
import json
import os

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
WINDOWS = {"e5-small-v2": [100, 200, 500], "all-minilm-l6-v2": [100, 200, 254]}


def read_docs(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def full_text(d):
    return d["title"] + " " + d["text"] if d.get("title") else d["text"]


def segments(n, size, overlap):
    if n <= size:
        return [(0, n)]
    out, start = [], 0
    while start + size < n:
        out.append((start, start + size))
        start += size - overlap
    out.append((n - size, n))
    return out


def windows(n, size):
    out, start = [], 0
    while start < n:
        if start + size >= n:
            out.append((max(0, n - size), n))
            break
        out.append((start, start + size))
        start += size
    return out


def pieces(segs, a, b):
    """[(segment, start, end)] of window [a, b), and whether one segment holds it."""
    best, most = None, -1
    for i, (s, e) in enumerate(segs):
        if s <= a and b <= e and min(a - s, e - b) > most:
            best, most = i, min(a - s, e - b)
    if best is not None:
        return [(best, a, b)], True
    out = []
    for t in range(a, b):
        o, m = None, -1
        for i, (s, e) in enumerate(segs):
            if s <= t < e and min(t - s, e - 1 - t) > m:
                o, m = i, min(t - s, e - 1 - t)
        if out and out[-1][0] == o:
            out[-1] = (o, out[-1][1], t + 1)
        else:
            out.append((o, t, t + 1))
    return out, False


class Model:
    def __init__(self, cache, name, threads):
        d = os.path.join(cache, "models", name)
        self.info = json.load(open(os.path.join(d, "msrag-model.json")))
        self.tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.sess.get_inputs()}
        one = self.tok.encode("x")
        mask = one.special_tokens_mask
        lead = mask.index(0)
        self.lead_ids, self.trail_ids = one.ids[:lead], one.ids[lead + 1:]
        self.prefix = self.tok.encode(self.info["passage_prefix"], add_special_tokens=False).ids if self.info["passage_prefix"] else []
        self.size = self.info["max_tokens"] - len(self.lead_ids) - len(self.trail_ids) - len(self.prefix)
        self.overlap = self.size // 4

    def states(self, content):
        ids = self.lead_ids + self.prefix + content + self.trail_ids
        x = np.array([ids], dtype=np.int64)
        feed = {"input_ids": x, "attention_mask": np.ones_like(x)}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(x)
        h = self.sess.run([self.info["output"]], feed)[0][0]
        return h, len(self.lead_ids) + len(self.prefix)

    def late_vectors(self, text, wins):
        ids = self.tok.encode(text, add_special_tokens=False).ids
        segs = segments(len(ids), self.size, self.overlap)
        st = [self.states(ids[s:e]) for s, e in segs]
        out = []
        for a, b in wins:
            ps, held = pieces(segs, a, b)
            acc, count = np.zeros(self.info["dims"], dtype=np.float64), 0
            for i, pa, pb in ps:
                h, lead = st[i]
                s, e = segs[i]
                lo, hi = lead + pa - s, lead + pb - s
                if pa == s:
                    lo = 0
                if pb == e:
                    hi = len(h)
                acc += h[lo:hi].astype(np.float64).sum(axis=0)
                count += hi - lo
            v = acc / count
            out.append((v / max(np.linalg.norm(v), 1e-12), held))
        return len(ids), out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=list(WINDOWS))
    ap.add_argument("--data", default=os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data"))
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    sci = read_docs(os.path.join(args.data, "scifact/corpus.jsonl.gz"))[:16]
    qm = sorted(read_docs(os.path.join(args.data, "qmsum/corpus.jsonl.gz")), key=lambda d: len(d["text"]))[:2]
    for name in args.models:
        m = Model(args.cache, name, args.threads)
        rows, vecs = [], []
        for ds, docs in (("scifact", sci), ("qmsum", qm)):
            for d in docs:
                n = len(m.tok.encode(full_text(d), add_special_tokens=False).ids)
                segs = segments(n, m.size, m.overlap)
                wins = [("full", 0, min(n, m.size))]
                for size in WINDOWS[name]:
                    for k, (a, b) in enumerate(windows(n, size)):
                        if ds == "scifact" or k % 5 == 0 or not pieces(segs, a, b)[1]:
                            wins.append(("w%d" % size, a, b))
                _, out = m.late_vectors(full_text(d), [(a, b) for _, a, b in wins])
                for (w, a, b), (v, held) in zip(wins, out):
                    rows.append({"dataset": ds, "doc": d["_id"], "window": w, "start": a, "end": b, "held": held, "doc_tokens": n})
                    vecs.append(v)
        out = os.path.join(ROOT, "testdata", "late", name)
        np.asarray(vecs, dtype="<f2").tofile(out + ".f16")
        meta = {"model": name, "dims": m.info["dims"], "windows": WINDOWS[name], "segment_tokens": m.size,
                "overlap": m.overlap, "vectors_file": name + ".f16", "generator": "scripts/gen_late_golden.py",
                "onnxruntime": ort.__version__, "chunks": rows}
        with open(out + ".json", "w") as f:
            json.dump(meta, f, indent=0)
            f.write("\n")
        split = sum(not r["held"] for r in rows)
        print("%s: %d windows (%d across segment borders), segments of %d sharing %d" % (name, len(rows), split, m.size, m.overlap))


if __name__ == "__main__":
    main()
