#!/usr/bin/env python3
"""Chooses the default fusion across kinds from training runs of msrag eval
(scripts/fusion-results.sh): for every label-free rule evaluated in all of
the runs, its margin in nDCG@10 over the better of dense RRF
(rrf:windows=dense) and lexical RRF (rrf:windows=lexical) in each run; the
rule chosen is the one whose worst margin is highest, rules within 0.1 of
that worst margin being told apart by their mean margin. Rules whose
weights are the batch's (adapt=consensus) are shown but not chosen: a
default must rank a query the same whatever else is searched with it.
It prints the table and the choice.

    python3 scripts/fusion-select.py [LABEL=]RUN_DIR...

Give it the training runs only (DIR/results.json each): a rule chosen on
the runs it is then reported on would flatter it.
"""
import json
import os
import sys

DENSE, LEXICAL = "rrf:windows=dense", "rrf:windows=lexical"
NEAR = 0.1  # points of worst margin within which the mean decides
BATCH = "adapt=consensus"  # weights of the batch, not of the query


def margins(path):
    with open(os.path.join(path, "results.json"), encoding="utf-8") as f:
        res = json.load(f)
    nd = {c["name"]: 100 * c["results"]["mean"]["ndcg_cut_10"] for c in res["configs"]}
    for n in (DENSE, LEXICAL):
        if n not in nd:
            sys.exit("fusion-select: %s has no configuration %s" % (path, n))
    better = max(nd[DENSE], nd[LEXICAL])
    return {n: v - better for n, v in nd.items() if n not in (DENSE, LEXICAL)}, nd[DENSE], nd[LEXICAL]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    names = [a.split("=", 1)[0] if "=" in a else os.path.basename(os.path.normpath(a)) for a in args]
    runs = [a.split("=", 1)[1] if "=" in a else a for a in args]
    per = [margins(r) for r in runs]
    rules = [n for n in per[0][0] if all(n in m for m, _, _ in per)]
    rows = []
    for n in rules:
        v = [m[n] for m, _, _ in per]
        rows.append((n, v, min(v), sum(v) / len(v)))
    eligible = [r for r in rows if BATCH not in r[0]]
    top = max(r[2] for r in eligible)
    chosen = max((r for r in eligible if r[2] >= top - NEAR), key=lambda r: r[3])
    print("| rule | " + " | ".join(names) + " | worst | mean |")
    print("|---|" + "---:|" * (len(names) + 2))
    for n, v, worst, mean in sorted(rows, key=lambda r: (-r[2], -r[3])):
        mark = "**" if n == chosen[0] else ""
        note = " (batch)" if BATCH in n else ""
        print("| %s`%s`%s%s | %s | %+.2f | %+.2f |" % (mark, n, mark, note, " | ".join("%+.2f" % x for x in v), worst, mean))
    print("| dense rrf | " + " | ".join("%.2f" % d for _, d, _ in per) + " | | |")
    print("| lexical rrf | " + " | ".join("%.2f" % x for _, _, x in per) + " | | |")
    print("\nchosen: %s (worst %+.2f, mean %+.2f)" % (chosen[0], chosen[2], chosen[3]))


if __name__ == "__main__":
    main()
