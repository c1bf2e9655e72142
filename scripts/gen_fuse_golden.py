#!/usr/bin/env python3
"""Writes fuse/testdata/golden.json: random multi-window chunk hits and the
document rankings RRF and MaxP give them, computed here with plain dicts and
sorting, independently of the Go code under test. Standard library only:

    python3 scripts/gen_fuse_golden.py

Definitions (docs/fusion.md, "Rules"):
  * RRF: S(d) = sum over windows w, over chunks i of d in w's hits, of
    1 / (r_iw + c), r_iw counted from rank_base, missing hits (-1) skipped;
    votes added in float64, window by window, rank by rank.
  * MaxP: the highest chunk score of d over the windows. Single: MaxP over
    one window.
  * Order: score descending, then document index ascending.
  * Evidence: RRF, every voting chunk (window order, then position); MaxP, the
    first chunk in that order with the maximal score. Each entry is
    [window, position, rank from 0 among non-missing hits, chunk score].
Scores are multiples of 1/64, exact in float32, so ties are real.
"""
import json
import os
import random


def make_case(rng, nq, ndocs, ks):
    windows = []
    for k in ks:
        docs, scores = [], []
        for q in range(nq):
            row = [rng.randrange(ndocs) for _ in range(k)]
            sc = sorted((rng.randrange(0, 65) / 64.0 for _ in range(k)), reverse=True)
            if q % 5 == 1:  # fewer vectors than k: -1 at the end, as FAISS does
                cut = rng.randrange(0, k)
                for j in range(cut, k):
                    row[j], sc[j] = -1, -3.0e38
            if q % 7 == 3:  # a missing hit in the middle
                j = rng.randrange(k)
                row[j] = -1
            docs += row
            scores += sc
        windows.append({"k": k, "docs": docs, "scores": scores})
    return windows


def hits(win, q):
    k = win["k"]
    out, rank = [], 0
    for j in range(k):
        d = win["docs"][q * k + j]
        if d < 0:
            continue
        out.append((d, j, rank, win["scores"][q * k + j]))
        rank += 1
    return out


def rrf(windows, nq, K, c, base):
    res = []
    for q in range(nq):
        score, ev = {}, {}
        for w, win in enumerate(windows):
            for d, j, rank, s in hits(win, q):
                score[d] = score.get(d, 0.0) + 1.0 / ((rank + base) + c)
                ev.setdefault(d, []).append([w, j, rank, s])
        top = sorted(score, key=lambda d: (-score[d], d))[:K]
        res.append([{"doc": d, "score": score[d], "evidence": ev[d]} for d in top])
    return res


def maxp(windows, nq, K):
    res = []
    for q in range(nq):
        score, ev = {}, {}
        for w, win in enumerate(windows):
            for d, j, rank, s in hits(win, q):
                if d not in score or s > score[d]:
                    score[d] = s
                    ev[d] = [[w, j, rank, s]]
        top = sorted(score, key=lambda d: (-score[d], d))[:K]
        res.append([{"doc": d, "score": score[d], "evidence": ev[d]} for d in top])
    return res


def main():
    rng = random.Random(5183)
    nq, ndocs = 40, 30
    windows = make_case(rng, nq, ndocs, [5, 8, 12])
    out = {"nq": nq, "ndocs": ndocs, "windows": windows, "cases": []}
    for K in (7, 50):
        out["cases"].append({"name": "rrf_c1_base0_k%d" % K, "method": "rrf", "k": K, "c": 1.0, "rank_base": 0,
                             "windows": [0, 1, 2], "queries": rrf(windows, nq, K, 1.0, 0)})
        out["cases"].append({"name": "rrf_c60_base1_k%d" % K, "method": "rrf", "k": K, "c": 60.0, "rank_base": 1,
                             "windows": [0, 1, 2], "queries": rrf(windows, nq, K, 60.0, 1)})
        out["cases"].append({"name": "maxp_k%d" % K, "method": "maxp", "k": K,
                             "windows": [0, 1, 2], "queries": maxp(windows, nq, K)})
        out["cases"].append({"name": "single_w1_k%d" % K, "method": "single", "k": K,
                             "windows": [1], "queries": maxp([windows[1]], nq, K)})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuse", "testdata", "golden.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
