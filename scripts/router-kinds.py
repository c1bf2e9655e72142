#!/usr/bin/env python3
"""Which query features move weight between kinds in a fusion model's
router (msrag tune with the kinds/1 feature set, e.g. the built-in
transfer): for each input, the mean of its coefficients over the lexical
channels minus the mean over the dense ones. Inputs are standardised, so
the value is the change in the log-odds of a lexical channel against a
dense one for one standard deviation of the feature; positive moves weight
to the lexical side. Also prints each feature's mean and standard
deviation over the training queries.

    python3 scripts/router-kinds.py FUSION_MODEL.json [LABEL=]FUSION_MODEL.json ...
"""
import json
import sys

KIND_FEATURES = ["kind-top", "kind-peak", "kind-agree", "kind-overlap", "kind-corr"]


def shifts(path):
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    r = m.get("router")
    if not r or r.get("features") != "kinds/1":
        sys.exit("router-kinds: %s has no router of feature set kinds/1" % path)
    wins = m["windows"]
    kinds = []
    for w in wins:
        k = w.get("kind", "dense")
        if k not in kinds:
            kinds.append(k)
    names = ["%s %s" % (k, f) for k in kinds for f in KIND_FEATURES] + ["agree %s" % w["name"] for w in wins]
    nw, n = len(r["windows"]), r["inputs"]
    if len(names) != n or len(r["w"]) != (n + 1) * nw:
        sys.exit("router-kinds: %s: %d inputs, %d coefficients for %d windows" % (path, n, len(r["w"]), nw))
    kind_of = {w["name"]: w.get("kind", "dense") for w in wins}
    lex = [i for i, w in enumerate(r["windows"]) if kind_of[w] == "lexical"]
    dense = [i for i, w in enumerate(r["windows"]) if kind_of[w] == "dense"]
    out = {}
    for j, name in enumerate(names):
        row = r["w"][j * nw:(j + 1) * nw]
        out[name] = (sum(row[i] for i in lex) / len(lex) - sum(row[i] for i in dense) / len(dense), r["mean"][j], r["std"][j])
    return out


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    labels = [a.split("=", 1)[0] if "=" in a else a for a in args]
    per = [shifts(a.split("=", 1)[1] if "=" in a else a) for a in args]
    names = sorted(per[0], key=lambda n: -abs(per[0][n][0]))
    print("| feature | " + " | ".join(labels) + " | mean | sd |")
    print("|---|" + "---:|" * (len(labels) + 2))
    for n in names:
        print("| %s | %s | %.3f | %.3f |" % (n, " | ".join("%+.3f" % p[n][0] for p in per if n in p), per[0][n][1], per[0][n][2]))


if __name__ == "__main__":
    main()
