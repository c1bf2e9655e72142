#!/usr/bin/env python3
"""Writes eval/testdata/rules/: a small retrieval run whose queries are
documents of their own corpus (each query's own id is among its retrieved
documents, often first, as in ArguAna), its qrels (never a query to itself),
and the scores mteb's own RetrievalEvaluator.evaluate gives it under each
combination of MTEB's per-task rules (ignore_identical_ids,
skip_first_result). eval's TestRulesMatchMTEB compares Rules.Apply and
Evaluate with them.

    python3 -m venv $HOME/.cache/msrag/venv/mteb && $HOME/.cache/msrag/venv/mteb/bin/pip install mteb==2.26.24
    $HOME/.cache/msrag/venv/mteb/bin/python scripts/gen_rules_golden.py

The scores are MTEB's, rounded as MTEB rounds them (5 decimals, MRR not).
"""
import copy
import json
import os
import random

import mteb
from mteb._evaluators.retrieval_evaluator import RetrievalEvaluator

PINNED = "2.26.24"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "eval", "testdata", "rules")
K_VALUES = [1, 3, 5, 10, 20, 100, 1000]
FAMILIES = {"ndcg_cut": ("ndcg", "NDCG"), "map_cut": ("map", "MAP"), "recall": ("recall", "Recall"),
            "P": ("precision", "P"), "mrr": ("mrr", "MRR"), "cdr": ("hit_rate", "HitRate")}


def make(rng):
    docs = ["arg%02d" % i for i in range(40)]
    queries = docs[:12]  # the queries are arguments of the corpus
    qrels, run = {}, {}
    for i, q in enumerate(queries):
        others = [d for d in docs if d != q]
        rel = rng.sample(others, rng.randint(1, 3))
        qrels[q] = {d: rng.choice([1, 1, 2]) for d in rel}
        hits = rng.sample(others, 25)
        scores = {d: round(rng.uniform(0.1, 0.8), 3) for d in hits}
        if i % 4 != 3:  # most queries retrieve themselves, first
            scores[q] = 0.99
        elif i % 8 == 3:  # one retrieves itself lower down
            scores[q] = 0.5
        # else: one does not retrieve itself at all
        run[q] = scores
    qrels["arg39"] = {"arg00": 1}  # a query not in the run: unscored
    return qrels, run


def evaluate(qrels, run, ident, skip):
    scored = {q: h for q, h in copy.deepcopy(run).items() if q in qrels}
    r = RetrievalEvaluator.evaluate(None, qrels, scored, K_VALUES, ignore_identical_ids=ident, skip_first_result=skip)
    out = {}
    for msrag, (attr, label) in FAMILIES.items():
        vals = getattr(r, attr)
        for k in K_VALUES:
            key = "%s@%d" % (label, k)
            if key in vals:
                out["%s_%d" % (msrag, k)] = vals[key]
    return out


def main():
    if mteb.__version__ != PINNED:
        raise SystemExit("gen_rules_golden: mteb %s installed, %s pinned" % (mteb.__version__, PINNED))
    qrels, run = make(random.Random(37))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "self.qrels"), "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in sorted(qrels):
            for d in sorted(qrels[q]):
                f.write("%s\t%s\t%d\n" % (q, d, qrels[q][d]))
    with open(os.path.join(OUT, "self.run"), "w") as f:
        for q in sorted(run):
            ranked = sorted(run[q].items(), key=lambda x: (-x[1], x[0]))
            for rank, (d, s) in enumerate(ranked, 1):
                f.write("%s Q0 %s %d %r msrag\n" % (q, d, rank, s))
    golden = []
    for ident in (False, True):
        for skip in (False, True):
            golden.append({"rules": {"ignore_identical_ids": ident, "skip_first_result": skip},
                           "mean": evaluate(qrels, run, ident, skip)})
    with open(os.path.join(OUT, "self.json"), "w") as f:
        json.dump({"mteb_version": mteb.__version__, "cases": golden}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
