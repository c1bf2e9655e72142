#!/usr/bin/env python3
"""Embedding throughput: msrag against Python onnxruntime on the same work.

Both sides embed the same SciFact passages cut into windows of --window content tokens
(the tokenizer is Hugging Face `tokenizers` here, so both get identical ids), with the
model's passage prefix and special tokens added, in the same batches (msrag's plan:
length-sorted, padded tokens per batch <= 8192), with the same number of intra-op
threads. msrag runs as `msrag embed --ids --stats` (its model time, excluding start-up
and reading input); Python onnxruntime runs the same batches in this process.

Reported per model: real tokens/s (padding excluded), chunks/s, padding as a share of
real tokens, achieved GFLOP/s (2 x the encoder's multiply-adds per token: per layer
4h^2 for Q, K, V and the output projection, 2hi for the feed-forward, 2Lh for the
attention scores and their weighted sum, L the sequence length), and next to it the
single-precision matrix-multiply peak of this machine (numpy's OpenBLAS sgemm,
4096x4096, same threads).

Run:

    $HOME/.cache/msrag/venv/embed/bin/python scripts/bench_embed.py --chunks 256 --passes 3 --repeat 3 \
        --models e5-small-v2 e5-small-v2-int8 all-minilm-l6-v2 all-minilm-l6-v2-int8

Peak memory (flat in the number of chunks, bounded by the batch):

    $HOME/.cache/msrag/venv/embed/bin/python scripts/bench_embed.py --memory 1000 4000 --models all-minilm-l6-v2-int8
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_embeddings import plan_batches  # noqa: E402  (the same batch plan as msrag)


def windows(model_dir, info, n_chunks, window, data):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    out = []
    with gzip.open(os.path.join(data, "scifact/corpus.jsonl.gz"), "rt") as f:
        for line in f:
            d = json.loads(line)
            ids = tok.encode(d["text"], add_special_tokens=False).ids
            for lo in range(0, len(ids), window):
                out.append(ids[lo:lo + window])
                if len(out) >= n_chunks:
                    return tok, out
    return tok, out


def full_ids(tok, info, seqs):
    prefix = tok.encode(info["passage_prefix"], add_special_tokens=False).ids if info["passage_prefix"] else []
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    return [[cls] + prefix + s + [sep] for s in seqs]


def flops_per_token(info, seq_len):
    h, i, layers = info["hidden"], info["intermediate"], info["layers"]
    return 2 * layers * (4 * h * h + 2 * h * i + 2 * seq_len * h)


def python_ort(model_dir, info, full, threads):
    """Returns (run, padded): run() embeds all batches once and returns seconds."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    path = os.path.join(model_dir, "model.onnx")
    names = {i.name for i in ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).get_inputs()}
    batches = plan_batches([len(s) for s in full])
    feeds = []
    for idx in batches:
        L = max(len(full[i]) for i in idx)
        ids = np.zeros((len(idx), L), dtype=np.int64)
        mask = np.zeros((len(idx), L), dtype=np.int64)
        for r, i in enumerate(idx):
            ids[r, :len(full[i])] = full[i]
            mask[r, :len(full[i])] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        feeds.append((idx, feed))

    def run():
        # A new session each time, as each msrag run is a new process: neither side
        # gets memory plans cached from an earlier pass over the same shapes.
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        t0 = time.perf_counter()
        for idx, feed in feeds:
            h = sess.run([info["output"]], feed)[0]
            m = feed["attention_mask"][:, :, None].astype(np.float32)
            v = (h * m).sum(1) / m.sum(1) if info["pooling"] == "mean" else h[:, 0]
            v /= np.linalg.norm(v, axis=1, keepdims=True)
        return time.perf_counter() - t0
    padded = sum(len(idx) * max(len(full[i]) for i in idx) for idx, _ in feeds)
    return run, padded


def msrag_run(msrag, model, seqs, threads, repeat, time_v=False):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for s in seqs:
            f.write(json.dumps(s) + "\n")
        path = f.name
    best, stats, rss = None, None, None
    try:
        for _ in range(repeat):
            cmd = [msrag, "embed", "--ids", "--stats", "--model", model, "--threads", str(threads),
                   "--format", "npy", "--out", os.devnull]
            if time_v:
                cmd = ["/usr/bin/time", "-v"] + cmd
            with open(path) as stdin:
                p = subprocess.run(cmd, stdin=stdin, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("msrag embed failed: " + p.stderr)
            m = re.search(r"embed: (\d+) sequences, (\d+) tokens, (\d+) padded tokens .* model time ([\d.]+)s", p.stderr)
            dt = float(m.group(4))
            if best is None or dt < best:
                best, stats = dt, (int(m.group(2)), int(m.group(3)))
            r = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
            if r:
                rss = int(r.group(1))
    finally:
        os.unlink(path)
    return best, stats, rss


def sgemm_peak(threads, n=4096):
    a = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(2).standard_normal((n, n), dtype=np.float32)
    a @ b
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        a @ b
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return 2 * n ** 3 / best / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", default=["e5-small-v2", "e5-small-v2-int8"])
    ap.add_argument("--chunks", type=int, default=256)
    ap.add_argument("--window", type=int, default=200)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--data", default=os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data"))
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--msrag", help="msrag binary (default: built into $HOME/.cache/msrag/bin)")
    ap.add_argument("--memory", type=int, nargs="*", help="chunk counts for the peak RSS run (instead of throughput)")
    args = ap.parse_args()

    msrag = args.msrag
    if not msrag:
        msrag = os.path.join(args.cache, "bin", "msrag")
        subprocess.run(["go", "build", "-o", msrag, "./cmd/msrag"], cwd=ROOT, check=True)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    print("machine: %d cores (nproc), shared; threads %d; onnxruntime %s (python); window %d tokens" % (
        os.cpu_count(), args.threads, ort.__version__, args.window))

    if args.memory:
        for name in args.models:
            model_dir = os.path.join(args.cache, "models", name)
            info = json.load(open(os.path.join(model_dir, "msrag-model.json")))
            n_max = max(args.memory)
            _, seqs = windows(model_dir, info, n_max, args.window, args.data)
            while len(seqs) < n_max:  # repeat the corpus for large counts
                seqs = seqs + seqs[:n_max - len(seqs)]
            print("%-22s %8s %10s %14s" % ("model", "chunks", "tokens", "peak RSS MiB"))
            for n in args.memory:
                dt, (tokens, padded), rss = msrag_run(msrag, name, seqs[:n], args.threads, 1, time_v=True)
                print("%-22s %8d %10d %14.1f" % (name, n, tokens, rss / 1024))
        return

    print("%d chunks x %d passes; best of %d alternating runs" % (args.chunks, args.passes, args.repeat))
    peak = sgemm_peak(args.threads)
    print("sgemm peak (numpy %s, OpenBLAS, 4096^3): %.1f GFLOP/s" % (np.__version__, peak))
    print()
    hdr = "%-22s %-6s %7s %9s %10s %9s %8s %9s %7s" % (
        "model", "engine", "chunks", "tokens", "tokens/s", "chunks/s", "padding", "GFLOP/s", "vs py")
    print(hdr)
    print("-" * len(hdr))
    for name in args.models:
        model_dir = os.path.join(args.cache, "models", name)
        info = json.load(open(os.path.join(model_dir, "msrag-model.json")))
        tok, seqs = windows(model_dir, info, args.chunks, args.window, args.data)
        # Each chunk --passes times: both sides then see every batch shape more than
        # once in one session, as a long run does, and start-up weighs less.
        seqs = seqs * args.passes
        full = full_ids(tok, info, seqs)
        real = sum(len(s) for s in full)
        flops = sum(flops_per_token(info, len(s)) * len(s) for s in full)
        # Alternate the two engines and keep the best of each: the cores are shared,
        # and alternating exposes both to the same load.
        py_run, py_padded = python_ort(model_dir, info, full, args.threads)
        py_dt = ms_dt = None
        for _ in range(args.repeat):
            dt = py_run()
            py_dt = dt if py_dt is None else min(py_dt, dt)
            dt, (ms_tokens, ms_padded), _ = msrag_run(msrag, name, seqs, args.threads, 1)
            ms_dt = dt if ms_dt is None else min(ms_dt, dt)
        if ms_tokens != real:
            sys.exit("msrag counted %d tokens, python %d" % (ms_tokens, real))
        for engine, dt, padded in (("python", py_dt, py_padded), ("msrag", ms_dt, ms_padded)):
            print("%-22s %-6s %7d %9d %10.0f %9.1f %7.2f%% %9.1f %6.2fx" % (
                name, engine, len(seqs), real, real / dt, len(seqs) / dt, 100 * (padded - real) / real,
                flops / dt / 1e9, py_dt / dt))
    print()
    print("GFLOP/s counts the fp32-equivalent multiply-adds (also for int8 models); peak is the sgemm above.")


if __name__ == "__main__":
    main()
