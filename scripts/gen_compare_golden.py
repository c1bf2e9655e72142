#!/usr/bin/env python3
"""Writes the golden values of msrag score and msrag compare: metrics by ranx and pytrec_eval,
p-values of the paired t-test and of Fisher's randomization test by ranx (and the latter exactly,
by enumeration here), and Holm's adjustment by statsmodels, on runs made here and on msrag's own
runs (eval/testdata/compare/sf40: runs of msrag eval on a 240-document, 40-query subset of
SciFact's test split, all-minilm-l6-v2-int8, --k 20).

    python3 -m venv $HOME/.cache/msrag/venv/ranx
    $HOME/.cache/msrag/venv/ranx/bin/pip install --require-hashes -r scripts/compare-requirements.txt
    $HOME/.cache/msrag/venv/ranx/bin/python scripts/gen_compare_golden.py eval/testdata/compare

For each set (a directory with qrels.tsv and runs *.trec; the synthetic sets are written first)
it writes SET.golden.json:

  metrics   run -> msrag metric -> {"mean", "ranx_mean"}: means by pytrec_eval (ndcg_cut, map_cut,
            recall, P; mrr and cdr by their definitions) and by ranx (ndcg, map, recall, precision,
            mrr, hit_rate at the same cutoffs); for ndcg_cut_10 also "per_query", "ranx_per_query"
  compare   for the first run (the baseline) against each other run, on ndcg_cut_10:
            "p_t" (ranx "student": scipy's ttest_rel), "p_fisher_ranx" (ranx "fisher",
            n_permutations=N_PERMUTATIONS, random_seed=42), "p_fisher_exact" (every assignment of
            signs, enumerated here, for at most 16 queries), and "p_t_holm", "p_fisher_ranx_holm"
            (statsmodels multipletests, method "holm", over the baseline's comparisons)

msrag's randomization test is exact up to 30 queries and draws 10000 assignments beyond, so the
comparable values are: p_t exactly (1e-9); p_fisher_exact exactly; p_fisher_ranx within Monte
Carlo error of both estimates. The runs here have distinct scores, so no tie-breaking rule
matters; msrag's runs may tie (RRF), where ranx and trec_eval order tied documents differently:
the test compares ranx's metrics only where a query has no tie.
"""
import importlib.metadata
import itertools
import json
import os
import sys

import numpy as np
import pytrec_eval
import ranx
from statsmodels.stats.multitest import multipletests

N_PERMUTATIONS = 10000
CUTOFFS = [1, 3, 5, 10, 20]
METRIC = "ndcg_cut_10"


def ranx_name(m):
    fam, _, k = m.rpartition("_")
    return {"ndcg_cut": "ndcg", "map_cut": "map", "recall": "recall", "P": "precision",
            "mrr": "mrr", "cdr": "hit_rate"}[fam] + "@" + k


def msrag_metrics():
    out = []
    for k in CUTOFFS:
        out += ["ndcg_cut_%d" % k, "map_cut_%d" % k, "recall_%d" % k, "P_%d" % k, "mrr_%d" % k, "cdr_%d" % k]
    return out


def read_qrels(path):
    q = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            fields = line.split()
            if n == 0 and fields[-1] == "score":
                continue
            q.setdefault(fields[0], {})[fields[-2]] = int(fields[-1])
    return q


def read_run(path):
    r = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            qid, _, doc, _, score, _ = line.split()
            r.setdefault(qid, {})[doc] = float(score)
    return r


def pytrec(qrels, run):
    """msrag metric -> query -> value, by pytrec_eval, and mrr/cdr by their definitions."""
    measures = set()
    for k in CUTOFFS:
        measures |= {"ndcg_cut.%d" % k, "map_cut.%d" % k, "recall.%d" % k, "P.%d" % k}
    ev = pytrec_eval.RelevanceEvaluator(qrels, measures)
    res = ev.evaluate(run)
    out = {m: {} for m in msrag_metrics()}
    for qid, vals in res.items():
        ranked = sorted(run[qid].items(), key=lambda x: (x[1], x[0]), reverse=True)
        rel = [qrels[qid].get(d, 0) > 0 for d, _ in ranked]
        for k in CUTOFFS:
            for fam in ("ndcg_cut", "map_cut", "recall", "P"):
                out["%s_%d" % (fam, k)][qid] = vals["%s_%d" % (fam, k)]
            first = next((i for i, r in enumerate(rel[:k]) if r), None)
            out["mrr_%d" % k][qid] = 0.0 if first is None else 1.0 / (first + 1)
            out["cdr_%d" % k][qid] = 1.0 if first is not None else 0.0
    return out


def exact_fisher(d):
    d = np.asarray(d)
    obs = abs(d.sum())
    tol = 1e-12 * np.abs(d).sum()
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        hits += abs(float(np.dot(signs, d))) >= obs - tol
    return hits / 2 ** len(d)


def golden(dirpath, name):
    qrels = read_qrels(os.path.join(dirpath, "qrels.tsv"))
    names = sorted(f[:-5] for f in os.listdir(dirpath) if f.endswith(".trec"))
    order = json.load(open(os.path.join(dirpath, "order.json"))) if os.path.exists(os.path.join(dirpath, "order.json")) else names
    runs = {n: read_run(os.path.join(dirpath, n + ".trec")) for n in order}
    rq = ranx.Qrels(qrels)
    out = {"set": name, "queries": len(qrels), "runs": order, "metric": METRIC, "n_permutations": N_PERMUTATIONS,
           "versions": {p: importlib.metadata.version(p) for p in ("ranx", "numpy", "scipy", "statsmodels", "pytrec_eval-terrier")}, "metrics": {}, "compare": {}}
    ranx_runs = []
    qids = sorted(qrels)
    for n in order:
        pt = pytrec(qrels, runs[n])
        rr = ranx.Run(runs[n], name=n)
        ranx_runs.append(rr)
        per = ranx.evaluate(rq, rr, [ranx_name(m) for m in msrag_metrics()], return_mean=False, make_comparable=True)
        rqids = list(rq.keys())
        out["metrics"][n] = {}
        for m in msrag_metrics():
            vals = per[ranx_name(m)]
            rp = {q: float(v) for q, v in zip(rqids, vals)}
            out["metrics"][n][m] = {"mean": float(np.mean([pt[m][q] for q in qids])), "ranx_mean": float(np.mean(vals))}
            if m == METRIC:
                out["metrics"][n][m].update(per_query=pt[m], ranx_per_query=rp)
    base = order[0]
    reports = {t: ranx.compare(rq, ranx_runs, [ranx_name(METRIC)], stat_test=t, n_permutations=N_PERMUTATIONS,
                               random_seed=42, max_p=0.05, make_comparable=True) for t in ("student", "fisher")}
    pts, pfs = [], []
    for n in order[1:]:
        c = {}
        for t, key in (("student", "p_t"), ("fisher", "p_fisher_ranx")):
            c[key] = float(reports[t].comparisons[base, n][ranx_name(METRIC)]["p_value"])
        d = [out["metrics"][base][METRIC]["per_query"][q] - out["metrics"][n][METRIC]["per_query"][q] for q in qids]
        if len(d) <= 16:
            c["p_fisher_exact"] = exact_fisher(d)
        out["compare"][n] = c
        pts.append(c["p_t"])
        pfs.append(c["p_fisher_ranx"])
    if len(pts) > 1:
        for key, ps in (("p_t_holm", pts), ("p_fisher_ranx_holm", pfs)):
            adj = multipletests(ps, method="holm")[1]
            for n, p in zip(order[1:], adj):
                out["compare"][n][key] = float(p)
    with open(os.path.join(os.path.dirname(dirpath.rstrip("/")), name + ".golden.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def synthetic(dirpath, nq, ndocs, nruns, seed):
    """Writes qrels and runs with distinct scores: run i ranks documents by their relevance plus
    noise, noisier for later runs."""
    rng = np.random.default_rng(seed)
    os.makedirs(dirpath, exist_ok=True)
    rel = {}
    with open(os.path.join(dirpath, "qrels.tsv"), "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in range(nq):
            docs = rng.choice(ndocs, size=rng.integers(1, 6), replace=False)
            for d in docs:
                lvl = int(rng.integers(1, 3))
                rel[("q%d" % q, "d%d" % d)] = lvl
                f.write("q%d\td%d\t%d\n" % (q, d, lvl))
    order = []
    for i in range(nruns):
        name = "run%d" % i
        order.append(name)
        with open(os.path.join(dirpath, name + ".trec"), "w") as f:
            for q in range(nq):
                docs = rng.choice(ndocs, size=20, replace=False)
                scores = [rel.get(("q%d" % q, "d%d" % d), 0) + rng.normal(0, 0.5 + 0.5 * i) for d in docs]
                ranked = sorted(zip(scores, docs), reverse=True)
                for r, (s, d) in enumerate(ranked, 1):
                    f.write("q%d Q0 d%d %d %.17g %s\n" % (q, d, r, s, name))
    json.dump(order, open(os.path.join(dirpath, "order.json"), "w"))


def main():
    root = sys.argv[1]
    synthetic(os.path.join(root, "small"), 12, 40, 4, 1)
    synthetic(os.path.join(root, "large"), 200, 60, 4, 2)
    with open(os.path.join(root, "sf40", "order.json"), "w") as f:
        json.dump(["rrf", "hybrid", "lexical-rrf", "w128", "bm25-doc"], f)
    for name in ("small", "large", "sf40"):
        golden(os.path.join(root, name), name)


if __name__ == "__main__":
    main()
