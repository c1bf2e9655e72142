#!/usr/bin/env python3
"""Writes the golden files of the lexical package's tests, computed by bm25s
(BM25, method "lucene") with PyStemmer's English stemmer and the stop word list
of lexical/stopwords_en.txt, independently of the Go code under test.

Run (from the repository root):

    python3 -m venv $MSRAG_CACHE/venv/lexical
    $MSRAG_CACHE/venv/lexical/bin/pip install bm25s PyStemmer==2.0.1 numpy scipy pytrec-eval-terrier
    go test ./lexical -run TestExportChunks -export-chunks CHUNKS   # absolute: go test runs in lexical/
    $MSRAG_CACHE/venv/lexical/bin/python scripts/gen_lexical_golden.py --chunks CHUNKS

PyStemmer is pinned to 2.0.1: its Snowball English is the one of
kljensen/snowball v0.10.0 (Snowball 2.0); PyStemmer 3.x stems some words
differently. The Unicode tables of the Go analyzer come from this Python
(scripts/gen_lexical_unicode.py): the script checks the Unicode version.

Outputs, under lexical/testdata/:
  * analyzer.json.gz: texts (SciFact, QMSum, hand-made hard cases) and their
    terms under "english" (stop words, stemming) and "none" (neither);
  * stems.json.gz: every distinct word of SciFact, NFCorpus and QMSum (corpus
    and queries, analyzer "none") with its PyStemmer stem;
  * windows.json.gz: per dataset (scifact, qmsum) and window (64, 128, 254
    tokens of all-MiniLM-L6-v2, chunks exported by the Go test above):
    the chunk count, a sha256 of the chunk texts, the total length in terms,
    and for a sample of 50 queries their terms and top-100 rows with float32
    scores (score descending, then row ascending), rows of score 0 left out;
  * doclevel.json: nDCG@10 (pytrec_eval) of whole-document BM25 (title + " " +
    text) on the test splits of SciFact and NFCorpus, top 100 per query.
"""
import argparse
import gzip
import hashlib
import json
import os
import random
import sys
import unicodedata
from importlib.metadata import version

import bm25s
import numpy as np
import pytrec_eval
import Stemmer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data")
OUT = os.path.join(ROOT, "lexical", "testdata")
K1, B, TOPK, NQ = 0.9, 0.4, 100, 50
WINDOWS = [64, 128, 254]


def stop_words():
    words = []
    with open(os.path.join(ROOT, "lexical", "stopwords_en.txt"), encoding="utf-8") as f:
        for line in f:
            w = line.strip()
            if w and not w.startswith("#"):
                words.append(w)
    return words


STOP = stop_words()
STEMMER = Stemmer.Stemmer("english")


def analyse(texts, english=True):
    """Terms of each text, as lists of strings."""
    return bm25s.tokenize(texts, stopwords=STOP if english else None, stemmer=STEMMER if english else None,
                          return_ids=False, show_progress=False)


def write_json_gz(name, obj):
    """Writes obj as gzip-compressed JSON, with no time stamp, so that a rerun gives the same bytes."""
    with open(os.path.join(OUT, name), "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as z:
        z.write(json.dumps(obj, ensure_ascii=False).encode("utf-8"))


def read_jsonl_gz(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def full(d):
    return d["title"] + " " + d["text"] if d.get("title") else d["text"]


POOL = [
    "a", "Z", "é", "e\u0301", "A\u030a", "\u0301", "ß", "İ", "ı", "Σ", "ς", "ΣΑΣ", "ﬁ", "Ⅻ", "①", "²", "٣", "½",
    "東", "京", "中文", "\U00020000", "ｈｅｌｌｏ", "ｶﾀｶﾅ", "한국어", "हिन्दी", "ไทย", "עברית", "العربية", "\u200f",
    "😀", "👩\u200d💻", "\u200b", "\u200d", "\ufeff", "\u00ad", "\x00", "\x85", "\u2028", "\u00a0", "\u3000",
    " ", "\t", "\n", "0", "123", "3.14159", "1,000,000", "!", "...", "-", "--", "(", ")", "_", "__", "'", "’", "`", "^",
    ".", ":", "hello", "Hello", "HELLO", "running", "runs", "generously", "tokenization", "naïve", "café", "Zürich",
    "Ångström", "résumé", "coöperate", "O'Neill's", "don't", "state-of-the-art", "e-mail", "x_y", "__init__", "the", "The",
    "THIS", "is", "and", "İstanbul", "ΟΔΟΣ", "Straße", "ǅ", "ᾈ", "K", "Å", "µ", "ΐ",
]


def hard_cases(rnd):
    out = ["", "   ", "a b c", "the and of", "The cats ARE running; the dogs ran.", "İstanbul ΟΔΟΣ ΟΔΟΣ's Σ aΣ aΣb",
           "state-of-the-art e-mail O'Neill's don't can't won't", "__init__ x_y _a a_ 1_000", "3.14159 1,000,000 2nd 10th ²³ ½",
           "ｈｅｌｌｏ ＷＯＲＬＤ", "naïve café résumé coöperate Zürich Ångström", "ﬁnancial ﬂow", "Ⅻ ① ⅻ", "x" * 1000,
           "ab" * 300, "antidisestablishmentarianism " * 3, "generously generous generosity generate generation"]
    for _ in range(300):
        out.append("".join(rnd.choice(POOL) for _ in range(rnd.randint(1, 12))))
    return out


def analyzer_golden():
    rnd = random.Random(20261201)
    texts = []
    docs = read_jsonl_gz(os.path.join(DATA, "scifact", "corpus.jsonl.gz"))
    texts += [d["text"] for d in docs[:100]] + [d["title"] for d in docs[1000:1100]]
    queries = read_jsonl_gz(os.path.join(DATA, "scifact", "queries.jsonl.gz"))
    texts += [q["text"] for q in queries[:200]]
    qdocs = read_jsonl_gz(os.path.join(DATA, "qmsum", "corpus.jsonl.gz"))
    lines = [l for d in qdocs[:30] for l in d["text"].split("\n") if l.strip()]
    texts += rnd.sample(lines, 300)
    texts += hard_cases(rnd)
    out = {"texts": texts, "english": analyse(texts, True), "none": analyse(texts, False)}
    write_json_gz("analyzer.json.gz", out)
    print(f"analyzer: {len(texts)} texts")


def stems_golden():
    """Every distinct word of SciFact, NFCorpus and QMSum with PyStemmer's stem."""
    words = set()
    for name in ("scifact", "nfcorpus", "qmsum"):
        docs = read_jsonl_gz(os.path.join(DATA, name, "corpus.jsonl.gz"))
        queries = read_jsonl_gz(os.path.join(DATA, name, "queries.jsonl.gz"))
        for ts in analyse([full(d) for d in docs] + [q["text"] for q in queries], english=False):
            words.update(ts)
    words = sorted(words)
    stems = STEMMER.stemWords(words)
    write_json_gz("stems.json.gz", {"words": words, "stems": stems})
    print(f"stems: {len(words)} words, {sum(w != s for w, s in zip(words, stems))} changed by stemming")


def index(token_lists):
    r = bm25s.BM25(k1=K1, b=B, method="lucene")
    r.index(token_lists, show_progress=False)
    return r


def top(r, terms, k):
    """Rows and float32 scores of the k best rows (score desc, row asc), score > 0 only."""
    if not any(t in r.vocab_dict for t in terms):
        return [], []
    s = r.get_scores(terms).astype(np.float32)
    order = np.lexsort((np.arange(len(s)), -s))[:k]
    order = [int(i) for i in order if s[i] > 0]
    return order, [float(s[i]) for i in order]


def sample_queries(name, split):
    queries = {q["_id"]: q["text"] for q in read_jsonl_gz(os.path.join(DATA, name, "queries.jsonl.gz"))}
    ids = []
    with open(os.path.join(DATA, name, "qrels", split + ".tsv")) as f:
        for line in f:
            qid = line.split("\t")[0]
            if qid in queries and qid not in ids:
                ids.append(qid)
    step = max(1, len(ids) // NQ)
    return [(q, queries[q]) for q in ids[::step][:NQ]]


def windows_golden(chunks):
    out = {}
    for name, split in (("scifact", "test"), ("qmsum", "dev")):
        qs = sample_queries(name, split)
        qterms = analyse([t for _, t in qs])
        out[name] = {}
        for w in WINDOWS:
            with open(os.path.join(chunks, name, f"w{w}.jsonl"), encoding="utf-8") as f:
                texts = [json.loads(l) for l in f]
            h = hashlib.sha256()
            for t in texts:
                h.update(t.encode("utf-8") + b"\0")
            terms = analyse(texts)
            r = index(terms)
            entry = {"chunks": len(texts), "sha256": h.hexdigest(), "tokens": sum(len(t) for t in terms), "queries": []}
            for (qid, qtext), qt in zip(qs, qterms):
                rows, scores = top(r, qt, TOPK)
                entry["queries"].append({"id": qid, "text": qtext, "terms": qt, "rows": rows, "scores": scores})
            out[name][str(w)] = entry
            print(f"{name} w{w}: {len(texts)} chunks, {entry['tokens']} terms")
    write_json_gz("windows.json.gz", out)


def doclevel_golden():
    out = {}
    for name in ("scifact", "nfcorpus"):
        docs = read_jsonl_gz(os.path.join(DATA, name, "corpus.jsonl.gz"))
        r = index(analyse([full(d) for d in docs]))
        queries = {q["_id"]: q["text"] for q in read_jsonl_gz(os.path.join(DATA, name, "queries.jsonl.gz"))}
        qrels = {}
        with open(os.path.join(DATA, name, "qrels", "test.tsv")) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if p[0] == "query-id":
                    continue
                qrels.setdefault(p[0], {})[p[1]] = int(p[2])
        ids = [q for q in qrels if q in queries]
        run = {}
        for qid, terms in zip(ids, analyse([queries[q] for q in ids])):
            rows, scores = top(r, terms, TOPK)
            if rows:
                run[qid] = {docs[i]["_id"]: s for i, s in zip(rows, scores)}
        ev = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in run}, {"ndcg_cut.10"})
        per = ev.evaluate(run)
        ndcg = float(np.mean([v["ndcg_cut_10"] for v in per.values()]))
        out[name] = {"ndcg@10": ndcg, "queries": len(per), "docs": len(docs)}
        print(f"{name}: nDCG@10 {ndcg:.4f} over {len(per)} queries")
    with open(os.path.join(OUT, "doclevel.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", required=True, help="directory written by go test ./lexical -export-chunks")
    args = ap.parse_args()
    if unicodedata.unidata_version != "14.0.0" or version("PyStemmer") != "2.0.1":
        sys.exit(f"want Unicode 14.0.0 (Python 3.11) and PyStemmer 2.0.1, have {unicodedata.unidata_version} and {version('PyStemmer')}")
    if sorted(STOP) != sorted(bm25s.stopwords.STOPWORDS_EN):
        print("note: lexical/stopwords_en.txt differs from bm25s's English list")
    os.makedirs(OUT, exist_ok=True)
    analyzer_golden()
    stems_golden()
    windows_golden(args.chunks)
    doclevel_golden()


if __name__ == "__main__":
    main()
