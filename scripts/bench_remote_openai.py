"""Embeds texts through an OpenAI-compatible server with the official openai Python client,
for scripts/bench_remote.sh: the peer that msrag's remote embedder is measured against.

Reads one JSON string per line from --texts, sends them in batches of --batch with
client.embeddings.create (the client asks for base64 and decodes it, as it does by default),
--concurrency batches at a time (1: a plain loop; more: a thread pool, the usual way to
overlap requests with this client), and prints one JSON line: texts, seconds (the embedding
loop only), seconds_total (the whole script), prompt_tokens.

  $HOME/.cache/msrag/venv/openai/bin/python scripts/bench_remote_openai.py --url URL --texts T.jsonl
"""
import argparse
import json
import time

T0 = time.perf_counter()

from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402
from openai import OpenAI  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="base URL, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument("--texts", required=True)
    ap.add_argument("--model", default="multilingual-e5-small-q4")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--input-type", default="passage", help="sent as input_type ('' for none)")
    a = ap.parse_args()
    with open(a.texts, encoding="utf-8") as f:
        texts = [json.loads(line) for line in f if line.strip()]
    client = OpenAI(base_url=a.url, api_key="unused", max_retries=5)
    extra = {"input_type": a.input_type} if a.input_type else None
    batches = [texts[i:i + a.batch] for i in range(0, len(texts), a.batch)]

    def one(batch):
        r = client.embeddings.create(model=a.model, input=batch, extra_body=extra)
        return np.asarray([d.embedding for d in r.data], dtype=np.float32), r.usage.prompt_tokens

    start = time.perf_counter()
    if a.concurrency <= 1:
        results = [one(b) for b in batches]
    else:
        with ThreadPoolExecutor(a.concurrency) as pool:
            results = list(pool.map(one, batches))
    secs = time.perf_counter() - start
    vecs = np.concatenate([r[0] for r in results])
    assert vecs.shape[0] == len(texts), vecs.shape
    print(json.dumps({"texts": len(texts), "seconds": secs, "seconds_total": time.perf_counter() - T0,
                      "prompt_tokens": sum(r[1] for r in results), "dims": int(vecs.shape[1])}))


if __name__ == "__main__":
    main()
