#!/usr/bin/env python3
"""Writes fuse/testdata/golden_kinds.json: random chunk hits of several
windows grouped into kinds of channel, the kind features, kind weights and
batch consensus weights that package fuse computes from them, computed here
in plain Python and NumPy, independently of the Go code under test. Run from
the repository root:

    python3 -m venv $HOME/.cache/msrag/venv/numpy
    $HOME/.cache/msrag/venv/numpy/bin/pip install numpy
    $HOME/.cache/msrag/venv/numpy/bin/python scripts/gen_fuse_kinds_golden.py

The hits come from the generator of gen_fuse_rules_golden.py (Python's random
module); the consensus reuses its NumPy CombSUM.

Definitions (fuse/kinds.go). A window's hits for a query are its chunks in
rank order, -1 for a missing hit; ranks count the non-missing hits from 0. A
window's top documents are its first FEATURE_DEPTH distinct documents in
order of their first hits.
  * A kind's list for a query: every chunk of every window of the kind adds
    1 / (rank + 1) to its document (windows in order, chunks in list order);
    documents by score descending, then document index ascending.
  * kind-top: the list's first score / the kind's number of windows.
  * kind-peak: (s1 - s10) / s1 over the list's first KIND_DEPTH scores (the
    last of them with fewer), 0 with fewer than two.
  * kind-agree: mean over pairs of the kind's windows (i < j) of the share
    of i's top documents that j's top documents hold (0 when i has none); 1
    for a kind of one window.
  * kind-overlap: the share of the kind's first KIND_DEPTH documents found
    among the first KIND_DEPTH documents of any other kind with hits; 0 when
    no other kind has hits.
  * kind-corr: the mean over the other kinds with hits of Spearman's
    correlation between the two first-KIND_DEPTH lists over their union
    (the kind's documents first, then the other's new ones), a document a
    list lacks ranked at that list's length; Pearson's correlation of the
    ranks, 0 with fewer than two documents or when a side has no spread.
  * Every feature of a kind with no hits for the query is 0.
  * Kind weights: per query, nk times the softmax over the kinds of
    feature / t.
  * Consensus weights: CombSUM of every window's min-max scores; per query,
    each window's share of its top documents among the consensus's first
    FEATURE_DEPTH documents; a window's weight is its mean share over the
    queries to the power gamma, over the mean of those over the windows
    (all 0 when that mean is 0).
"""
import json
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fuse_rules_golden as rg  # noqa: E402

FEATURE_DEPTH = 10  # fuse.FeatureDepth
KIND_DEPTH = 10  # fuse.KindDepth
NQ, NDOCS = rg.NQ, rg.NDOCS


def rows(win, q):
    """Window win's hits for query q: (docs, scores), missing hits dropped."""
    k = win["k"]
    docs = win["docs"][q * k:(q + 1) * k]
    scores = win["scores"][q * k:(q + 1) * k]
    return [d for d in docs if d >= 0], [s for d, s in zip(docs, scores) if d >= 0]


def top_docs(win, q):
    out = []
    for d in rows(win, q)[0]:
        if d not in out:
            out.append(d)
        if len(out) == FEATURE_DEPTH:
            break
    return out


def kind_list(wins, q):
    acc = {}
    for win in wins:
        for r, d in enumerate(rows(win, q)[0]):
            acc[d] = acc.get(d, 0.0) + 1.0 / (r + 1)
    order = sorted(acc, key=lambda d: (-acc[d], d))
    return order, [acc[d] for d in order]


def share(a, b):
    return sum(d in b for d in a) / len(a) if a else 0.0


def spearman(a, b):
    union = list(a) + [d for d in b if d not in a]
    if len(union) < 2:
        return 0.0
    ra = np.array([a.index(d) if d in a else len(a) for d in union], dtype=np.float64)
    rb = np.array([b.index(d) if d in b else len(b) for d in union], dtype=np.float64)
    if ra.std() == 0 or rb.std() == 0:
        return 0.0
    return float(np.corrcoef(ra, rb)[0, 1])


def kind_features(windows, idx, kind, nk):
    """Per query, per kind: [top, peak, agree, overlap, corr]."""
    out = []
    for q in range(NQ):
        lists = [kind_list([windows[i] for w, i in enumerate(idx) if kind[w] == k], q) for k in range(nk)]
        row = []
        for k in range(nk):
            docs, scores = lists[k]
            if not docs:
                row.append([0.0] * 5)
                continue
            mine = [windows[i] for w, i in enumerate(idx) if kind[w] == k]
            s = scores[:KIND_DEPTH]
            top = s[0] / len(mine)
            peak = (s[0] - s[-1]) / s[0] if len(s) > 1 else 0.0
            tops = [top_docs(win, q) for win in mine]
            pairs = [share(tops[i], tops[j]) for i in range(len(tops)) for j in range(i + 1, len(tops))]
            agree = float(np.mean(pairs)) if pairs else 1.0
            head = docs[:KIND_DEPTH]
            others = [lists[o][0][:KIND_DEPTH] for o in range(nk) if o != k and lists[o][0]]
            overlap = share(head, set(d for o in others for d in o)) if others else 0.0
            corr = float(np.mean([spearman(head, o) for o in others])) if others else 0.0
            row.append([top, peak, agree, overlap, corr])
        out.append(row)
    return out


def kind_weights(feats, feature, t):
    f = np.array(feats)[:, :, feature] / t
    e = np.exp(f - f.max(axis=1, keepdims=True))
    return (f.shape[1] * e / e.sum(axis=1, keepdims=True)).reshape(-1).tolist()


def consensus_weights(windows, idx, gamma):
    ws = [rg.Window(windows[i]) for i in idx]
    total, seen, _ = rg.comb(ws, np.ones((NQ, len(ws))), "minmax", False)
    share_sum = np.zeros(len(ws))
    for q in range(NQ):
        cand = np.nonzero(seen[q])[0]
        cons = [int(d) for d in cand[np.lexsort((cand, -total[q, cand]))][:FEATURE_DEPTH]]
        for w, i in enumerate(idx):
            share_sum[w] += share(top_docs(windows[i], q), cons)
    p = (share_sum / NQ) ** gamma
    m = p.mean()
    return (p / m if m > 0 else np.zeros_like(p)).tolist()


def main():
    rng = random.Random(5183 * 11)
    windows = rg.make_windows(rng, [5, 8, 12, 7])
    windows.append(rg.make_sparse_window(rng, 6))
    groups = {
        "two_kinds": ([0, 1, 2, 3], [0, 0, 1, 1], 2),
        "uneven": ([0, 1, 2, 3], [0, 1, 1, 1], 2),
        "one_kind": ([0, 1, 2], [0, 0, 0], 1),
        "three_kinds": ([0, 1, 2, 3, 4], [0, 1, 2, 1, 2], 3),
        # Window 4 has no hits for some queries: its kind has none then.
        "sparse_kind": ([0, 1, 4], [0, 0, 1], 2),
        "one_window_per_kind": ([2, 4], [0, 1], 2),
    }
    features = []
    for name, (idx, kind, nk) in groups.items():
        f = kind_features(windows, idx, kind, nk)
        weights = [{"feature": ft, "t": t, "weights": kind_weights(f, ft, t)} for ft in range(5) for t in (0.1, 1.0)]
        features.append({"name": name, "windows": idx, "kind": kind, "nk": nk, "features": f, "weights": weights})
    consensus = [{"windows": idx, "gamma": g, "weights": consensus_weights(windows, idx, g)}
                 for idx in ([0, 1, 2, 3], [0, 4], [2]) for g in (1.0, 2.0)]
    out = {"numpy": np.__version__, "nq": NQ, "ndocs": NDOCS, "windows": windows,
           "kinds": features, "consensus": consensus}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuse", "testdata", "golden_kinds.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
