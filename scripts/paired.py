#!/usr/bin/env python3
"""Paired comparison of two configurations of one msrag eval run on any metric
(msrag reports nDCG@10 pairs itself; this is for the others, e.g. recall_1):
the mean difference B - A over the queries both scored, a 95% bootstrap
interval (10,000 resamplings of the queries, NumPy, seed 1) and the queries
won, tied and lost.

    $HOME/.cache/msrag/venv/numpy/bin/python scripts/paired.py out/run/results.json recall_1 w200 rrf
"""
import json
import sys

import numpy as np


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    path, metric, a_name, b_name = sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        res = json.load(f)
    per = {c["name"]: c["results"]["per_query"] for c in res["configs"]}
    for n in (a_name, b_name):
        if n not in per:
            sys.exit("paired: %s has no configuration %r; it has %s" % (path, n, sorted(per)))
    mean, lo, hi, w, t, l, n = compare(per[a_name], per[b_name], metric)
    print("%s - %s, %s, %d queries: %+.4f [%+.4f, %+.4f], won/tied/lost %d/%d/%d" % (
        b_name, a_name, metric, n, mean, lo, hi, w, t, l))


def compare(a, b, metric):
    """B - A on metric over the queries both per-query maps score: mean, 95%
    bootstrap interval (10,000 resamplings, seed 1), won, tied, lost, n."""
    qs = sorted(set(a) & set(b))
    d = np.array([b[q][metric] - a[q][metric] for q in qs])
    boot = d[np.random.default_rng(1).integers(0, len(d), (10000, len(d)))].mean(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return d.mean(), lo, hi, int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), len(d)

if __name__ == "__main__":
    main()
