#!/usr/bin/env python3
"""Generate the tokenizer golden vectors from the official Hugging Face tokenizers.

Usage (from the repository root, after scripts/fetch-tokenizers.sh):

    python3 -m venv .cache/venv/tok && .cache/venv/tok/bin/pip install tokenizers==0.23.3
    .cache/venv/tok/bin/python scripts/gen_tokenizer_golden.py

For every tokenizer in TOKENIZERS whose file is present it writes
tokenizer/testdata/golden_<name>.jsonl.gz: one line per text, with the reference
encodings for four cases (special tokens on/off, truncation as the file says, off,
or to a small length). Offsets are converted from the Python character offsets
of the reference to byte offsets of the original UTF-8 input.

Invalid UTF-8: the Go package reads every byte that is not part of a valid UTF-8
sequence as U+FFFD spanning that one byte. The reference is fed the text with
exactly that replacement and its offsets are mapped back onto the original bytes,
so the comparison stays honest for such input.
"""
import base64
import gzip
import json
import os
import random
import sys

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.environ.get("MSRAG_DATA", "/work/shared/data")
OUT = os.path.join(ROOT, "tokenizer", "testdata")

# name -> tokenizer.json path (gzipped files are read as such).
TOKENIZERS = {
    "bert-uncased": os.path.join(OUT, "bert-uncased.tokenizer.json.gz"),
    "xlmr-ja": os.path.join(OUT, "xlmr-ja.tokenizer.json.gz"),
    "bert-chinese": os.path.join(ROOT, ".cache", "tokenizers", "bert-chinese", "tokenizer.json"),
}

# Cases: (add special tokens, max_length): 0 = as the file says, -1 = never
# truncate, n > 0 = truncate to n tokens (special tokens included).
CASES = [(True, 0), (True, -1), (False, -1), (False, 16)]


def go_decode(b):
    """Decode bytes the way the Go package does: each invalid byte is U+FFFD.

    Returns the text and, per character, its (start, end) byte span in b."""
    chars, spans = [], []
    i = 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                c = b[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(c) == 1:
                chars.append(c)
                spans.append((i, i + n))
                i += n
                break
        else:
            chars.append("\ufffd")
            spans.append((i, i + 1))
            i += 1
    return "".join(chars), spans


def texts():
    rnd = random.Random(20261129)
    out = []
    # SciFact: whole abstracts, titles, claims.
    docs = [json.loads(l) for l in gzip.open(os.path.join(DATA, "scifact", "corpus.jsonl.gz"))]
    for d in docs[:250]:
        out.append(d["text"].encode())
    for d in docs[700:1200]:
        out.append(d["title"].encode())
    queries = [json.loads(l) for l in gzip.open(os.path.join(DATA, "scifact", "queries.jsonl.gz"))]
    for q in queries[:400]:
        out.append(q["text"].encode())
    # QMSum: transcript lines and a few whole transcripts.
    qdocs = [json.loads(l) for l in gzip.open(os.path.join(DATA, "qmsum", "corpus.jsonl.gz"))]
    lines = [l for d in qdocs[:40] for l in d["text"].split("\n") if l.strip()]
    for l in rnd.sample(lines, 800):
        out.append(l.encode())
    for d in qdocs[:2]:
        out.append(d["text"].encode())
    out.extend(hard_cases(rnd))
    return out


POOL = [
    "a", "Z", "é", "e\u0301", "A\u030a", "n\u0303", "\u0301", "\u0316\u0301", "ß", "İ", "ı", "Σ", "ς", "ﬁ", "Ⅻ", "①",
    "東", "京", "中文", "漢字", "\U00020000", "ｈｅｌｌｏ", "ｶﾀｶﾅ", "한국어", "हिन्दी", "ไทย", "עברית", "العربية", "\u200f", "\u200e",
    "😀", "👍🏽", "👩\u200d💻", "👨\u200d👩\u200d👧\u200d👦", "🇫🇷", "❤\ufe0f", "#\ufe0f\u20e3",
    "\u200b", "\u200c", "\u200d", "\ufeff", "\u00ad", "\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\u2028", "\u00a0", "\u3000",
    " ", "  ", "\t", "\n", "\r\n", "\t \n  ", "\u2003",
    "0", "123", "3.14159", "1,000,000", "٣", "²",
    "!", "?!", "...", "---", "(", ")", "[", "]", "{", "}", "<", ">", "@", "#", "$", "%", "^", "&", "*", "_", "~", "`", "'", '"',
    "«", "»", "“", "”", "‘", "’", "—", "–", "…", "¿", "¡", "§", "¶", "•", "€", "£", "¥", "©", "®", "™", "°", "±", "×", "÷",
    "[SEP]", "[CLS]", "[MASK]", "[PAD]", "[UNK]", "<s>", "</s>", "<mask>", "<pad>", "<unk>", "[sep]", " [SEP] ", " <mask> ",
    "hello", "Hello", "HELLO", "world", "unaffable", "tokenization", "Supercalifragilisticexpialidocious",
    "antidisestablishmentarianism" * 5, "x" * 120, "ab" * 60, "naïve", "café", "Zürich", "Ångström", "résumé", "coöperate",
    "\u0041\u030a\u0328", "\u1e9b\u0323", "\u03d3", "\u2126", "\u212b", "\uff21", "\u3131", "\u1100\u1161\u11a8",
]

INVALID = [b"\xff", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80\x80"]


def hard_cases(rnd):
    out = []
    for p in POOL:
        out.append(p.encode())
        out.append((" " + p + " ").encode())
    for _ in range(950):
        k = rnd.randint(1, 14)
        parts = []
        for _ in range(k):
            if rnd.random() < 0.06:
                parts.append(rnd.choice(INVALID))
            else:
                parts.append(rnd.choice(POOL).encode())
            if rnd.random() < 0.5:
                parts.append(b" ")
        out.append(b"".join(parts))
    out.append(b"")
    out.append(b" ")
    out.append(b"\xff\xfe")
    return out


def encode_case(tok, file_trunc, text, special, max_length):
    if max_length < 0:
        tok.no_truncation()
    elif max_length == 0:
        if file_trunc is None:
            tok.no_truncation()
        else:
            tok.enable_truncation(file_trunc["max_length"], stride=file_trunc.get("stride", 0),
                                  strategy=file_trunc.get("strategy", "longest_first").lower().replace("longestfirst", "longest_first").replace("onlyfirst", "only_first").replace("onlysecond", "only_second"),
                                  direction=file_trunc.get("direction", "Right").lower())
    else:
        d = (file_trunc or {}).get("direction", "Right").lower()
        tok.enable_truncation(max_length, direction=d)
    return tok.encode(text, add_special_tokens=special)


def byte_offsets(e, spans, nbytes):
    """Reference character offsets -> flat byte offsets of the original input."""
    offs = []
    for (cs, ce), sm in zip(e.offsets, e.special_tokens_mask):
        if cs == ce:
            s = spans[cs][0] if cs < len(spans) else nbytes
            offs += [0, 0] if (sm and cs == 0) else [s, s]
        else:
            offs += [spans[cs][0], spans[ce - 1][1]]
    return offs


def reference_cases(tok, file_trunc, text, spans, nbytes):
    """The reference encodings of text for every case in CASES. A case whose
    encoding equals an earlier one's is written as {"same_as": index}."""
    cases, seen = [], []
    for special, max_length in CASES:
        e = encode_case(tok, file_trunc, text, special, max_length)
        body = {"ids": e.ids, "type_ids": e.type_ids, "special_mask": e.special_tokens_mask,
                "offsets": byte_offsets(e, spans, nbytes)}
        case = {"special": special, "max_length": max_length}
        if body in seen:
            case["same_as"] = seen.index(body)
        else:
            case.update(body)
        seen.append(body)
        cases.append(case)
    return cases


def main():
    os.makedirs(OUT, exist_ok=True)
    all_texts = texts()
    print(f"{len(all_texts)} texts", file=sys.stderr)
    for name, path in TOKENIZERS.items():
        if not os.path.exists(path):
            print(f"{name}: {path} missing, skipped", file=sys.stderr)
            continue
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
        cfg = json.loads(raw)
        tok = Tokenizer.from_str(raw.decode())
        tok.no_padding()
        file_trunc = cfg.get("truncation")
        dst = os.path.join(OUT, f"golden_{name}.jsonl.gz")
        with gzip.GzipFile(dst, "wb", mtime=0) as f:
            for b in all_texts:
                text, spans = go_decode(b)
                rec = {}
                try:
                    rec["text"] = b.decode("utf-8")
                except UnicodeDecodeError:
                    rec["text_b64"] = base64.b64encode(b).decode()
                rec["cases"] = reference_cases(tok, file_trunc, text, spans, len(b))
                f.write((json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        print(f"{name}: wrote {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
