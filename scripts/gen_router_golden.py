#!/usr/bin/env python3
"""Writes router/testdata/golden.json: a small training set, the router that
full-batch gradient descent fits to it and its predictions on held-out rows,
computed here with NumPy independently of the Go code (package router):

    python3 -m venv $HOME/.cache/msrag/venv/numpy && $HOME/.cache/msrag/venv/numpy/bin/pip install numpy
    $HOME/.cache/msrag/venv/numpy/bin/python scripts/gen_router_golden.py

Model: inputs standardised by the training mean and population deviation (1
where it is 0), a 1 appended; softmax(X W) over k outputs; loss = mean
cross-entropy to the soft targets + lambda/2 * ||W without the bias row||^2;
W starts at 0 and takes STEPS steps of size RATE along the full gradient.
"""
import json
import os
import random

import numpy as np

STEPS, RATE = 300, 0.5  # router.Steps, router.Rate


def fit(X, Y, lam):
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std[std == 0] = 1.0
    Xs = np.hstack([(X - mean) / std, np.ones((len(X), 1))])
    W = np.zeros((Xs.shape[1], Y.shape[1]))
    for _ in range(STEPS):
        Z = Xs @ W
        Z -= Z.max(axis=1, keepdims=True)
        P = np.exp(Z)
        P /= P.sum(axis=1, keepdims=True)
        G = Xs.T @ (P - Y) / len(X)
        G[:-1] += lam * W[:-1]
        W -= RATE * G
    return mean, std, W


def predict(mean, std, W, X):
    Xs = np.hstack([(X - mean) / std, np.ones((len(X), 1))])
    Z = Xs @ W
    Z -= Z.max(axis=1, keepdims=True)
    P = np.exp(Z)
    return P / P.sum(axis=1, keepdims=True)


def main():
    rng = random.Random(42)
    n, d, k = 60, 5, 3
    centers = [[rng.uniform(-1, 1) for _ in range(d)] for _ in range(k)]
    X, Y = [], []
    for i in range(n + 12):
        c = i % k
        X.append([centers[c][j] + rng.gauss(0, 0.4) for j in range(d - 1)] + [0.5])  # a constant column
        s = [rng.uniform(0, 0.3) for _ in range(k)]
        s[c] += 0.6
        e = np.exp(np.array(s) / 0.2)
        Y.append((e / e.sum()).tolist())
    X, Y = np.array(X), np.array(Y)
    cases = []
    for lam in (0.0, 0.01, 1.0):
        mean, std, W = fit(X[:n], Y[:n], lam)
        cases.append({"lambda": lam, "mean": mean.tolist(), "std": std.tolist(), "w": W.reshape(-1).tolist(),
                      "predict": predict(mean, std, W, X[n:]).reshape(-1).tolist()})
    out = {"numpy": np.__version__, "inputs": d, "windows": k, "x": X[:n].reshape(-1).tolist(),
           "y": Y[:n].reshape(-1).tolist(), "held_out": X[n:].reshape(-1).tolist(), "cases": cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "router", "testdata", "golden.json")
    with open(path, "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main()
