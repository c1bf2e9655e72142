#!/usr/bin/env python3
"""Exact inner-product search: msrag's Go binding against FAISS's Python package.

Runs the same searches (a Flat inner-product index of --nb random vectors of
--dim dimensions, k = --k, batches of --batches queries) through

  go      msrag's faiss package: BenchmarkSearch in faiss/bench_test.go, linked to
          Debian's libfaiss 1.7.3 (static) and OpenBLAS;
  debian  Debian's python3-faiss 1.7.3 (the same FAISS release and build, the
          same OpenBLAS), run by /usr/bin/python3;
  pip     the faiss-cpu wheel, in a virtual environment at $HOME/.cache/msrag/venv/faiss
          (created on first use), run by that environment's python;

with the same thread count (OMP_NUM_THREADS and OPENBLAS_NUM_THREADS), in
rounds: each round runs every peer once, in an order rotated from round to round,
so slow spells of a shared machine fall on all of them. It prints the median
queries/s of each peer per batch size and the ratio go / peer, as a Markdown
table.

Usage (from the repository root):
  scripts/bench_faiss.py                       # 100,000 x 384, k=100, 5 rounds, 2 threads
  scripts/bench_faiss.py --rounds 7 --threads 1
  scripts/bench_faiss.py --nb 20000 --rounds 2 --seconds 1   # quick check

Each peer builds its own random database (uniform in [-1, 1)); only the shape
matters for speed.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
VENV = os.path.join(CACHE, "venv", "faiss")
PIP_PACKAGES = ["faiss-cpu==1.15.1", "numpy"]


def worker(args):
    """Time the searches in this interpreter and print one JSON line."""
    import faiss
    import numpy as np

    faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(70)
    xb = rng.uniform(-1, 1, (args.nb, args.dim)).astype("float32")
    index = faiss.IndexFlatIP(args.dim)
    index.add(xb)
    del xb
    qps, cpu_qps = {}, {}
    for batch in args.batch_list:
        xq = rng.uniform(-1, 1, (batch, args.dim)).astype("float32")
        index.search(xq, args.k)  # untimed, as in the Go benchmark
        n = 0
        start, cpu0 = time.perf_counter(), time.process_time()
        while True:
            index.search(xq, args.k)
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= args.seconds:
                break
        cpu = time.process_time() - cpu0
        qps[str(batch)] = n * batch / elapsed
        cpu_qps[str(batch)] = n * batch / cpu
    print(json.dumps({"version": faiss.__version__, "threads": faiss.omp_get_max_threads(), "qps": qps,
                      "cpu_qps": cpu_qps}))


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PIP_PACKAGES, check=True)
    return python


def run_python(python, args, env):
    cmd = [python, os.path.abspath(__file__), "--worker", "--nb", str(args.nb), "--dim", str(args.dim),
           "--k", str(args.k), "--batches", args.batches, "--seconds", str(args.seconds),
           "--threads", str(args.threads)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


BENCH_LINE = re.compile(r"^BenchmarkSearch/batch=(\d+)\S*\s+\d+\s+.*?([\d.]+) queries/cpu-s\s+([\d.]+) queries/s")


def run_go(binary, args, env):
    env = dict(env, MSRAG_FAISS_BENCH_N=str(args.nb))
    cmd = [binary, "-test.run", "^$", "-test.bench", "^BenchmarkSearch$",
           "-test.benchtime", f"{args.seconds}s", "-test.v"]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=os.path.join(ROOT, "faiss")).stdout
    qps, cpu_qps, version = {}, {}, "?"
    for line in out.splitlines():
        m = BENCH_LINE.match(line.strip())
        if m:
            cpu_qps[m.group(1)] = float(m.group(2))
            qps[m.group(1)] = float(m.group(3))
        m = re.search(r"faiss (\S+), .* (\d+) threads", line)
        if m:
            version = m.group(1).rstrip(",")
    if set(qps) != set(str(b) for b in args.batch_list):
        sys.exit(f"bench_faiss: could not parse the Go benchmark output:\n{out}")
    return {"version": version, "qps": qps, "cpu_qps": cpu_qps}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nb", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--batches", default="1,32,1024")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=2.0, help="minimum timed seconds per batch size")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--peers", default="debian,pip", help="Python peers: debian, pip")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.batch_list = [int(b) for b in args.batches.split(",")]
    if args.worker:
        worker(args)
        return

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
    binary = os.path.join(CACHE, "bench", "faiss.test")
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    subprocess.run(["go", "test", "-c", "-o", binary, "./faiss"], cwd=ROOT, check=True)

    runners = {"go": lambda: run_go(binary, args, env)}
    for peer in args.peers.split(","):
        if peer == "debian":
            runners["debian"] = lambda: run_python("/usr/bin/python3", args, env)
        elif peer == "pip":
            python = ensure_venv()
            runners["pip"] = lambda python=python: run_python(python, args, env)
        else:
            sys.exit(f"bench_faiss: unknown peer {peer!r}")

    names = list(runners)
    results = {n: [] for n in names}
    cpu_results = {n: [] for n in names}
    versions = {}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            res = runners[n]()
            versions[n] = res["version"]
            results[n].append(res["qps"])
            cpu_results[n].append(res["cpu_qps"])
            print(f"round {r + 1} {n}: " + ", ".join(
                f"b{b}={res['qps'][str(b)]:.1f} ({res['cpu_qps'][str(b)]:.1f}/cpu-s)" for b in args.batch_list),
                file=sys.stderr, flush=True)

    peers = [n for n in names if n != "go"]
    for title, res in (("queries/s (wall clock)", results), ("queries per CPU-second", cpu_results)):
        def med(n, b):
            return statistics.median(q[str(b)] for q in res[n])

        print(f"\n{args.nb} x {args.dim} Flat inner product, k = {args.k}, {args.threads} threads, "
              f"median of {args.rounds} rounds, {title}\n")
        print("| batch | go (faiss " + versions["go"] + ") | " + " | ".join(
            f"{n} (faiss {versions[n]}) | go / {n}" for n in peers) + " |")
        print("|" + "---|" * (2 + 2 * len(peers)))
        for b in args.batch_list:
            print(f"| {b} | {med('go', b):.1f} | " + " | ".join(
                f"{med(n, b):.1f} | {med('go', b) / med(n, b):.2f}" for n in peers) + " |")
        print(f"\nall rounds, {title}:")
        for n in names:
            for b in args.batch_list:
                print(f"  {n} batch {b}: " + ", ".join(f"{q[str(b)]:.1f}" for q in res[n]))


if __name__ == "__main__":
    main()
