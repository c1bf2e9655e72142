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

// isOther is the Unicode "C" group: Cc, Cf, Cn (unassigned), Co, Cs.
func isOther(r rune) bool {
	if r < 0x80 {
		return r < 0x20 || r == 0x7f
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isBertControl is BERT's control test used by clean_text.
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return isOther(r)
}

// isPunctuation is BERT's punctuation: ASCII punctuation or Unicode P*.
func isPunctuation(r rune) bool {
	if r < 0x80 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

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

// toLower emits the full lower-case mapping of r (Rust's char::to_lowercase).
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
	emit(unicode.ToLower(r))
}
