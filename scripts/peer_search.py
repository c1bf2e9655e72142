#!/usr/bin/env python3
"""Multi-window search + RRF: msrag against the same done with FAISS's Python package and NumPy.

Both sides search the SAME index files with the SAME query vectors:

  msrag  scripts/searchbench (Index.SearchVectors + Index.Fuse), linked to
         Debian's libfaiss 1.7.3;
  peer   this file's worker: faiss.read_index on DIR/index/w100.faiss etc. and
         the chunk tables (w100.chunks.parquet, column doc_idx) read with pyarrow,
         searched window after window with index.search(queries, 100), then RRF
         exactly as docs/DESIGN says (score 1 / (rank + 1), ranks from 0, every
         retrieved chunk votes for its document) in NumPy: one np.bincount over
         (query, document) keys per block of queries, np.argpartition for the
         top 10 and a sort of those 10 (ties by document row);
         run by Debian's python3 with python3-faiss 1.7.3 (the same FAISS
         release, build and OpenBLAS as msrag) from a virtual environment at
         $HOME/.cache/msrag/venv/peer that sees the system packages and adds pyarrow.

The index: SciFact (5,183 documents), windows 100, 200, 500, the 384-dim hash
test embedder, Flat inner product. The queries: SciFact's 1,109 queries embedded
with that embedder and repeated to 10,000, each repeat with a little Gaussian
noise (scripts/searchbench -prepare writes them to DIR/queries.npy).

Rounds: each round runs both sides once (each a fresh process that loads the
index, does one untimed pass, then --reps timed passes over all 10,000 queries),
in an order rotated from round to round, with OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS = --threads for both. Prints the median queries/s of
search + fuse, the split between search and fusion, and how far the two top-10
rankings agree.

Usage (from the repository root):
  scripts/peer_search.py                      # 2 threads, 3 rounds x 3 passes
  scripts/peer_search.py --threads 1 --rounds 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
VENV = os.path.join(CACHE, "venv", "peer")
GO_BIN = os.path.join(CACHE, "bin", "searchbench")
K_WINDOW, K = 100, 10


def worker(args):
    """Time search + fuse in this interpreter; print one JSON line, write the top 10."""
    import faiss
    import numpy as np
    import pyarrow.parquet as pq

    faiss.omp_set_num_threads(args.threads)
    idir = os.path.join(args.dir, "index")
    with open(os.path.join(idir, "manifest.json")) as f:
        man = json.load(f)
    ids = pq.read_table(os.path.join(idir, man["docs_file"]), columns=["doc_id"]).column(0).to_pylist()
    ndocs = len(ids)
    indexes, chunk_doc = [], []
    for w in man["windows"]:
        indexes.append(faiss.read_index(os.path.join(idir, w["index_file"])))
        col = pq.read_table(os.path.join(idir, w["chunks_file"]), columns=["doc_idx"]).column(0)
        chunk_doc.append(col.to_numpy().astype(np.int64))
    queries = np.load(os.path.join(args.dir, "queries.npy"))
    nq = queries.shape[0]
    weight = 1.0 / (np.arange(K_WINDOW, dtype=np.float64) + 1.0)  # rank r (from 0) weighs 1/(r+1)

    def search(q):
        return [ix.search(q, K_WINDOW)[1] for ix in indexes]

    def fuse(labels, block=1024):
        top_docs = np.empty((nq, K), dtype=np.int64)
        top_scores = np.empty((nq, K), dtype=np.float64)
        for lo in range(0, nq, block):
            hi = min(nq, lo + block)
            n = hi - lo
            base = (np.arange(n, dtype=np.int64) * ndocs)[:, None]
            keys = np.concatenate([(base + cd[lab[lo:hi]]).ravel() for lab, cd in zip(labels, chunk_doc)])
            wts = np.tile(weight, n * len(labels))
            scores = np.bincount(keys, weights=wts, minlength=n * ndocs).reshape(n, ndocs)
            part = np.argpartition(-scores, K, axis=1)[:, :K]
            ps = np.take_along_axis(scores, part, axis=1)
            order = np.lexsort((part, -np.round(ps, 9)), axis=-1)
            top_docs[lo:hi] = np.take_along_axis(part, order, axis=1)
            top_scores[lo:hi] = np.take_along_axis(ps, order, axis=1)
        return top_docs, top_scores

    fuse(search(queries))  # untimed, as on the Go side
    search_s, fuse_s = [], []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        labels = search(queries)
        t1 = time.perf_counter()
        top_docs, top_scores = fuse(labels)
        t2 = time.perf_counter()
        search_s.append(t1 - t0)
        fuse_s.append(t2 - t1)
    write_top(os.path.join(args.dir, "peer_top10.tsv"), ids, top_docs, top_scores)

    # Untimed check: the same fusion after putting tied chunks and tied documents
    # in msrag's canonical order (chunks: score, then document id, then byte
    # start; documents: fused score, then id), which FAISS's order among equal
    # scores need not match. With it the rankings should agree exactly.
    idrank = np.empty(ndocs, dtype=np.int64)
    idrank[np.argsort(np.array(ids, dtype=object), kind="stable")] = np.arange(ndocs)
    byte_start = [pq.read_table(os.path.join(idir, w["chunks_file"]), columns=["byte_start"]).column(0).to_numpy()
                  for w in man["windows"]]
    canon = []
    for ix, cd, bs in zip(indexes, chunk_doc, byte_start):
        dist, lab = ix.search(queries, K_WINDOW + 32)
        order = np.lexsort((bs[lab], idrank[cd[lab]], -dist), axis=-1)[:, :K_WINDOW]
        canon.append(np.take_along_axis(lab, order, axis=1))
    chunk_doc[:] = [idrank[cd] for cd in chunk_doc]
    top_docs, top_scores = fuse(canon)
    byrank = np.argsort(idrank)
    write_top(os.path.join(args.dir, "peer_top10_canonical.tsv"), ids, byrank[top_docs], top_scores)
    print(json.dumps({"nq": nq, "search_s": search_s, "fuse_s": fuse_s, "faiss": faiss.__version__,
                      "numpy": np.__version__}))


def write_top(path, ids, top_docs, top_scores):
    with open(path, "w") as f:
        for drow, srow in zip(top_docs, top_scores):
            f.write("\t".join(f"{ids[d]}:{s:.9g}" for d, s in zip(drow, srow) if s > 0) + "\n")


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        # Debian's python3 with its python3-faiss and numpy, plus pyarrow (16.x
        # still takes NumPy 1.x).
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "pyarrow==16.1.0"], check=True)
    return python


def read_top(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            rows.append([(p.rsplit(":", 1)[0], float(p.rsplit(":", 1)[1])) for p in line.split("\t")] if line else [])
    return rows


def agreement(dir_, peer_file):
    a, b = read_top(os.path.join(dir_, "msrag_top10.tsv")), read_top(os.path.join(dir_, peer_file))
    assert len(a) == len(b), (len(a), len(b))
    same_list = same_set = same_scores = 0
    for ra, rb in zip(a, b):
        ia, ib = [d for d, _ in ra], [d for d, _ in rb]
        same_list += ia == ib
        same_set += set(ia) == set(ib)
        same_scores += len(ra) == len(rb) and all(abs(x - y) <= 1e-6 * max(1, abs(x)) for (_, x), (_, y) in zip(ra, rb))
    return len(a), same_list, same_set, same_scores


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default="/tmp/msrag-searchbench", help="work directory (index, queries, rankings)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3, help="timed passes per process")
    ap.add_argument("--data", default=os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data"))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return

    os.chdir(ROOT)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    subprocess.run(["go", "build", "-o", GO_BIN, "./scripts/searchbench"], check=True)
    subprocess.run([GO_BIN, "-dir", args.dir, "-data", args.data, "-prepare"], check=True, env=env)
    python = ensure_venv()
    cmds = {
        "msrag": [GO_BIN, "-dir", args.dir, "-reps", str(args.reps)],
        "peer": [python, os.path.abspath(__file__), "--worker", "--dir", args.dir, "--threads", str(args.threads),
                 "--reps", str(args.reps)],
    }
    names = list(cmds)
    res = {n: {"qps": [], "search": [], "fuse": []} for n in names}
    for r in range(args.rounds):
        for n in names[r % 2:] + names[:r % 2]:
            out = subprocess.run(cmds[n], check=True, env=env, capture_output=True, text=True).stdout
            j = json.loads(out.strip().splitlines()[-1])
            for s, fz in zip(j["search_s"], j["fuse_s"]):
                res[n]["qps"].append(j["nq"] / (s + fz))
                res[n]["search"].append(s)
                res[n]["fuse"].append(fz)
            print(f"round {r + 1} {n}: " + " ".join(f"{q:.0f}" for q in res[n]["qps"][-args.reps:]) + " q/s",
                  file=sys.stderr, flush=True)
    med = {n: {k: statistics.median(v) for k, v in res[n].items()} for n in names}
    print(f"threads {args.threads}, {args.rounds} rounds x {args.reps} passes of 10,000 queries; medians over passes")
    print()
    print("| side | search+fuse q/s | search s | fuse s | fuse / search |")
    print("|---|---:|---:|---:|---:|")
    for n in names:
        m = med[n]
        print(f"| {n} | {m['qps']:.0f} | {m['search']:.3f} | {m['fuse']:.3f} | {100 * m['fuse'] / m['search']:.1f}% |")
    print()
    print(f"msrag / peer (search+fuse q/s): {med['msrag']['qps'] / med['peer']['qps']:.2f}; "
          f"fusion alone: peer fuse s / msrag fuse s = {med['peer']['fuse'] / med['msrag']['fuse']:.1f}")
    for what, f in (("as timed (FAISS's tie order)", "peer_top10.tsv"),
                    ("ties in msrag's order (untimed)", "peer_top10_canonical.tsv")):
        nq, same_list, same_set, same_scores = agreement(args.dir, f)
        print(f"top-10 agreement, peer {what}, over {nq} queries: identical lists {same_list} "
              f"({100 * same_list / nq:.2f}%), identical sets {same_set} ({100 * same_set / nq:.2f}%), "
              f"identical score sequences {same_scores} ({100 * same_scores / nq:.2f}%)")


if __name__ == "__main__":
    main()
