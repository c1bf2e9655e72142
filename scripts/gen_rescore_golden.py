#!/usr/bin/env python3
"""Writes faiss/testdata/rescore.golden.json: random float32 vectors and
queries, each query's labels, and the score Index.Rescore must give every
(query, label) pair, computed here with NumPy's float32 arithmetic in the order
faiss/shim.cpp's pair_score documents, independently of the Go and C++ code
under test:

    python3 scripts/gen_rescore_golden.py     (needs numpy)

The order: eight running float32 sums, sum j taking the elements i with
i % 8 == j in order of i, each product (inner product) or squared difference
(squared L2) rounded to float32 before it is added, then
((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)). Every float32 travels as its bits (an
unsigned 32-bit integer), so that nothing is lost in JSON. Dimensions 384 (the
built-in models') and 67 (not a multiple of eight: the last, partial round).
"""
import json
import os

import numpy as np

F = np.float32


def pair_score(x, y, ip):
    s = [F(0)] * 8
    for i in range(len(x)):
        t = F(x[i] * y[i]) if ip else F(F(x[i] - y[i]) * F(x[i] - y[i]))
        s[i % 8] = F(s[i % 8] + t)
    return F(F(F(s[0] + s[1]) + F(s[2] + s[3])) + F(F(s[4] + s[5]) + F(s[6] + s[7])))


def bits(a):
    return np.asarray(a, dtype=F).view(np.uint32).tolist()


def case(rng, d, nvec, nq, k):
    xb = rng.standard_normal((nvec, d)).astype(F)
    xq = rng.standard_normal((nq, d)).astype(F)
    labels = [int(v) for v in rng.integers(0, nvec, size=nq * k)]
    ip = [pair_score(xq[i // k], xb[l], True) for i, l in enumerate(labels)]
    l2 = [pair_score(xq[i // k], xb[l], False) for i, l in enumerate(labels)]
    return {"d": d, "k": k, "vectors": bits(xb.ravel()), "queries": bits(xq.ravel()),
            "labels": labels, "inner_product": bits(ip), "l2": bits(l2)}


def main():
    rng = np.random.default_rng(20261205)
    cases = [case(rng, 384, 40, 4, 6), case(rng, 67, 30, 3, 5)]
    out = os.path.join(os.path.dirname(__file__), "..", "faiss", "testdata", "rescore.golden.json")
    with open(out, "w") as f:
        json.dump({"numpy": np.__version__, "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
