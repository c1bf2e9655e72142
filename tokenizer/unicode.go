package tokenizer

import "unicode"

// Character classes as the Hugging Face tokenizers define them.

// isWhitespace is Rust's char::is_whitespace (the White_Space property).
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.Is(unicode.White_Space, r)
}

// isBertWhitespace is BERT's whitespace: tab, newline, carriage return or
// White_Space.
func isBertWhitespace(r rune) bool { return isWhitespace(r) }

// isBertControl is the control test of clean_text in Hugging Face's
// BertNormalizer (is_control in normalizers/bert.rs): a character of Cc, Cf
// or Co in Unicode 8.0 (see other8), except tab, newline and carriage return.
// Unassigned code points and noncharacters (Cn), and characters assigned to
// Cf after Unicode 8.0, are kept.
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.Is(other8, r)
}

// isPunctuation is the punctuation of Hugging Face's BertPreTokenizer and
// Punctuation (is_bert_punc and is_punc): ASCII punctuation, symbols
// included, or P* of Unicode 8.0 (see punct8).
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.Is(punct8, r)
}

// isBertAccent is what strip_accents of Hugging Face's BertNormalizer
// removes after NFD: a nonspacing mark, Mn of Unicode 8.0 (see mn8).
func isBertAccent(r rune) bool { return unicode.Is(mn8, r) }

// isChineseChar is BERT's CJK test (the CJK Unified Ideographs blocks).
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

// isWordChar is the regular expression class \w of Oniguruma with Unicode:
// Alphabetic, marks, decimal numbers, connector punctuation, Join_Control.
func isWordChar(r rune) bool {
	if r < 0x80 {
		return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_'
	}
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.M, unicode.Nd, unicode.Pc, unicode.Join_Control)
}

// isNumeric is Rust's char::is_numeric (Nd, Nl, No).
func isNumeric(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return unicode.In(r, unicode.Nd, unicode.Nl, unicode.No)
}

// toLower emits the full lower-case mapping of r (Rust's char::to_lowercase,
// whose tables are newer than Go's: see lowerSince16).
func toLower(r rune, emit func(rune)) {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		emit(r)
		return
	}
	if r == 0x130 { // the one unconditional multi-character lower-case mapping
		emit('i')
		emit(0x307)
		return
	}
	emit(lowerSince16.ToLower(r))
}

// lowerSince16 holds the lower-case mappings of the letters assigned in
// Unicode 16.0 and 17.0, which Go's tables (Unicode 15.0) lack and Rust's
// char::to_lowercase, as built into tokenizers 0.23.3, has.
var lowerSince16 = unicode.SpecialCase{
	{Lo: 0x1C89, Hi: 0x1C89, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7CB, Hi: 0xA7CB, Delta: [unicode.MaxCase]rune{0, 0x0264 - 0xA7CB, 0}},
	{Lo: 0xA7CC, Hi: 0xA7CC, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7CE, Hi: 0xA7CE, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7D2, Hi: 0xA7D2, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7D4, Hi: 0xA7D4, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7DA, Hi: 0xA7DA, Delta: [unicode.MaxCase]rune{0, 1, 0}},
	{Lo: 0xA7DC, Hi: 0xA7DC, Delta: [unicode.MaxCase]rune{0, 0x019B - 0xA7DC, 0}},
	{Lo: 0x10D50, Hi: 0x10D65, Delta: [unicode.MaxCase]rune{0, 0x20, 0}},
	{Lo: 0x16EA0, Hi: 0x16EB8, Delta: [unicode.MaxCase]rune{0, 0x1B, 0}},
}
