#!/usr/bin/env python3
"""Build tokenizer/testdata/xlmr-ja.tokenizer.json.gz with Hugging Face's own converter.

The file has exactly the layout of XLM-RoBERTa's tokenizer.json (multilingual-e5,
bge-m3): a Precompiled normalizer (SentencePiece's nmt_nfkc character map),
WhitespaceSplit + Metaspace, a Unigram model with <s> <pad> </s> <unk> ... <mask>,
and the <s> $A </s> template. Its pieces come from SentencePiece's own test model
kyoto_ja_unigram_8000.model (Apache-2.0), found in the sentencepiece source package.

Usage (from the repository root):

    $HOME/.cache/msrag/venv/tok/bin/pip install tokenizers==0.23.3 transformers==5.24.0 sentencepiece protobuf
    pip download --no-deps --no-binary :all: sentencepiece==0.2.3 -d $HOME/.cache/msrag/tokenizers/src/spsrc
    $HOME/.cache/msrag/venv/tok/bin/python scripts/make_xlmr_test_tokenizer.py
"""
import gzip
import os
import shutil
import tarfile
import tempfile

from transformers import XLMRobertaTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
SDIST = os.path.join(CACHE, "tokenizers", "src", "spsrc", "sentencepiece-0.2.3.tar.gz")
MEMBER = "sentencepiece-0.2.3/test/kyoto_ja_unigram_8000.model"
OUT = os.path.join(ROOT, "tokenizer", "testdata", "xlmr-ja.tokenizer.json.gz")


def main():
    with tempfile.TemporaryDirectory() as d:
        with tarfile.open(SDIST) as tf:
            src = tf.extractfile(MEMBER)
            with open(os.path.join(d, "sentencepiece.bpe.model"), "wb") as f:
                shutil.copyfileobj(src, f)
        tok = XLMRobertaTokenizer.from_pretrained(d)
        data = tok.backend_tokenizer.to_str(pretty=True).encode()
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(data)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
