#!/usr/bin/env python3
"""Writes fuse/testdata/golden_rules.json: random multi-window chunk hits and
the document rankings that the fusion rules of package fuse give them,
computed here with NumPy arrays (dense query x document matrices) and plain
Python, independently of the Go code under test. Run from the repository
root:

    python3 -m venv $HOME/.cache/msrag/venv/numpy
    $HOME/.cache/msrag/venv/numpy/bin/pip install numpy
    $HOME/.cache/msrag/venv/numpy/bin/python scripts/gen_fuse_rules_golden.py

The hits are drawn with Python's random module (its stream does not change
between versions); NumPy only computes. The NumPy version is recorded in the
output.

Definitions (fuse/doc.go). For query q, window w has weight
wt = weights[w] * query_weights[q][w] (1 where not given); a window of weight
0 is left out entirely. Ranks count the window's non-missing hits (-1 is a
missing hit) from 0. A document's first hit in a window is its best chunk
there; the distinct documents in order of their first hits give its document
rank, from 0.
  * rrf: S(d) = sum of wt / (rank + rank_base + c) over the chunks of d, or
    with cap > 0 over each window's first cap chunks of d (the others keep
    their ranks).
  * docrrf: S(d) = sum over windows that retrieved d of
    wt / (docrank + rank_base + c).
  * combsum: S(d) = sum over windows with at least one hit for the query of
    wt * n_w(d), n_w the normalised score of d's first hit in w; a document
    w missed gets w's floor: the lowest raw score (none), 0 (minmax), the z
    of the lowest score (zscore). minmax: (s - min) / (max - min), 1 for all
    when max == min. zscore: (s - mean) / std, population std, 0 for all
    when every score is equal.
  * combmnz: combsum times the number of windows that retrieved d.
  * linear: S(d) = sum over windows with hits of
    wt * ((a*z(d) + b/(docrank(d)+1)) + c*votes(d)), with (a, b, c) the
    window's coefficients, z the zscore normalisation above (the floor for a
    missed document, whose docrank and votes terms are 0) and votes(d) the
    sum of 1/(rank+1) over d's chunks in the window, in list order.
  * Only documents retrieved by a window of positive weight are ranked.
  * Order: score descending, then document index ascending.
  * Evidence: [window, position, rank, chunk score]; rrf, every chunk that
    voted (window order, then position); the others, the first hit of d in
    each window that retrieved it (window order).
Sums run in the order the Go code documents: over windows in window order,
within a window in list order (mean and variance of a window's scores in
order of the documents' first hits). NumPy's own reductions sum pairwise, so
those sums are written out below as sequential loops; a product is rounded
before it is added. Scores are multiples of 1/64, exact in float32, so ties
are real.
"""
import json
import os
import random

import numpy as np

NQ, NDOCS = 24, 30
MISSING_SCORE = -3.0e38  # what FAISS reports for a missing hit


def make_windows(rng, ks):
    """Random hits for windows of the given K: scores descending, documents
    repeated within a row, -1 at the end (fewer vectors than K) and in the
    middle."""
    windows = []
    for k in ks:
        docs, scores = [], []
        for q in range(NQ):
            row = [rng.randrange(NDOCS) for _ in range(k)]
            sc = sorted((rng.randrange(0, 65) / 64.0 for _ in range(k)), reverse=True)
            if q % 5 == 1:
                cut = rng.randrange(1, k)
                for j in range(cut, k):
                    row[j], sc[j] = -1, MISSING_SCORE
            if q % 7 == 3:
                row[rng.randrange(k)] = -1
            docs += row
            scores += sc
        windows.append({"k": k, "docs": docs, "scores": scores})
    return windows


def make_sparse_window(rng, k):
    """A window with no hits at all for some queries, a single document for
    others (max == min), equal scores over distinct documents for others."""
    docs, scores = [], []
    for q in range(NQ):
        if q % 4 == 2:
            row, sc = [-1] * k, [MISSING_SCORE] * k
        elif q % 4 == 3:
            d = rng.randrange(NDOCS)
            row = [d] * (k - 1) + [-1]
            sc = sorted((rng.randrange(0, 65) / 64.0 for _ in range(k - 1)), reverse=True) + [MISSING_SCORE]
        elif q % 4 == 0:
            row = rng.sample(range(NDOCS), k)
            sc = [rng.randrange(0, 65) / 64.0] * k
        else:
            row = [rng.randrange(NDOCS) for _ in range(k)]
            sc = sorted((rng.randrange(0, 65) / 64.0 for _ in range(k)), reverse=True)
        docs += row
        scores += sc
    return {"k": k, "docs": docs, "scores": scores}


class Window:
    """One window as arrays: docs and scores (NQ x K), each hit's rank, its
    occurrence index among the hits of its document, whether it is the
    document's first hit, and the document rank of first hits."""

    def __init__(self, win):
        k = win["k"]
        self.docs = np.array(win["docs"], dtype=np.int64).reshape(NQ, k)
        self.scores = np.array(win["scores"], dtype=np.float32).astype(np.float64).reshape(NQ, k)
        self.valid = self.docs >= 0
        self.rank = np.cumsum(self.valid, axis=1) - 1
        same = self.docs[:, :, None] == self.docs[:, None, :]
        earlier = np.tril(np.ones((k, k), dtype=bool), -1)  # [j, i]: i before j
        self.occ = (same & earlier[None]).sum(axis=2)
        self.first = self.valid & (self.occ == 0)
        self.docrank = np.cumsum(self.first, axis=1) - 1

    def dense(self, values, mask):
        """An NQ x NDOCS matrix holding values at the documents of the masked
        hits (at most one per document and query), NaN elsewhere."""
        out = np.full((NQ, NDOCS), np.nan)
        qs, js = np.nonzero(mask)
        out[qs, self.docs[qs, js]] = values[qs, js]
        return out


def seqsum(xs):
    """Left-to-right float64 sum (Python's sum() compensates since 3.12,
    NumPy's sums pairwise)."""
    total = 0.0
    for x in xs:
        total += float(x)
    return total


def rrf(ws, wt, c, base, cap):
    total = np.zeros((NQ, NDOCS))
    seen = np.zeros((NQ, NDOCS), dtype=bool)
    votes = []
    for w, win in enumerate(ws):
        vote = win.valid & (wt[:, w:w + 1] > 0)
        if cap > 0:
            vote &= win.occ < cap
        with np.errstate(divide="ignore", invalid="ignore"):  # at missing hits, which do not vote
            v = wt[:, w:w + 1] / ((win.rank + base) + c)
        for j in range(win.docs.shape[1]):  # list order
            qs = np.nonzero(vote[:, j])[0]
            ds = win.docs[qs, j]
            total[qs, ds] += v[qs, j]
            seen[qs, ds] = True
        votes.append(vote)
    return total, seen, votes


def docrrf(ws, wt, c, base):
    total = np.zeros((NQ, NDOCS))
    seen = np.zeros((NQ, NDOCS), dtype=bool)
    firsts = []
    for w, win in enumerate(ws):
        use = win.first & (wt[:, w:w + 1] > 0)
        with np.errstate(divide="ignore", invalid="ignore"):  # at hits that are not first hits
            v = win.dense(wt[:, w:w + 1] / ((win.docrank + base) + c), use)
        total = total + np.nan_to_num(v, nan=0.0)
        seen |= ~np.isnan(v)
        firsts.append(use)
    return total, seen, firsts


def normalise(win, norm):
    """The window's normalised document scores (NaN where not retrieved), the
    floor per query, and whether the window has hits per query."""
    raw = win.dense(win.scores, win.first)
    got = ~np.isnan(raw)
    has = got.any(axis=1)
    lo = np.where(got, raw, np.inf).min(axis=1)
    hi = np.where(got, raw, -np.inf).max(axis=1)
    flat = (hi == lo)[:, None]
    if norm == "none":
        return raw, lo, has
    if norm == "minmax":
        with np.errstate(invalid="ignore", divide="ignore"):
            n = np.where(flat, 1.0, (raw - lo[:, None]) / (hi - lo)[:, None])
        return np.where(got, n, np.nan), np.zeros(NQ), has
    mean, std = np.zeros(NQ), np.ones(NQ)
    for q in range(NQ):
        xs = win.scores[q][win.first[q]]  # list order of first hits
        if len(xs) and hi[q] > lo[q]:
            mean[q] = seqsum(xs) / len(xs)
            std[q] = np.sqrt(seqsum((xs - mean[q]) * (xs - mean[q])) / len(xs))
    z = np.where(flat, 0.0, (raw - mean[:, None]) / std[:, None])
    z = np.where(got, z, np.nan)
    floor = np.where(has, np.where(got, z, np.inf).min(axis=1), 0.0)
    return z, floor, has


def comb(ws, wt, norm, mnz):
    total = np.zeros((NQ, NDOCS))
    seen = np.zeros((NQ, NDOCS), dtype=bool)
    count = np.zeros((NQ, NDOCS))
    firsts = []
    for w, win in enumerate(ws):
        n, floor, has = normalise(win, norm)
        on = (wt[:, w] > 0) & has
        got = ~np.isnan(n) & on[:, None]
        filled = np.where(np.isnan(n), floor[:, None], n)
        total = total + np.where(on[:, None], wt[:, w:w + 1] * filled, 0.0)
        count += got
        seen |= got
        firsts.append(win.first & on[:, None])
    if mnz:
        total = count * total
    return total, seen, firsts


def linear(ws, wt, theta):
    total = np.zeros((NQ, NDOCS))
    seen = np.zeros((NQ, NDOCS), dtype=bool)
    firsts = []
    for w, win in enumerate(ws):
        a, b, c = theta[3 * w:3 * w + 3]
        z, floor, has = normalise(win, "zscore")
        on = (wt[:, w] > 0) & has
        votes = np.zeros((NQ, NDOCS))
        for j in range(win.docs.shape[1]):  # list order
            qs = np.nonzero(win.valid[:, j])[0]
            votes[qs, win.docs[qs, j]] += 1.0 / (win.rank[qs, j] + 1)
        dr = win.dense(win.docrank.astype(np.float64), win.first)
        got = ~np.isnan(z)
        with np.errstate(invalid="ignore"):
            term = a * z
            term = term + b / (dr + 1.0)
            term = term + c * votes
        term = np.where(got, term, a * floor[:, None])
        total = total + np.where(on[:, None], wt[:, w:w + 1] * term, 0.0)
        seen |= got & on[:, None]
        firsts.append(win.first & on[:, None])
    return total, seen, firsts


def report(ws, total, seen, evmask, K):
    res = []
    for q in range(NQ):
        cand = np.nonzero(seen[q])[0]
        order = np.lexsort((cand, -total[q, cand]))  # last key is primary
        top = cand[order][:K]
        rows = []
        for d in top:
            ev = []
            for w, win in enumerate(ws):
                for j in np.nonzero(evmask[w][q] & (win.docs[q] == d))[0]:
                    ev.append([w, int(j), int(win.rank[q, j]), float(win.scores[q, j])])
            rows.append({"doc": int(d), "score": float(total[q, d]), "evidence": ev})
        res.append(rows)
    return res


def case(raw_windows, name, method, idx, K=50, c=1.0, base=0, cap=0, norm="none",
         weights=None, qweights=None, theta=None):
    ws = [Window(raw_windows[i]) for i in idx]
    nw = len(ws)
    wt = np.ones((NQ, nw))
    if weights is not None:
        wt = wt * np.array(weights)[None, :]
    if qweights is not None:
        wt = wt * np.array(qweights).reshape(NQ, nw)
    if method == "rrf":
        total, seen, ev = rrf(ws, wt, c, base, cap)
    elif method == "docrrf":
        total, seen, ev = docrrf(ws, wt, c, base)
    elif method == "linear":
        total, seen, ev = linear(ws, wt, theta)
    else:
        total, seen, ev = comb(ws, wt, norm, method == "combmnz")
    return {"name": name, "method": method, "k": K, "c": c, "rank_base": base, "cap": cap,
            "norm": norm, "weights": weights, "query_weights": qweights, "linear": theta, "windows": idx,
            "queries": report(ws, total, seen, ev, K)}


DEPTH, TEMP = 10, 0.05  # fuse.FeatureDepth, fuse.EntropyTemperature


def features(raw_windows, idx):
    """Per query and window: top, gap, entropy and agree of the window's
    first DEPTH distinct documents (fuse/features.go)."""
    ws = [Window(raw_windows[i]) for i in idx]
    out = []
    for q in range(NQ):
        tops, scs = [], []
        for win in ws:
            firsts = [j for j in range(win.docs.shape[1]) if win.first[q, j]][:DEPTH]
            tops.append([int(win.docs[q, j]) for j in firsts])
            scs.append(np.array([win.scores[q, j] for j in firsts]))
        row = []
        for w in range(len(ws)):
            s = scs[w]
            top = float(s[0]) if len(s) else 0.0
            gap = float(s[0] - s[-1]) if len(s) else 0.0
            ent = 1.0
            if len(s) >= 2:
                p = np.exp((s - s[0]) / TEMP)
                p = p / seqsum(p)
                ent = -seqsum(p * np.log(p)) / np.log(len(s))
            others = set()
            for o in range(len(ws)):
                if o != w:
                    others |= set(tops[o])
            agree = sum(d in others for d in tops[w]) / len(tops[w]) if tops[w] else 0.0
            row.append([top, gap, float(ent), agree])
        out.append(row)
    return out


def adaptive(feats, feature, t):
    f = np.array(feats)[:, :, feature] * (-1.0 if feature == 2 else 1.0) / t
    f = f - f.max(axis=1, keepdims=True)
    e = np.exp(f)
    return (f.shape[1] * e / e.sum(axis=1, keepdims=True)).reshape(-1).tolist()


def main():
    rng = random.Random(5183 * 7)
    windows = make_windows(rng, [5, 8, 12])
    windows.append(make_sparse_window(rng, 6))
    w3 = [0.5, 2.0, 1.25]
    qw = [rng.choice([0.0, 0.25, 0.5, 1.0, 1.5, 3.0]) for _ in range(NQ * 3)]
    all3 = [0, 1, 2]
    cases = [
        case(windows, "rrf_cap1", "rrf", all3, cap=1),
        case(windows, "rrf_cap3", "rrf", all3, cap=3),
        case(windows, "rrf_cap1_k7", "rrf", all3, K=7, cap=1),
        case(windows, "rrf_weights", "rrf", all3, weights=w3),
        case(windows, "rrf_weight_zero", "rrf", all3, weights=[1.0, 0.0, 3.0]),
        case(windows, "rrf_query_weights", "rrf", all3, qweights=qw),
        case(windows, "rrf_c60_base1_cap2_both_weights", "rrf", all3, c=60.0, base=1, cap=2,
             weights=w3, qweights=qw),
        case(windows, "docrrf_c1_base0", "docrrf", all3),
        case(windows, "docrrf_c60_base1", "docrrf", all3, c=60.0, base=1),
        case(windows, "docrrf_c1_base0_k7", "docrrf", all3, K=7),
        case(windows, "docrrf_weights", "docrrf", all3, weights=w3),
        case(windows, "docrrf_query_weights", "docrrf", all3, qweights=qw),
    ]
    for norm in ("none", "minmax", "zscore"):
        cases += [
            case(windows, "combsum_" + norm, "combsum", all3, norm=norm),
            case(windows, "combsum_%s_weights" % norm, "combsum", all3, norm=norm, weights=w3),
            case(windows, "combmnz_" + norm, "combmnz", all3, norm=norm),
        ]
    cases += [
        case(windows, "combsum_zscore_k7", "combsum", all3, K=7, norm="zscore"),
        case(windows, "combsum_zscore_query_weights", "combsum", all3, norm="zscore", qweights=qw),
        case(windows, "combmnz_minmax_weights", "combmnz", all3, norm="minmax", weights=w3),
        case(windows, "combmnz_zscore_query_weights", "combmnz", all3, norm="zscore", qweights=qw),
        # Window 3 has no hits for some queries.
        case(windows, "empty_rrf", "rrf", [3, 0], cap=2),
        case(windows, "empty_docrrf", "docrrf", [0, 3]),
        case(windows, "empty_combsum_none", "combsum", [0, 3], norm="none"),
        case(windows, "empty_combsum_minmax", "combsum", [3, 1], norm="minmax"),
        case(windows, "empty_combsum_zscore", "combsum", [0, 3, 2], norm="zscore"),
        case(windows, "empty_combmnz_minmax", "combmnz", [3, 2], norm="minmax"),
        case(windows, "empty_combmnz_zscore", "combmnz", [3, 0], norm="zscore", weights=[1.5, 0.5]),
        case(windows, "empty_only", "combsum", [3], norm="zscore"),
    ]
    th = [1.0, 0.25, 0.5, 0.0, 2.0, 0.0, 0.5, 0.0, 1.0]
    cases += [
        case(windows, "linear", "linear", all3, theta=th),
        case(windows, "linear_negative_k7", "linear", all3, K=7, theta=[1.5, -0.5, 0.25, -1.0, 0.0, 2.0, 0.75, 1.0, -0.25]),
        case(windows, "linear_weights", "linear", all3, theta=th, weights=w3),
        case(windows, "linear_query_weights", "linear", all3, theta=th, qweights=qw),
        case(windows, "linear_score_only", "linear", all3, theta=[1.0, 0, 0] * 3),
        case(windows, "linear_empty", "linear", [0, 3], theta=[0.5, 1.0, 0.25, 2.0, 0.5, 1.0]),
    ]
    feats = {"all3": features(windows, all3), "sparse": features(windows, [0, 3])}
    adapt = [{"feature": f, "t": t, "weights": adaptive(feats["all3"], f, t)} for f in range(4) for t in (0.1, 0.5)]
    out = {"numpy": np.__version__, "nq": NQ, "ndocs": NDOCS, "windows": windows, "cases": cases,
           "features": feats, "adaptive": adapt}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuse", "testdata", "golden_rules.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
