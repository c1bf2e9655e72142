#!/usr/bin/env python3
"""Writes the golden files of the eval package's tests: small tricky runs plus one
larger random run, each scored by pytrec_eval (the trec_eval C code) and by MTEB's
MRR@k formula, written out independently of the Go code under test.

Run (from the repository root):

    scripts/setup-eval.sh    # the venv, pytrec_eval-terrier 0.5.11 pinned by hash
    $HOME/.cache/msrag/venv/eval/bin/python scripts/gen_eval_golden.py

Outputs, under eval/testdata/golden/: <case>.qrels (BEIR TSV or TREC 4-column),
<case>.run (TREC run), <case>.json ({"num_queries", "mean", "per_query"}).

Conventions checked against pytrec_eval and MTEB:
  * a run is sorted by score descending, ties broken by doc id descending (byte
    order), whatever the rank column says; trec_eval holds scores as C floats, so
    scores equal in single precision are ties; MTEB's mrr() sorts by (score, doc
    id) in reverse in double precision, the same order but for such near-ties;
  * a document is relevant when its level is > 0; nDCG gains are the levels;
  * only queries present in both qrels and run are scored; the mean is taken over
    them (MTEB divides by the number of queries pytrec_eval returns);
  * mrr_k is MTEB's: 1/rank of the first relevant document within the top k;
  * cdr_K (correct-document recall) is 1 when any relevant document is in the
    top K, else 0.
"""
import json
import os
import random
import struct
import sys

import pytrec_eval

KS = [1, 3, 5, 10, 20, 100, 1000]
CDR_KS = [1, 2, 3, 5, 10]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eval", "testdata", "golden")


def metric_names():
    names = []
    for fam in ("ndcg_cut", "map_cut", "recall", "P", "mrr"):
        names += ["%s_%d" % (fam, k) for k in KS]
    names += ["cdr_%d" % k for k in CDR_KS]
    names.append("recip_rank")
    return names


def as_float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def trec_order(doc_scores):
    # score descending, then doc id descending, like trec_eval's comp_sim_docno;
    # trec_eval reads scores into a C float (TEXT_RESULTS.sim), so it compares
    # them in single precision
    return sorted(doc_scores.items(), key=lambda it: (as_float32(it[1]), it[0].encode()), reverse=True)


def mteb_order(doc_scores):
    # MTEB sorts Python floats: (score, doc id) in reverse, double precision
    return sorted(doc_scores.items(), key=lambda it: (it[1], it[0]), reverse=True)


def mteb_mrr(rels, doc_scores, k):
    # MTEB's retrieval_metrics.mrr, written out again for one query and one k
    top = mteb_order(doc_scores)[:k]
    relevant = {d for d, r in rels.items() if r > 0}
    for rank, (doc, _) in enumerate(top):
        if doc in relevant:
            return 1.0 / (rank + 1)
    return 0.0


def cdr(rels, doc_scores, k):
    top = [d for d, _ in trec_order(doc_scores)[:k]]
    return 1.0 if any(rels.get(d, 0) > 0 for d in top) else 0.0


def score(qrels, run):
    measures = {
        "ndcg_cut." + ",".join(map(str, KS)),
        "map_cut." + ",".join(map(str, KS)),
        "recall." + ",".join(map(str, KS)),
        "P." + ",".join(map(str, KS)),
        "recip_rank",
    }
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for qid, vals in per_query.items():
        for k in KS:
            vals["mrr_%d" % k] = mteb_mrr(qrels[qid], run[qid], k)
        for k in CDR_KS:
            vals["cdr_%d" % k] = cdr(qrels[qid], run[qid], k)
        for name in list(vals):
            if name not in metric_names():
                del vals[name]
    mean = {}
    for name in metric_names():
        vals = [per_query[q][name] for q in sorted(per_query)]
        mean[name] = sum(vals) / len(vals) if vals else 0.0
    return {"num_queries": len(per_query), "mean": mean, "per_query": per_query}


def write_qrels(path, qrels, fmt):
    with open(path, "w") as f:
        if fmt == "tsv":
            f.write("query-id\tcorpus-id\tscore\n")
        for q in qrels:
            for d, r in qrels[q].items():
                if fmt == "tsv":
                    f.write("%s\t%s\t%d\n" % (q, d, r))
                else:
                    f.write("%s 0 %s %d\n" % (q, d, r))


def write_run(path, run, shuffle_rank=None):
    # The rank column is deliberately not the trec order in some cases: trec_eval
    # ignores it, and so must the reader.
    with open(path, "w") as f:
        for q in run:
            items = list(run[q].items())
            if shuffle_rank is not None:
                shuffle_rank.shuffle(items)
            for i, (d, s) in enumerate(items):
                f.write("%s Q0 %s %d %s golden\n" % (q, d, i + 1, repr(float(s))))


def case(name, qrels, run, fmt="tsv", shuffle_rank=None):
    write_qrels(os.path.join(OUT, name + ".qrels"), qrels, fmt)
    write_run(os.path.join(OUT, name + ".run"), run, shuffle_rank)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(score(qrels, run), f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    # Ties: equal scores everywhere, ordering decided by doc id alone.
    case("ties",
         {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"a": 1, "b": 1}, "q3": {"x10": 1, "x9": 1}},
         {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.5, "zz": 0.9},
          "q2": {"a": 1.0, "b": 1.0, "c": 1.0, "B": 1.0, "aa": 1.0},
          "q3": {"x1": 2.0, "x10": 2.0, "x9": 2.0, "x2": 1.0}},
         shuffle_rank=random.Random(7))
    # Queries without relevant documents, queries only in qrels, queries only in the run.
    case("missing",
         {"q1": {"d1": 0, "d2": 0}, "q2": {"d1": 1}, "q3": {"d5": 1}, "q4": {"e": 2, "f": 0}},
         {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d2": 1.0, "d1": 0.5},
          "q9": {"d1": 1.0}, "q4": {"f": 0.1, "g": 0.05}},
         fmt="trec")
    # Graded relevance, a negative level, fewer results than k, unjudged docs.
    case("graded",
         {"q1": {"a": 3, "b": 2, "c": 1, "d": 0, "e": 2, "n": -1},
          "q2": {"a": 1, "b": 4},
          "q3": {"z": 2}},
         {"q1": {"n": 9.0, "x": 8.0, "c": 7.0, "a": 6.5, "y": 6.0, "e": 5.0, "d": 4.0, "b": -1.0},
          "q2": {"b": 1e-3, "a": 1e-3, "u": 2e-3},
          "q3": {"z": -5.0}},
         fmt="trec", shuffle_rank=random.Random(3))
    # Near-ties: scores one bit apart in double precision, equal as float32 (sums of
    # reciprocal ranks added in another order). trec_eval ranks them by doc id,
    # MTEB's MRR by the double score.
    case("neartie",
         {"q1": {"a": 1}, "q2": {"Bmr015": 1}, "q3": {"b": 1}},
         {"q1": {"a": 0.46590909090909094, "b": 0.4659090909090909, "c": 0.9},
          "q2": {"Bed002": 0.65, "Bmr015": 0.6499999999999999, "Bmr016": 2.5},
          "q3": {"a": 0.5000001, "b": 0.5, "c": 0.1}},
         fmt="trec")
    # A realistic run: 120 queries x up to 1000 docs from a 5,000-doc collection, graded
    # qrels of 1-6 docs per query, scores rounded so ties occur.
    rng = random.Random(20240601)
    docs = ["doc%d" % i for i in range(5000)]
    qrels, run = {}, {}
    for i in range(120):
        q = "Q%03d" % i
        rel = rng.sample(docs, rng.randint(1, 6))
        qrels[q] = {d: rng.choice([0, 1, 1, 2]) for d in rel}
        if i % 17 == 0:
            qrels[q] = {d: 0 for d in rel}
        if i % 23 == 5:
            continue  # a query of the qrels the run misses
        n = rng.choice([5, 40, 150, 1000])
        got = set(rng.sample(docs, n))
        got.update(d for d in rel if rng.random() < 0.6)
        run[q] = {d: round(rng.random(), 2) for d in sorted(got)}  # a set: sorted, so the draws do not depend on string hashing
    case("random", qrels, run)


if __name__ == "__main__":
    sys.exit(main())
