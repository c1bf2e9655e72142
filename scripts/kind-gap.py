#!/usr/bin/env python3
"""Where the lexical kind leads the dense one, by query length: for each
run of msrag eval (with rrf:windows=dense and rrf:windows=lexical among its
configurations), each query's nDCG@10 under lexical RRF minus under dense
RRF, averaged within bins of the query's length in words (whitespace-split
text of the dataset's queries.jsonl.gz). Label-free features are only
useful for weighing kinds where such a gap follows them.

    python3 scripts/kind-gap.py DATASET_DIR=RUN_DIR ...
"""
import gzip
import json
import os
import sys

BINS = [(1, 5), (6, 10), (11, 20), (21, 40), (41, 80), (81, 10**9)]


def gaps(data, run):
    with gzip.open(os.path.join(data, "queries.jsonl.gz"), "rt", encoding="utf-8") as f:
        words = {q["_id"]: len(q["text"].split()) for q in map(json.loads, f)}
    with open(os.path.join(run, "results.json"), encoding="utf-8") as f:
        res = json.load(f)
    per = {c["name"]: c["results"]["per_query"] for c in res["configs"]}
    d, l = per["rrf:windows=dense"], per["rrf:windows=lexical"]
    return [(words[q], 100 * (l[q]["ndcg_cut_10"] - d[q]["ndcg_cut_10"])) for q in d]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("| dataset | " + " | ".join("%d-%s words" % (a, b if b < 10**9 else "") for a, b in BINS) + " | all |")
    print("|---|" + "---:|" * (len(BINS) + 1))
    for arg in sys.argv[1:]:
        data, run = arg.split("=", 1)
        g = gaps(data, run)
        cells = []
        for a, b in BINS:
            v = [x for n, x in g if a <= n <= b]
            cells.append("%+.1f (%d)" % (sum(v) / len(v), len(v)) if v else "")
        print("| %s | %s | %+.1f (%d) |" % (os.path.basename(os.path.normpath(data)), " | ".join(cells), sum(x for _, x in g) / len(g), len(g)))


if __name__ == "__main__":
    main()
