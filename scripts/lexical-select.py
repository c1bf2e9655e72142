#!/usr/bin/env python3
"""Choose the default hybrid rule on training splits only.

    python3 scripts/lexical-select.py OUT/scifact-train/results.json OUT/nfcorpus-train/results.json ...

Reads msrag eval's results.json of each training run and prints, for every
hybrid configuration (one that fuses dense and lexical channels, label-free:
not the oracle, not learned), its nDCG@10 on each training set, its mean over
the sets and how far it is from the better of dense RRF and lexical RRF on
each. The rule with the best mean is chosen (the first of equal means in the
order the runs list them). Nothing here looks at a test or dev split.
"""
import json
import sys

METRIC = "ndcg_cut_10"


def load(path):
    with open(path) as f:
        e = json.load(f)
    means = {c["name"]: c["results"]["mean"][METRIC] for c in e["configs"] if "results" in c and c["results"].get("mean")}
    hybrid = [c["name"] for c in e["configs"] if c.get("channels") == "hybrid" and c["kind"] not in ("oracle", "learned")]
    return f'{e["dataset"]} {e["split"]}', means, hybrid


def main(paths):
    runs = [load(p) for p in paths]
    names = [n for n in runs[0][2] if all(n in m for _, m, _ in runs)]
    print("| rule | " + " | ".join(r[0] for r in runs) + " | mean | worst − better kind |")
    print("|---|" + "---:|" * (len(runs) + 2))
    best = None
    for n in names:
        vals = [m[n] for _, m, _ in runs]
        mean = sum(vals) / len(vals)
        worst = min(m[n] - max(m["rrf"], m["rrf:windows=lexical"]) for _, m, _ in runs)
        print(f"| `{n}` | " + " | ".join(f"{100 * v:.2f}" for v in vals) + f" | {100 * mean:.2f} | {100 * worst:+.2f} |")
        if best is None or mean > best[1]:
            best = (n, mean)
    for label, key in (("dense rrf", "rrf"), ("lexical rrf", "rrf:windows=lexical")):
        vals = [m[key] for _, m, _ in runs]
        print(f"| {label} | " + " | ".join(f"{100 * v:.2f}" for v in vals) + f" | {100 * sum(vals) / len(vals):.2f} | |")
    print(f"\nchosen: {best[0]} (mean nDCG@10 {100 * best[1]:.2f} over {len(runs)} training splits)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
