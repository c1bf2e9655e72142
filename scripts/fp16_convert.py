#!/usr/bin/env python3
"""Converts an fp32 ONNX sentence-embedding model to fp16 for msrag.

    python fp16_convert.py IN.onnx OUT.onnx

Weights and activations become float16; the inputs and outputs keep their
types (keep_io_types: int64 ids in, float32 vectors out), so msrag feeds and
reads the fp16 model as it does the fp32 one. The converter is ONNX Runtime's
own (onnxruntime.transformers.float16), pinned with its dependencies in
scripts/fp16-requirements.txt, so the output is the same bytes on every
machine: msrag checks them against the sha256 recorded for a built-in model.

Runs in the venv scripts/setup-fp16.sh makes, which carries a copy of this
file; msrag model fetch NAME --fp16 calls that copy. OUT is written through a
temporary file beside it and renamed into place when complete. Prints one
line: the seconds the conversion took and the output's size.
"""
import os
import sys
import time

import onnx
from onnxruntime.transformers.float16 import convert_float_to_float16


def main():
    if len(sys.argv) != 3:
        print("usage: fp16_convert.py IN.onnx OUT.onnx", file=sys.stderr)
        return 2
    src, dst = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    model = onnx.load(src)
    half = convert_float_to_float16(model, keep_io_types=True)
    tmp = dst + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(half.SerializeToString(deterministic=True))
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(f"fp16_convert: {src} -> {dst}: {time.perf_counter() - start:.2f} s, {os.path.getsize(dst)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
