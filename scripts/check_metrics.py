#!/usr/bin/env python3
"""Checks msrag's evaluation numbers against pytrec_eval and MTEB's MRR formula,
and with --mteb against MTEB's own retrieval evaluator as well.

    $HOME/.cache/msrag/venv/eval/bin/python scripts/check_metrics.py \
        --qrels data/scifact/qrels/test.tsv --results results.json w100.run rrf.run

(the venv: python3 -m venv $HOME/.cache/msrag/venv/eval && $HOME/.cache/msrag/venv/eval/bin/pip install
pytrec-eval-terrier==0.5.11; in msrag's checkout, scripts/setup-eval.sh makes it with every wheel pinned
by hash).

--results is the JSON msrag's eval package writes (eval.Results): either one
Results object, for a single run file, or an object mapping a run name to a
Results object, where a run file's name is its base name without the last
extension (w100.run -> "w100"). For every run, every metric the Results list is
recomputed here from the qrels and the run file: ndcg_cut_k, map_cut_k, recall_k,
P_k and recip_rank by pytrec_eval; mrr_k (or its synonym recip_rank_k) by MTEB's
formula; cdr_k (1 when a relevant document is in the top k) directly. Per-query
values and means must agree within --tol (1e-9), and the scored queries must be
the same. Prints a table; exits 1 on any mismatch, 2 on bad input.

--mteb also runs MTEB's evaluator itself (mteb 2.x,
mteb._evaluators.retrieval_metrics.calculate_retrieval_scores: pytrec_eval for
NDCG/MAP/Recall/P/HitRate, its own mrr()) on the same run and qrels and compares
its means with msrag's: NDCG@k, MAP@k, Recall@k, P@k and HitRate@k (= cdr_k),
which MTEB rounds to 5 decimals (so within 5e-6 + --tol), and MRR@k, unrounded
(within --tol). Needs mteb in the venv:

    $HOME/.cache/msrag/venv/st/bin/pip install mteb==2.26.24 pytrec-eval-terrier
    $HOME/.cache/msrag/venv/st/bin/python scripts/check_metrics.py --mteb --qrels ... --results ... runs...
"""
import argparse
import json
import os
import struct
import sys

import pytrec_eval


def read_qrels(path):
    qrels = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if n == 1 and len(fields) == 3 and fields[2].lower() == "score":
                continue
            if len(fields) not in (3, 4):
                sys.exit("check_metrics: %s:%d: want 3 or 4 fields, got %d" % (path, n, len(fields)))
            qrels.setdefault(fields[0], {})[fields[-2]] = int(fields[-1])
    return qrels


def read_run(path):
    run = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                sys.exit("check_metrics: %s:%d: want 6 fields, got %d" % (path, n, len(fields)))
            run.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return run


def as_float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def ranked(doc_scores, single=False):
    # score, then doc id, descending: MTEB's mrr() order in double precision;
    # with single, trec_eval's, which holds scores as C floats (cdr follows it)
    key = (lambda it: (as_float32(it[1]), it[0].encode())) if single else (lambda it: (it[1], it[0].encode()))
    return [d for d, _ in sorted(doc_scores.items(), key=key, reverse=True)]


def first_relevant(rels, docs):
    for i, d in enumerate(docs):
        if rels.get(d, 0) > 0:
            return i + 1
    return None


def reference(qrels, run, metrics):
    """Per-query values of every metric, over the queries pytrec_eval scores."""
    measures, pytrec_names = set(), {}
    for m in metrics:
        fam, _, k = m.rpartition("_")
        if m == "recip_rank":
            measures.add("recip_rank")
            pytrec_names[m] = m
        elif fam in ("ndcg_cut", "map_cut", "recall", "P"):
            measures.add("%s.%s" % (fam, k))
            pytrec_names[m] = m
        elif fam not in ("mrr", "recip_rank", "cdr"):
            sys.exit("check_metrics: unknown metric %r" % m)
    measures = measures or {"P.1"}  # pytrec_eval also decides which queries are scored
    scored = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    out = {}
    for qid, vals in scored.items():
        docs, trec_docs = ranked(run[qid]), ranked(run[qid], single=True)
        rels = qrels[qid]
        row = {}
        for m in metrics:
            fam, _, k = m.rpartition("_")
            if m in pytrec_names:
                row[m] = vals[pytrec_names[m]]
            elif fam in ("mrr", "recip_rank"):
                r = first_relevant(rels, docs[: int(k)])
                row[m] = 1.0 / r if r else 0.0
            elif fam == "cdr":
                row[m] = 1.0 if first_relevant(rels, trec_docs[: int(k)]) else 0.0
        out[qid] = row
    return out


def check(name, qrels, run, res, tol):
    metrics = res["metrics"]
    ref = reference(qrels, run, metrics)
    ok = True
    got = res.get("per_query", {})
    if set(got) != set(ref):
        ok = False
        print("%s: scored queries differ: only msrag %s, only pytrec_eval %s" % (
            name, sorted(set(got) - set(ref))[:5], sorted(set(ref) - set(got))[:5]))
    if res.get("num_queries") != len(ref):
        ok = False
        print("%s: num_queries %s, pytrec_eval scores %d" % (name, res.get("num_queries"), len(ref)))
    print("%-10s %-14s %14s %14s %10s  %s" % ("run", "metric", "msrag", "reference", "max|diff|", ""))
    for m in metrics:
        qids = sorted(ref)
        want_mean = sum(ref[q][m] for q in qids) / len(qids) if qids else 0.0
        have_mean = res["mean"].get(m)
        worst = 0.0
        for q in qids:
            v = got.get(q, {}).get(m)
            d = abs(v - ref[q][m]) if v is not None else float("inf")
            worst = max(worst, d)
        mean_diff = abs(have_mean - want_mean) if have_mean is not None else float("inf")
        good = worst <= tol and mean_diff <= tol
        ok = ok and good
        print("%-10s %-14s %14.10f %14.10f %10.2e  %s" % (
            name, m, have_mean if have_mean is not None else float("nan"), want_mean,
            max(worst, mean_diff), "ok" if good else "MISMATCH"))
    return ok


def check_mteb(name, qrels, run, res, tol):
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
    metrics = res["metrics"]
    ks = sorted({int(m.rpartition("_")[2]) for m in metrics if m.rpartition("_")[2].isdigit()})
    # MTEB scores the queries of the run; give it those msrag scored.
    sub = {q: run[q] for q in run if q in qrels}
    r = calculate_retrieval_scores(sub, qrels, ks)
    table = {"ndcg_cut": ("NDCG", r.ndcg, True), "map_cut": ("MAP", r.map, True),
             "recall": ("Recall", r.recall, True), "P": ("P", r.precision, True),
             "cdr": ("HitRate", r.hit_rate, True), "mrr": ("MRR", r.mrr, False)}
    ok = True
    for m in metrics:
        fam, _, k = m.rpartition("_")
        if fam not in table:
            continue
        label, vals, rounded = table[fam]
        want = vals["%s@%s" % (label, k)]
        have = res["mean"][m]
        lim = (5e-6 if rounded else 0) + tol
        good = abs(have - want) <= lim
        ok = ok and good
        print("%-10s %-14s %14.10f %14.10f %10.2e  %s" % (
            name, m + " (mteb)", have, want, abs(have - want), "ok" if good else "MISMATCH"))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qrels", required=True, help="BEIR TSV or TREC qrels")
    ap.add_argument("--results", required=True, help="msrag Results JSON")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--mteb", action="store_true", help="also compare with MTEB's retrieval evaluator")
    ap.add_argument("runs", nargs="+", help="TREC run files")
    args = ap.parse_args()
    qrels = read_qrels(args.qrels)
    with open(args.results, encoding="utf-8") as f:
        results = json.load(f)
    if "per_query" in results:
        if len(args.runs) != 1:
            print("check_metrics: %s holds one Results; give exactly one run" % args.results, file=sys.stderr)
            return 2
        results = {os.path.splitext(os.path.basename(args.runs[0]))[0]: results}
    # Run files are named after their configuration with ':' and '/' as '_'
    # (experiment.Config.RunFile); map each file back to its configuration.
    by_file = {n.replace(":", "_").replace("/", "_"): n for n in results}
    ok = True
    for path in args.runs:
        name = os.path.splitext(os.path.basename(path))[0]
        name = name if name in results else by_file.get(name, name)
        if name not in results:
            print("check_metrics: %s has no results for run %r (from %s); it has %s" % (
                args.results, name, path, sorted(results)), file=sys.stderr)
            return 2
        run = read_run(path)
        ok = check(name, qrels, run, results[name], args.tol) and ok
        if args.mteb:
            ok = check_mteb(name, qrels, run, results[name], args.tol) and ok
    print("all metrics agree within %g" % args.tol if ok else "MISMATCH", file=sys.stderr if not ok else sys.stdout)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
