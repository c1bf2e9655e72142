#!/usr/bin/env python3
"""Tests the procedures that choose the default fusion across kinds out of
sample, then applies the adopted one to every training split.

A procedure takes training runs of msrag eval (scripts/fusion-results.sh:
every label-free candidate rule on a training split) and returns one rule.
Left one data set out: for every data set in turn, the whole choice runs on
the other data sets' splits and the rule it returns is scored on the left-out
data set's splits, against the incumbent default (INCUMBENT) and against the
better kind (the better of dense RRF and lexical RRF on that split, read
after the fact, as the targets read it). Splits of one data set (one corpus)
are left out together: a rule chosen on a corpus's other queries knows how
that corpus's dense and lexical sides compare, which a new data set does not.

The procedures, fixed before any run was read (margin: nDCG@10 of the rule
minus the better kind's on a split; data sets weigh the same in a mean, each
the mean of its splits):

  worst       highest worst margin over the splits; rules within 0.1 of it
              told apart by their mean margin (the procedure used until now)
  mean        highest mean margin
  rank        lowest mean rank among the candidates
  penalty     highest worst margin less 0.5 per parameter of the rule
  stable      the rule `worst` returns most often over 200 resamplings of
              every split's queries (seed 1)
  free-worst  `worst` over the parameter-free rules only
  free-mean   `mean` over the parameter-free rules only
  incumbent   INCUMBENT, unless a rule is above it on every split with the
              lower end of a 95% bootstrap interval above 0 (then the one
              whose worst lower end is highest)

A rule's parameters: each of weights=, adapt=, balance=, c=, base=, cap=
(windows= and norm= choose channels and a rule's variant). Rules that weigh
channels by the batch (adapt=consensus) are never candidates: a default ranks
a query the same whatever is searched with it.

The procedure adopted (the criterion fixed beforehand): fewest left-out
splits where its rule is more than 0.3 below INCUMBENT; then the smallest
shortfall against the two targets summed over the left-out splits,
max(0, -0.3 - (rule - INCUMBENT)) + max(0, 1.0 - (rule - better kind));
shortfalls within 0.1 of each other are ties, won by the procedure whose
left-out choices have fewer parameters on average, then by the order above.

    python3 scripts/fusion-procedures.py [--leave split] DATASET/LABEL=RUN_DIR[?REGEX] ...

DATASET groups the splits left out together (--leave split leaves each
split out alone instead: shown, not the adopted reading); ?REGEX keeps the
queries whose id matches it (query types kept apart). Prints the left-out
tables, the adopted procedure and its choice on every split. Needs NumPy.
"""
import json
import os
import re
import sys

import numpy as np

from paired import compare

DENSE, LEXICAL = "rrf:windows=dense", "rrf:windows=lexical"
INCUMBENT = "combsum:norm=zscore,windows=all"  # the default the choice must not lose to
METRIC = "ndcg_cut_10"
NEAR = 0.1  # points of worst margin within which `worst` reads the mean
PENALTY = 0.5  # points per parameter (`penalty`)
RESAMPLES = 200  # `stable`
LOSS, TARGET = -0.3, 1.0  # the held-out targets: INCUMBENT - 0.3, better kind + 1.0
WORST_BEFORE = "rrf:windows=all,weights=lexical:1.5,adapt=kind-top:1"  # `worst`'s choice on four splits, shown beside
PARAMS = ("weights", "adapt", "balance", "c", "base", "cap")


class Split:
    """One training split: its queries' nDCG@10 (x100) for every rule."""

    def __init__(self, arg):
        spec, run = arg.split("=", 1)
        self.group, self.label = spec.split("/", 1) if "/" in spec else (spec, spec)
        run, _, pattern = run.partition("?")
        with open(os.path.join(run, "results.json"), encoding="utf-8") as f:
            res = json.load(f)
        self.per = {c["name"]: c["results"]["per_query"] for c in res["configs"]}
        for n in (DENSE, LEXICAL, INCUMBENT):
            if n not in self.per:
                sys.exit("fusion-procedures: %s has no configuration %s" % (run, n))
        qs = set.intersection(*(set(p) for p in self.per.values()))
        if pattern:
            qs = {q for q in qs if re.search(pattern, q)}
        if not qs:
            sys.exit("fusion-procedures: %s: no query matches %r" % (run, pattern))
        self.qids = sorted(qs)

    def bind(self, rules):
        self.X = 100 * np.array([[self.per[r][q][METRIC] for r in rules] for q in self.qids])
        self.better = DENSE if self.X[:, RULES.index(DENSE)].mean() >= self.X[:, RULES.index(LEXICAL)].mean() else LEXICAL


def params(rule):
    _, _, ps = rule.partition(":")
    return sum(1 for p in ps.split(",") if p.split("=", 1)[0] in PARAMS)


def candidate(rule):
    return "windows=" in rule and "adapt=consensus" not in rule


def margins(means):
    """Rows of rule means (splits x rules) less each split's better kind."""
    return means - np.maximum(means[:, RULES.index(DENSE)], means[:, RULES.index(LEXICAL)])[:, None]


def group_mean(values, splits):
    groups = sorted({s.group for s in splits})
    return np.mean([values[[i for i, s in enumerate(splits) if s.group == g]].mean(axis=0) for g in groups], axis=0)


def masked_argmax(score, allowed):
    score = np.where(allowed, score, -np.inf)
    best = score.max()
    ties = [i for i in np.flatnonzero(score == best)]
    return min(ties, key=lambda i: (params(RULES[i]), i))


def choose_worst(m, splits, allowed):
    worst = m.min(axis=0)
    near = allowed & (worst >= np.where(allowed, worst, -np.inf).max() - NEAR)
    return masked_argmax(group_mean(m, splits), near)


def choose_mean(m, splits, allowed):
    return masked_argmax(group_mean(m, splits), allowed)


def choose_rank(m, splits, allowed):
    sub = np.where(allowed, m, -np.inf)
    ranks = np.array([(-row).argsort(kind="stable").argsort() + 1.0 for row in sub])
    return masked_argmax(-group_mean(ranks, splits), allowed)


def choose_penalty(m, splits, allowed):
    return masked_argmax(m.min(axis=0) - PENALTY * np.array([params(r) for r in RULES]), allowed)


def resample_means(arrays, rng, count):
    """count x arrays x columns: the column means over resamplings of each array's rows (queries)."""
    out = np.empty((count, len(arrays), arrays[0].shape[1]))
    for j, x in enumerate(arrays):
        n = len(x)
        idx = rng.integers(0, n, (count, n))
        weights = np.stack([np.bincount(row, minlength=n) for row in idx]) / n
        out[:, j, :] = weights @ x
    return out


def choose_stable(m, splits, allowed):
    boots = resample_means([s.X for s in splits], np.random.default_rng(1), RESAMPLES)
    votes = np.zeros(len(RULES))
    for b in boots:
        votes[choose_worst(margins(b), splits, allowed)] += 1
    return masked_argmax(votes, allowed)


def choose_incumbent(m, splits, allowed):
    prev = RULES.index(INCUMBENT)
    lows = []
    for s in splits:
        boots = resample_means([s.X - s.X[:, [prev]]], np.random.default_rng(1), 2000)[:, 0, :]
        lows.append(np.percentile(boots, 2.5, axis=0))
    worst_low = np.min(lows, axis=0)
    i = masked_argmax(worst_low, allowed)
    return i if worst_low[i] > 0 else prev


PROCEDURES = [
    ("worst", choose_worst, False),
    ("mean", choose_mean, False),
    ("rank", choose_rank, False),
    ("penalty", choose_penalty, False),
    ("stable", choose_stable, False),
    ("free-worst", choose_worst, True),
    ("free-mean", choose_mean, True),
    ("incumbent", choose_incumbent, False),
]


def choose(proc, free_only, splits):
    allowed = np.array([candidate(r) and (not free_only or params(r) == 0) for r in RULES])
    m = margins(np.array([s.X.mean(axis=0) for s in splits]))
    return proc(m, splits, allowed)


def score(rule, s):
    """(rule - INCUMBENT, rule - better kind) on split s, each as paired.compare gives it."""
    per = lambda name: {q: {METRIC: v} for q, v in zip(s.qids, s.X[:, RULES.index(name)])}
    return compare(per(INCUMBENT), per(rule), METRIC), compare(per(s.better), per(rule), METRIC)


def fmt(c):
    m, lo, hi, w, t, l, _ = c
    return "%+.2f [%+.2f, %+.2f] %d/%d/%d" % (m, lo, hi, w, t, l)


def leave_out(splits, by_split):
    """For every procedure: the rule chosen without each fold and its scores on the fold's splits."""
    folds = [[s] for s in splits] if by_split else [[s for s in splits if s.group == g] for g in dict.fromkeys(s.group for s in splits)]
    rows = {}
    for name, proc, free in PROCEDURES:
        rows[name] = []
        for fold in folds:
            rest = [s for s in splits if s not in fold]
            r = RULES[choose(proc, free, rest)]
            rows[name] += [(s, r) + score(r, s) for s in fold]
    for fixed in (INCUMBENT, WORST_BEFORE):
        rows["always `%s`" % fixed] = [(s, fixed) + score(fixed, s) for s in splits]
    return rows


def summary(results):
    d_p = np.array([c[0] for _, _, c, _ in results])
    d_k = np.array([c[0] for _, _, _, c in results])
    losses = int((d_p < LOSS).sum())
    significant = sum(1 for _, _, c, _ in results if c[2] < 0)
    shortfall = float(np.maximum(0, LOSS - d_p).sum() + np.maximum(0, TARGET - d_k).sum())
    return losses, significant, d_p.min(), d_p.mean(), int((d_k < TARGET).sum()), d_k.min(), shortfall


def adopt(rows):
    cands = [n for n, _, _ in PROCEDURES]
    stats = {n: summary(rows[n]) for n in cands}
    fewest = min(stats[n][0] for n in cands)
    cands = [n for n in cands if stats[n][0] == fewest]
    low = min(stats[n][6] for n in cands)
    cands = [n for n in cands if stats[n][6] <= low + NEAR]
    return min(cands, key=lambda n: (np.mean([params(r) for _, r, _, _ in rows[n]]), [p[0] for p in PROCEDURES].index(n)))


def short(rule):
    return "`%s`" % rule


def print_tables(splits, rows):
    labels = [s.label for s in splits]
    print("| procedure | " + " | ".join(labels) + " | below incumbent - 0.3 | below incumbent (interval) | worst vs incumbent | mean vs incumbent | below better kind + 1.0 | worst vs better kind | shortfall |")
    print("|---|" + "---:|" * (len(labels) + 7))
    for name, res in rows.items():
        by = {s.label: (c, k) for s, _, c, k in res}
        cells = ["%+.2f (%+.2f)" % (by[l][0][0], by[l][1][0]) for l in labels]
        st = summary(res)
        print("| %s | %s | %d | %d | %+.2f | %+.2f | %d | %+.2f | %.2f |" % ((name, " | ".join(cells)) + st))
    print("\nCells: rule - incumbent (rule - better kind), nDCG@10 on the left-out split.\n")
    print("| procedure | rule chosen with each left out |")
    print("|---|---|")
    for name, res in rows.items():
        if name.startswith("always"):
            continue
        seen = {}
        for s, r, _, _ in res:
            seen.setdefault(s.label if BY_SPLIT else s.group, r)
        print("| %s | %s |" % (name, "; ".join("%s: %s" % (g, short(r)) for g, r in seen.items())))


def main():
    global RULES, BY_SPLIT
    args = sys.argv[1:]
    by_split = BY_SPLIT = args[:2] == ["--leave", "split"]
    if by_split:
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    splits = [Split(a) for a in args]
    RULES = [r for r in splits[0].per if all(r in s.per for s in splits) and (candidate(r) or r == INCUMBENT)]
    for s in splits:
        s.bind(RULES)
    print("%d candidate rules (%d parameter-free), %d splits: %s\n" % (
        sum(candidate(r) for r in RULES), sum(candidate(r) and params(r) == 0 for r in RULES), len(splits),
        ", ".join("%s (%d queries)" % (s.label, len(s.qids)) for s in splits)))
    rows = leave_out(splits, by_split)
    print_tables(splits, rows)
    name = adopt(rows)
    proc, free = next((p, f) for n, p, f in PROCEDURES if n == name)
    rule = RULES[choose(proc, free, splits)]
    print("\nadopted: %s; on every split it chooses %s\n" % (name, short(rule)))
    print("| split | better kind | %s - incumbent | %s - better kind |" % (short(rule), short(rule)))
    print("|---|---|---:|---:|")
    for s in splits:
        c, k = score(rule, s)
        print("| %s | %s | %s | %s |" % (s.label, "dense" if s.better == DENSE else "lexical", fmt(c), fmt(k)))
    for name, res in rows.items():
        if name == adopt(rows):
            print("\nleft out, %s:" % name)
            for s, r, c, k in res:
                print("| %s | %s | %s | %s |" % (s.label, short(r), fmt(c), fmt(k)))


if __name__ == "__main__":
    main()
