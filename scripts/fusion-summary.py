#!/usr/bin/env python3
"""The tables of docs/results.md's "Fusion across kinds" from reported runs
of msrag eval (scripts/fusion-results.sh): per dataset, nDCG@10 of dense
RRF, lexical RRF, the best single channel (chosen after the fact, which
flatters it), full, the previous default hybrid, the default RULE, the
transferred fusion model (the configuration its fit chose: learned+router
when its router beat the rule alone in cross-validation, else learned) and
the oracle; then paired comparisons on the same queries (difference, 95%
bootstrap interval of 10,000 resamplings with seed 1, queries won/tied/lost):
default - better kind, default - previous default, transfer - default,
transfer - better kind.

    python scripts/fusion-summary.py RULE LABEL=RUN_DIR=FUSION_MODEL ...

FUSION_MODEL is a fusion model file (msrag eval --fusion-model FILE), or
the name of a fusion msrag ships (--fusion-model transfer), whose
configuration is named after it.

RULE is a configuration name as results.json writes it; the better kind is
the better of rrf:windows=dense and rrf:windows=lexical on that run's
split. Needs NumPy (scripts/paired.py).
"""
import json
import os
import re
import sys

from paired import compare

DENSE, LEXICAL = "rrf:windows=dense", "rrf:windows=lexical"
BEFORE = "rrf:windows=all,weights=lexical:1.5,adapt=kind-top:1"  # the default before this choice
SINGLE = re.compile(r"^(w\d+|full|bm25-(w\d+|doc|full))$")
METRIC = "ndcg_cut_10"
BUILTIN = re.compile(r"^[a-z][a-z0-9-]*$")  # a built-in's name; a file's path has a "." or a "/"


def load(run, model):
    with open(os.path.join(run, "results.json"), encoding="utf-8") as f:
        res = json.load(f)
    per = {c["name"]: c["results"]["per_query"] for c in res["configs"]}
    mean = {c["name"]: 100 * c["results"]["mean"][METRIC] for c in res["configs"]}
    if DENSE not in mean and "rrf" in mean:  # rrf fuses the dense windows
        per[DENSE], mean[DENSE] = per["rrf"], mean["rrf"]
    if BUILTIN.match(model):
        return per, mean, model
    with open(model, encoding="utf-8") as f:
        router = (json.load(f).get("choice") or {}).get("router") or {}
    transfer = "learned+router" if router.get("beats_none") else "learned"
    return per, mean, transfer


def need(run, mean, *names):
    for n in names:
        if n not in mean:
            sys.exit("fusion-summary: %s has no configuration %r; it has %s" % (run, n, sorted(mean)))


def paired(per, a, b):
    m, lo, hi, w, t, l, _ = compare(per[a], per[b], METRIC)
    return "%+.2f [%+.2f, %+.2f] %d/%d/%d" % (100 * m, 100 * lo, 100 * hi, w, t, l)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rule, scores, pairs = sys.argv[1], [], []
    for arg in sys.argv[2:]:
        label, run, model = arg.split("=", 2)
        per, mean, transfer = load(run, model)
        need(run, mean, DENSE, LEXICAL, BEFORE, rule, transfer, "full", "oracle")
        better = DENSE if mean[DENSE] >= mean[LEXICAL] else LEXICAL
        single = max((n for n in mean if SINGLE.match(n)), key=mean.get)
        scores.append("| %s | %.2f | %.2f | %.2f (%s) | %.2f | %.2f | %.2f | %.2f (%s) | %.2f |" % (
            label, mean[DENSE], mean[LEXICAL], mean[single], single, mean["full"], mean[BEFORE],
            mean[rule], mean[transfer], transfer, mean["oracle"]))
        pairs.append("| %s | %s | %s | %s | %s | %s |" % (label, "lexical" if better == LEXICAL else "dense",
                                                          paired(per, better, rule), paired(per, BEFORE, rule),
                                                          paired(per, rule, transfer), paired(per, better, transfer)))
    print("| dataset | dense RRF | lexical RRF | best single channel (after the fact) | full | previous default `%s` | default `%s` | transfer | oracle |" % (BEFORE, rule))
    print("|---|" + "---:|" * 8)
    print("\n".join(scores))
    print("\n| dataset | better kind | default - better kind | default - previous default | transfer - default | transfer - better kind |")
    print("|---|---|---:|---:|---:|---:|")
    print("\n".join(pairs))


if __name__ == "__main__":
    main()
