#!/usr/bin/env python3
"""Checks msrag's embeddings against an independent reference, and writes the
reference vectors that the Go tests compare with.

Reference: Hugging Face `tokenizers` (the Rust tokenizer, not msrag's) on the same
tokenizer.json, truncated to the model's max_tokens, and Python `onnxruntime` (the
same version as the library msrag loads) on the same model.onnx, pooled and
normalised as msrag-model.json says (mean pooling as sentence-transformers does it).
msrag's side: `msrag embed --format jsonl` run as a subprocess.

Texts: documents and queries from msrag's cache (SciFact and QMSum, scripts/fetch-data.sh; QMSum
meetings are far longer than any model's limit, so they test truncation). Documents
are embedded as passages, queries as queries.

Run (after scripts/setup.sh and scripts/fetch-model.sh NAME):

    python3 -m venv $HOME/.cache/msrag/venv/embed
    $HOME/.cache/msrag/venv/embed/bin/pip install onnxruntime==1.30.0 tokenizers numpy
    $HOME/.cache/msrag/venv/embed/bin/python scripts/check_embeddings.py            # every fetched model
    $HOME/.cache/msrag/venv/embed/bin/python scripts/check_embeddings.py --models e5-small-v2

Golden files for the Go tests (onnx/testdata/ref-NAME.json.gz):

    $HOME/.cache/msrag/venv/embed/bin/python scripts/check_embeddings.py --golden \
        --models all-minilm-l6-v2 all-minilm-l6-v2-int8 e5-small-v2 e5-small-v2-int8 \
                 bge-small-en-v1.5 bge-small-en-v1.5-int8

The check fails (exit 1) when any text's cosine with the reference is below
--min-cosine (default 0.99999).

Second reference, sentence-transformers on PyTorch, where a model's fp32 PyTorch
weights can be had (scripts/fetch-st-reference.sh; today all-minilm-l6-v2 only):
the model's own tokenizer (transformers), forward pass and pooling, none of them
shared with msrag or with the ONNX export. Threshold --st-min-cosine (0.999).

    python3 -m venv $HOME/.cache/msrag/venv/st
    $HOME/.cache/msrag/venv/st/bin/pip install torch==2.15.0 sentence-transformers==6.2.0 onnxruntime==1.30.0 tokenizers
    scripts/fetch-st-reference.sh
    $HOME/.cache/msrag/venv/st/bin/python scripts/check_embeddings.py --models all-minilm-l6-v2 \
        --st all-minilm-l6-v2=$HOME/.cache/msrag/st/all-minilm-l6-v2
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")


def read_jsonl_gz(path, n):
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            out.append(json.loads(line))
            if len(out) >= n:
                break
    return out


def load_texts(data, golden):
    """Returns [(text, role, source)]: a fixed, ordered selection."""
    if golden:
        n_sci, n_qm, n_sciq, n_qmq = 14, 4, 12, 4
    else:
        n_sci, n_qm, n_sciq, n_qmq = 360, 60, 80, 40
    items = []
    for d in read_jsonl_gz(os.path.join(data, "scifact/corpus.jsonl.gz"), n_sci):
        text = d["text"] if len(items) % 2 else (d["title"] + ". " + d["text"])
        items.append((text, "passage", "scifact:" + d["_id"]))
    for d in read_jsonl_gz(os.path.join(data, "qmsum/corpus.jsonl.gz"), n_qm):
        items.append((d["text"], "passage", "qmsum:" + d["_id"]))
    for q in read_jsonl_gz(os.path.join(data, "scifact/queries.jsonl.gz"), n_sciq):
        items.append((q["text"], "query", "scifact-q:" + q["_id"]))
    for q in read_jsonl_gz(os.path.join(data, "qmsum/queries.jsonl.gz"), n_qmq):
        items.append((q["text"], "query", "qmsum-q:" + q["_id"]))
    if golden:
        # Edge cases a corpus lacks: empty, whitespace, accents, CJK, emoji.
        for t in ["", "   ", "Café naïve résumé", "東京は日本の首都です", "unicode 🙂 smile"]:
            items.append((t, "query", "edge"))
    return items


def plan_batches(lens, budget=8192, max_batch=256, max_padding=0.05):
    """The batches of msrag's onnx package (planBatches, default Options): indices
    sorted by length, longest first (stable); a batch grows while size x longest
    length stays within budget, size within max_batch, and its padding within
    max_padding of its real tokens."""
    order = sorted(range(len(lens)), key=lambda i: -lens[i])
    batches, lo = [], 0
    while lo < len(order):
        seq_len = max(lens[order[lo]], 1)
        hi, real = lo + 1, lens[order[lo]]
        while hi < len(order) and hi - lo < max_batch and (hi - lo + 1) * seq_len <= budget:
            r = real + lens[order[hi]]
            if (hi - lo + 1) * seq_len - r > max_padding * r:
                break
            hi, real = hi + 1, r
        batches.append(order[lo:hi])
        lo = hi
    return batches


def dynamically_quantized(model_path):
    """Whether the model quantizes activations at run time: its graph holds an
    op type starting DynamicQuantize (a plain byte search of the protobuf)."""
    with open(model_path, "rb") as f:
        return b"DynamicQuantize" in f.read()


def reference(model_dir, info, texts, roles, threads, batching="auto"):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(info["max_tokens"])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so, providers=["CPUExecutionProvider"])
    input_names = {i.name for i in sess.get_inputs()}
    prefix = {"query": info["query_prefix"], "passage": info["passage_prefix"]}
    encs = tok.encode_batch([prefix[r] + t for t, r in zip(texts, roles)])
    out = np.zeros((len(texts), info["dims"]), dtype=np.float32)
    ntok = 0
    # The batches msrag forms: one call per role, then plan_batches, or one
    # text per run with msrag's --batching single (its default, auto, for a
    # dynamically quantized model). Dynamically quantized (int8) models scale
    # activations per batch, so their vectors depend on the batch a text is
    # in; the same batches make the comparison exact.
    if batching == "auto":
        batching = "single" if dynamically_quantized(os.path.join(model_dir, "model.onnx")) else "padded"
    for role in ("passage", "query"):
        members = [i for i, r in enumerate(roles) if r == role]
        plan = plan_batches([len(encs[i].ids) for i in members], max_batch=1 if batching == "single" else 256)
        for idx in plan:
            idx = [members[k] for k in idx]
            L = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), L), dtype=np.int64)
            mask = np.zeros((len(idx), L), dtype=np.int64)
            for r, i in enumerate(idx):
                e = encs[i].ids
                ids[r, :len(e)] = e
                mask[r, :len(e)] = 1
                ntok += len(e)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in input_names:
                feed["token_type_ids"] = np.zeros_like(ids)
            h = sess.run([info["output"]], feed)[0]
            if h.ndim == 2:
                v = h
            elif info["pooling"] == "cls":
                v = h[:, 0, :]
            else:
                m = mask[:, :, None].astype(np.float32)
                v = (h * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            if info["normalize"]:
                v = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
            out[idx] = v
    max_len = max(len(e.ids) for e in encs)
    return out, ntok, max_len


def msrag_vectors(msrag, model, texts, roles, batching="auto"):
    out = [None] * len(texts)
    for role in ("passage", "query"):
        idx = [i for i, r in enumerate(roles) if r == role]
        if not idx:
            continue
        stdin = "".join(json.dumps(texts[i]) + "\n" for i in idx)
        p = subprocess.run([msrag, "embed", "--model", model, "--role", role, "--format", "jsonl",
                            "--batching", batching],
                           input=stdin.encode(), capture_output=True, check=False)
        if p.returncode != 0:
            sys.exit("msrag embed failed: " + p.stderr.decode())
        lines = p.stdout.decode().splitlines()
        if len(lines) != len(idx):
            sys.exit("msrag embed: %d vectors for %d texts" % (len(lines), len(idx)))
        for i, line in zip(idx, lines):
            out[i] = json.loads(line)["vector"]
    return np.array(out, dtype=np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="*", help="model names (default: every fetched built-in model)")
    ap.add_argument("--data", default=os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data"))
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--msrag", help="msrag binary (default: built into $HOME/.cache/msrag/bin)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--min-cosine", type=float, default=0.99999)
    ap.add_argument("--st", action="append", default=[], metavar="MODEL=DIR",
                    help="also compare MODEL with the sentence-transformers directory DIR (PyTorch)")
    ap.add_argument("--st-min-cosine", type=float, default=0.999)
    ap.add_argument("--batching", default="auto", choices=["auto", "padded", "single"],
                    help="msrag's --batching, mirrored by the reference (auto: single for a dynamically quantized model)")
    ap.add_argument("--golden", action="store_true", help="write onnx/testdata/ref-NAME.json.gz for a few dozen texts")
    args = ap.parse_args()

    models_json = json.load(open(os.path.join(ROOT, "onnx/models.json")))["models"]
    builtin = {m["name"]: m for m in models_json}
    names = args.models or [m for m in builtin if os.path.isfile(os.path.join(args.cache, "models", m, "msrag-model.json"))]

    st_dirs = dict(x.split("=", 1) for x in args.st)
    items = load_texts(args.data, args.golden)
    texts = [t for t, _, _ in items]
    roles = [r for _, r, _ in items]

    if args.golden:
        for name in names:
            model_dir = os.path.join(args.cache, "models", name)
            info = json.load(open(os.path.join(model_dir, "msrag-model.json")))
            ref, _, _ = reference(model_dir, info, texts, roles, args.threads, args.batching)
            path = os.path.join(ROOT, "onnx/testdata/ref-%s.json.gz" % name)
            doc = {
                "model": name,
                "sha256": info["sha256"],
                "generator": "scripts/check_embeddings.py --golden (tokenizers %s, onnxruntime %s)" % (
                    __import__("tokenizers").__version__, ort.__version__),
                "texts": [{"text": t, "role": r, "source": s, "vector": [float("%.8g" % x) for x in v]}
                          for (t, r, s), v in zip(items, ref)],
            }
            with gzip.GzipFile(path, "wb", mtime=0) as f:
                f.write(json.dumps(doc, ensure_ascii=False).encode())
            print("wrote %s (%d texts)" % (path, len(items)))
        return

    msrag = args.msrag
    if not msrag:
        msrag = os.path.join(args.cache, "bin", "msrag")
        subprocess.run(["go", "build", "-o", msrag, "./cmd/msrag"], cwd=ROOT, check=True)

    print("texts: %d (%d passages, %d queries) from %s" % (len(texts), roles.count("passage"), roles.count("query"), args.data))
    print("reference: tokenizers %s + onnxruntime %s (python), %d threads" % (
        __import__("tokenizers").__version__, ort.__version__, args.threads))
    print()
    hdr = "%-24s %6s %8s %10s %12s %12s %8s %s" % ("model", "texts", "tokens", "max len", "min cosine", "mean cosine", "< min", "result")
    print(hdr)
    print("-" * len(hdr))
    failed = False
    for name in names:
        model_dir = os.path.join(args.cache, "models", name)
        info = json.load(open(os.path.join(model_dir, "msrag-model.json")))
        t0 = time.time()
        ref, ntok, max_len = reference(model_dir, info, texts, roles, args.threads, args.batching)
        got = msrag_vectors(msrag, name, texts, roles, args.batching)
        cos = (ref * got).sum(1) / (np.linalg.norm(ref, axis=1) * np.linalg.norm(got, axis=1))
        bad = int((cos < args.min_cosine).sum())
        failed |= bad > 0
        print("%-24s %6d %8d %10d %12.7f %12.7f %8d %s  (%.0fs)" % (
            name, len(texts), ntok, max_len, cos.min(), cos.mean(), bad, "ok" if bad == 0 else "FAIL", time.time() - t0))
        for i in np.argsort(cos)[:3]:
            if cos[i] < args.min_cosine:
                print("    lowest: %s (%s) cosine %.7f" % (items[i][2], roles[i], cos[i]))
        if name in st_dirs:
            t0 = time.time()
            ref = sentence_transformers_vectors(st_dirs[name], info, texts, roles, args.threads)
            cos = (ref * got).sum(1) / (np.linalg.norm(ref, axis=1) * np.linalg.norm(got, axis=1))
            bad = int((cos < args.st_min_cosine).sum())
            failed |= bad > 0
            print("%-24s %6d %8s %10s %12.7f %12.7f %8d %s  (%.0fs; vs sentence-transformers)" % (
                name + " (st)", len(texts), "", "", cos.min(), cos.mean(), bad,
                "ok" if bad == 0 else "FAIL", time.time() - t0))
            for i in np.argsort(cos)[:3]:
                print("    lowest vs st: %s (%s) cosine %.7f" % (items[i][2], roles[i], cos[i]))
    sys.exit(1 if failed else 0)


def sentence_transformers_vectors(st_dir, info, texts, roles, threads):
    """Vectors from sentence-transformers on PyTorch (fp32, CPU): its own
    tokenizer, truncation at the model's max_seq_length, pooling and Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(threads)
    m = SentenceTransformer(st_dir, device="cpu")
    if m.max_seq_length != info["max_tokens"]:
        sys.exit("%s: max_seq_length %d, msrag-model.json max_tokens %d" % (st_dir, m.max_seq_length, info["max_tokens"]))
    prefix = {"query": info["query_prefix"], "passage": info["passage_prefix"]}
    v = m.encode([prefix[r] + t for t, r in zip(texts, roles)], batch_size=32,
                 convert_to_numpy=True, normalize_embeddings=False)
    if info["normalize"]:
        v = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
    return v.astype(np.float32)


if __name__ == "__main__":
    main()
