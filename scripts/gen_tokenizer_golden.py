#!/usr/bin/env python3
"""Generate the tokenizer golden vectors from the official Hugging Face tokenizers.

Usage (from the repository root, after scripts/fetch-tokenizers.sh):

    python3 -m venv $HOME/.cache/msrag/venv/tok && $HOME/.cache/msrag/venv/tok/bin/pip install tokenizers==0.23.3
    $HOME/.cache/msrag/venv/tok/bin/python scripts/gen_tokenizer_golden.py

For every tokenizer in TOKENIZERS whose file is present it writes
tokenizer/testdata/golden_<name>.jsonl.gz: one line per text, with the reference
encodings for four cases (special tokens on/off, truncation as the file says, off,
or to a small length). Offsets are converted from the Python character offsets
of the reference to byte offsets of the original UTF-8 input.

Invalid UTF-8: the Go package reads every byte that is not part of a valid UTF-8
sequence as U+FFFD spanning that one byte. The reference is fed the text with
exactly that replacement and its offsets are mapped back onto the original bytes,
so the comparison stays honest for such input.

Lone surrogates: a few texts hold \ud800-style escapes that pair with nothing.
They are written to the golden file as those JSON escapes; Go's encoding/json
decodes each one to U+FFFD (and an escaped high-low pair to its character), while
the Python binding of tokenizers refuses a str with a lone surrogate. The
reference is therefore fed the text that the Go test decodes.

The data sets are read from msrag's cache (scripts/fetch-data.sh scifact qmsum), as the
Go tests read them.
"""
import base64
import gzip
import json
import os
import random
import re
import sys

from tokenizers import Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# msrag's cache, as internal/cache.Dir computes it.
CACHE = os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag")
DATA = os.path.join(os.environ.get("MSRAG_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "msrag"), "data")
OUT = os.path.join(ROOT, "tokenizer", "testdata")

# name -> tokenizer.json path (gzipped files are read as such).
TOKENIZERS = {
    "bert-uncased": os.path.join(OUT, "bert-uncased.tokenizer.json.gz"),
    "xlmr-ja": os.path.join(OUT, "xlmr-ja.tokenizer.json.gz"),
    "bert-chinese": os.path.join(CACHE, "tokenizers", "bert-chinese", "tokenizer.json"),
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
    out.extend(edge_cases())
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


# Edge code points of every general category, for the character classes of
# Hugging Face's BertNormalizer (clean_text, strip_accents, lowercase) and
# BertPreTokenizer, whose category tables are those of Unicode 8.0 while
# char::to_lowercase and char::is_whitespace follow the Rust toolchain's
# Unicode version.
EDGE_CHARS = [
    # Cc (U+0009, U+000A, U+000D and U+0085 are also White_Space).
    0x0000, 0x0001, 0x0008, 0x0009, 0x000A, 0x000B, 0x000C, 0x000D, 0x001F, 0x007F, 0x0080, 0x0085, 0x009F,
    # Cf, including some assigned after Unicode 8.0 (U+0890, U+08E2, U+110CD, U+13430, U+1343F).
    0x00AD, 0x0600, 0x0605, 0x061C, 0x06DD, 0x070F, 0x0890, 0x08E2, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E,
    0x200F, 0x202A, 0x202E, 0x2060, 0x2064, 0x2066, 0x206F, 0xFEFF, 0xFFF9, 0xFFFB, 0x110BD, 0x110CD,
    0x13430, 0x1343F, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0001, 0xE0020, 0xE007F,
    # Cn: unassigned in every Unicode version so far.
    0x0378, 0x038B, 0x0530, 0xD7FC, 0xD7FF, 0xFFF0, 0xFFF8, 0x1FFFD, 0x2FFFD, 0xE0000, 0xE0002, 0xE0080,
    0xE01F0, 0xE0FFF, 0xEFFFD,
    # Noncharacters (Cn).
    0xFDD0, 0xFDDF, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x1FFFF, 0x2FFFF, 0xEFFFE, 0xFFFFE, 0xFFFFF, 0x10FFFE, 0x10FFFF,
    # Cn in Unicode 8.0, assigned since: punctuation, marks, a decomposable
    # Mc, ideographs, symbols.
    0x061D, 0x0C84, 0x2E43, 0x2E5D, 0x11F43, 0x0898, 0x1AC0, 0x1DFA, 0x1E08F, 0x1E944, 0x11938, 0x2FFC,
    0x2B739, 0x31350, 0x1F6D5, 0x1FAE8,
    # Category changed since Unicode 8.0: Po then (U+166D, U+111C9), Mn then (U+1734).
    0x166D, 0x111C9, 0x1734,
    # Cn in Unicode 15.0, assigned since: upper-case letters and digits.
    0x1C89, 0xA7CB, 0xA7CC, 0xA7DC, 0x10D50, 0x10D65, 0x16EA0, 0x16EB8, 0x10D40, 0x1CCF0,
    # Co.
    0xE000, 0xE001, 0xF8FF, 0xF0000, 0xFFFFD, 0x100000, 0x10FFFD,
    # Zl, Zp, Zs.
    0x2028, 0x2029, 0x00A0, 0x1680, 0x2000, 0x200A, 0x202F, 0x205F, 0x3000,
    # Mn, Me and Mc, for strip_accents.
    0x0300, 0x0344, 0x0F73, 0x1AB0, 0x1DF5, 0x20DD, 0x0903,
]

# Lone surrogates, kept as str: written to the golden file as JSON escapes.
EDGE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]

# Encodings that UTF-8 forbids: a surrogate, past U+10FFFF, overlong U+0000.
EDGE_INVALID = [b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xc0\x80"]


def edge_forms(c):
    """c alone, inside a word, between words, at word edges, and mixed with letters."""
    return [c, "ab" + c + "cd", "hello " + c + " world", c + "start end" + c,
            "x" + c + "é" + c + "東" + c + "Z" + c * 3]


def edge_cases():
    out = []
    for cp in EDGE_CHARS:
        out.extend(f.encode() for f in edge_forms(chr(cp)))
    for s in EDGE_SURROGATES:
        out.extend(edge_forms(s))
    out.extend(["\ud83d\ude00", "\ude00\ud83d", "a\ud800\udc00b", "a\udbff\ud800b"])
    for b in EDGE_INVALID:
        out.extend([b, b"ab" + b + b"cd", b"hello " + b + b" world"])
    return out


def go_json_text(s):
    """The text Go's encoding/json decodes from s written with \\u escapes: a
    high-low surrogate pair is one character, a lone surrogate U+FFFD."""
    paired = json.loads(json.dumps(s))
    return re.sub("[\ud800-\udfff]", "\ufffd", paired)


def escape_surrogates(line):
    """Writes the lone surrogates of a JSON line as \\u escapes."""
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), line)


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
            for item in all_texts:
                rec = {}
                if isinstance(item, str):
                    b = go_json_text(item).encode()
                    rec["text"] = item
                else:
                    b = item
                    try:
                        rec["text"] = b.decode("utf-8")
                    except UnicodeDecodeError:
                        rec["text_b64"] = base64.b64encode(b).decode()
                text, spans = go_decode(b)
                rec["cases"] = reference_cases(tok, file_trunc, text, spans, len(b))
                line = escape_surrogates(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
                f.write((line + "\n").encode())
        print(f"{name}: wrote {dst}", file=sys.stderr)


if __name__ == "__main__":
    main()
