#!/usr/bin/env python3
"""Exports the Transformer module of a sentence-transformers model directory
(SentenceTransformer.save: modules.json, config.json, model.safetensors,
tokenizer files) to ONNX, and writes sentence-transformers' own vectors of the
texts msrag checks the export with.

msrag runs it (msrag model import DIR, or a hub model without an ONNX file) in
the venv that scripts/setup-export.sh makes, every package pinned by version
and wheel sha256 (scripts/export-requirements.txt):

    python st_export.py --model DIR --base PATH --out model.onnx \
        --texts texts.jsonl --vectors vectors.json

The export: transformers' AutoModel of DIR/PATH (never the repository's own
code: trust_remote_code stays off), wrapped so that its inputs are the
tokenizer's model_input_names (input_ids, attention_mask, and token_type_ids
where the tokenizer makes them) and its one output is last_hidden_state, with
batch and sequence axes dynamic; torch.onnx.export's TorchScript exporter,
opset 17, weights kept fp32.

The reference: SentenceTransformer(DIR) on the CPU, each text of texts.jsonl
({"text", "role"}) through encode_query (role query) or encode_document (role
passage), which is what MTEB calls: its own tokenizer, truncation to
max_seq_length, prompts, pooling and normalisation. vectors.json holds one
vector per text, in order. The versions of both are printed as one JSON line
on standard output.
"""
import argparse
import json
import os
import sys

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoTokenizer

OPSET = 17


class LastHidden(torch.nn.Module):
    """The encoder with named inputs and last_hidden_state as its one output."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *inputs):
        return self.model(**dict(zip(self.names, inputs))).last_hidden_state


def export(model_dir, out):
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, trust_remote_code=False, torch_dtype=torch.float32).eval()
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in tok.model_input_names]
    sample = tok(["a first sample text", "a second and somewhat longer sample text"], padding=True, return_tensors="pt")
    args = tuple(sample[n] for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(LastHidden(model, names), args, out, input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True, dynamo=False)


def reference(model_dir, texts_path, vectors_path):
    st = SentenceTransformer(model_dir, device="cpu", trust_remote_code=False)
    items = [json.loads(line) for line in open(texts_path, encoding="utf-8")]
    out = [None] * len(items)
    for role, encode in (("query", st.encode_query), ("passage", st.encode_document)):
        idx = [i for i, it in enumerate(items) if it["role"] == role]
        if not idx:
            continue
        vecs = encode([items[i]["text"] for i in idx], batch_size=16, convert_to_numpy=True, show_progress_bar=False)
        for i, v in zip(idx, np.asarray(vecs, dtype=np.float64)):
            out[i] = v.tolist()
    with open(vectors_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="the sentence-transformers directory")
    ap.add_argument("--base", default="", help="the Transformer module's path in it (modules.json)")
    ap.add_argument("--out", required=True, help="the ONNX file to write")
    ap.add_argument("--texts", required=True, help="JSON lines {text, role}")
    ap.add_argument("--vectors", required=True, help="where sentence-transformers' vectors go")
    a = ap.parse_args()
    torch.manual_seed(0)
    export(os.path.join(a.model, a.base), a.out)
    reference(a.model, a.texts, a.vectors)
    json.dump({
        "exporter": "torch %s torch.onnx.export (TorchScript, opset %d) of transformers %s AutoModel" % (
            torch.__version__, OPSET, transformers.__version__),
        "reference": "sentence-transformers %s encode_query/encode_document, torch %s on the CPU" % (
            sentence_transformers.__version__, torch.__version__),
    }, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
