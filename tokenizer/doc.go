// Package tokenizer encodes text exactly as a Hugging Face tokenizer.json
// file says, in pure Go, and maps every token back to its byte span in the
// original text.
//
// # Moving parts
//
// [Load] or [FromJSON] builds a [Tokenizer] from the file's components, run
// in this order by [Tokenizer.Encode]:
//
//  1. Added tokens. Entries of added_tokens with normalized=false (special
//     tokens such as "[SEP]" or "<mask>") are found in the original text,
//     leftmost-longest, honouring single_word, lstrip and rstrip; the others
//     are found after normalisation. A match becomes one token.
//  2. Normaliser: BertNormalizer, Lowercase, StripAccents, NFC, NFD, NFKC,
//     NFKD, Replace (string or regular expression), Prepend, Strip,
//     Precompiled (SentencePiece's compiled character map, applied per
//     grapheme cluster) and Sequence. The normalised text carries, for every
//     byte, the byte range of the original text it came from, so offsets are
//     exact in the input and never in a normalised copy.
//  3. Pre-tokeniser: BertPreTokenizer, Whitespace, WhitespaceSplit,
//     Punctuation, Digits, Metaspace (with prepend_scheme), Split and
//     Sequence. They cut the normalised text into pieces that keep their
//     alignment.
//  4. Model: WordPiece (greedy longest match first, max_input_chars_per_word,
//     the unknown token) or Unigram (Viterbi over the piece scores with
//     unknown fusing and byte_fallback).
//  5. Truncation and post-processing: BertProcessing, RobertaProcessing,
//     TemplateProcessing and Sequence add special tokens, whose offsets are
//     {0,0}; truncation keeps max_length tokens including them.
//     RobertaProcessing's trim_offsets moves offsets past spaces at the ends
//     of a token's string, as Hugging Face does, but never into the middle
//     of a character.
//
// Padding is never applied: [Tokenizer.PadID] gives the id for callers that
// batch. A file that uses anything else fails to load with an [*Error]
// naming the JSON path, wrapping [ErrUnsupported].
//
// # Invalid UTF-8
//
// Each byte of the input that is not part of a valid UTF-8 sequence is read
// as U+FFFD, with its span on that one byte, so spans always fall on the
// boundaries of the original bytes.
//
// Surrogate code points (Cs) cannot occur in valid UTF-8: their three-byte
// encodings read as three U+FFFD, and encoding/json decodes an unpaired
// \ud800-style escape to one U+FFFD.
//
// # Limits
//
// Only single sequences are encoded (no pairs), and padding is not applied.
// BPE and WordLevel models, ByteLevel components and decoders are not
// implemented; files that need them fail to load. Regular expressions in
// Replace and Split are compiled with Go's regexp (RE2): a pattern RE2
// cannot compile (look-around, possessive quantifiers) fails to load, and
// classes such as \s and \w match ASCII only where Oniguruma, which Hugging
// Face uses, matches Unicode.
//
// # Character classes
//
// Hugging Face takes its character classes from tables of several Unicode
// versions, and the BERT components here follow each of them:
// BertNormalizer's clean_text removes Cc, Cf and Co of Unicode 8.0 (the
// tables of the unicode_categories crate) and keeps unassigned code points
// and noncharacters (Cn); its strip_accents removes Mn of Unicode 8.0 after
// an NFD that, like Unicode 9.0, leaves U+11938 whole; BertPreTokenizer and
// Punctuation split on ASCII punctuation and P of Unicode 8.0; lower-casing
// adds the Unicode 16.0 and 17.0 mappings of Rust's char::to_lowercase to
// Go's Unicode 15.0 tables. The other components use Go's tables, which
// differ from Hugging Face's for some characters assigned after Unicode 9.0:
// the combining marks of StripAccents, the compatibility decompositions of
// NFKD and NFKC, the numbers of Digits and the \w class of Whitespace.
//
// # Cheap counting
//
// [Tokenizer.Count] and [Options.NoSpecial] with a negative
// [Options.MaxLength] give the content tokens of whole documents without
// special tokens or truncation; [Tokenizer.AddSpecial] adds the special
// tokens to a window of them later.
package tokenizer
