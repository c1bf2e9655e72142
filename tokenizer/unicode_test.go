package tokenizer

import (
	"fmt"
	"slices"
	"testing"
	"unicode"
)

// TestBertCharClasses checks the character classes of Hugging Face's BERT
// components on the edge code points of each category.
func TestBertCharClasses(t *testing.T) {
	tests := []struct {
		r                      rune
		control, punct, accent bool
	}{
		{0x0000, true, false, false},    // Cc
		{0x0009, false, false, false},   // Cc, whitespace
		{0x0085, true, false, false},    // Cc
		{0x009F, true, false, false},    // Cc
		{0x00AD, true, false, false},    // Cf
		{0x08E2, false, false, false},   // Cf since Unicode 9.0
		{0x200B, true, false, false},    // Cf
		{0xFEFF, true, false, false},    // Cf
		{0x13430, false, false, false},  // Cf since Unicode 12.0
		{0xE0001, true, false, false},   // Cf
		{0xE000, true, false, false},    // Co
		{0xF8FF, true, false, false},    // Co
		{0xF0000, true, false, false},   // Co
		{0x10FFFD, true, false, false},  // Co
		{0x0378, false, false, false},   // Cn
		{0xD7FF, false, false, false},   // Cn
		{0xE0080, false, false, false},  // Cn
		{0xFDD0, false, false, false},   // noncharacter
		{0xFFFE, false, false, false},   // noncharacter
		{0xFFFF, false, false, false},   // noncharacter
		{0x10FFFF, false, false, false}, // noncharacter
		{0x2028, false, false, false},   // Zl
		{0x3000, false, false, false},   // Zs
		{0x00BF, false, true, false},    // Po
		{0x2E42, false, true, false},    // Ps, Unicode 7.0
		{0x2E43, false, false, false},   // Po since Unicode 9.0
		{0x166D, false, true, false},    // So, Po in Unicode 8.0
		{0x111C9, false, true, false},   // Mn, Po in Unicode 8.0
		{0x0300, false, false, true},    // Mn
		{0x1AB0, false, false, true},    // Mn, Unicode 7.0
		{0x1AC0, false, false, false},   // Mn since Unicode 14.0
		{0x1734, false, false, true},    // Mc, Mn in Unicode 8.0
		{0x0903, false, false, false},   // Mc
		{0x20DD, false, false, false},   // Me
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("U+%04X", tc.r), func(t *testing.T) {
			if got := isBertControl(tc.r); got != tc.control {
				t.Errorf("isBertControl = %v, want %v", got, tc.control)
			}
			if got := isPunctuation(tc.r); got != tc.punct {
				t.Errorf("isPunctuation = %v, want %v", got, tc.punct)
			}
			if got := isBertAccent(tc.r); got != tc.accent {
				t.Errorf("isBertAccent = %v, want %v", got, tc.accent)
			}
		})
	}
}

// TestUnicode8Tables checks that the Unicode 8.0 tables agree with Go's
// newer ones except for the three characters whose category changed, and
// that no code point unassigned in Go's tables is a control.
func TestUnicode8Tables(t *testing.T) {
	changed := map[rune]bool{0x166D: true, 0x111C9: true, 0x1734: true}
	tables := []struct {
		name string
		old  *unicode.RangeTable
		now  []*unicode.RangeTable
	}{
		{"other8", other8, []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Co}},
		{"punct8", punct8, []*unicode.RangeTable{unicode.P}},
		{"mn8", mn8, []*unicode.RangeTable{unicode.Mn}},
	}
	for _, tb := range tables {
		t.Run(tb.name, func(t *testing.T) {
			for r := rune(0); r <= unicode.MaxRune; r++ {
				if unicode.Is(tb.old, r) && !unicode.In(r, tb.now...) && !changed[r] {
					t.Errorf("U+%04X is in %s but not in Go's tables", r, tb.name)
				}
			}
		})
	}
	assigned := []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.In(r, assigned...) && isBertControl(r) {
			t.Errorf("unassigned U+%04X is a control", r)
		}
	}
}

// TestToLowerSince16 checks lower-case mappings that Go's tables lack.
func TestToLowerSince16(t *testing.T) {
	tests := []struct{ r, want rune }{
		{'A', 'a'}, {0x0130, 'i'}, {0x00C9, 0x00E9}, {0x1C89, 0x1C8A}, {0xA7CB, 0x0264},
		{0xA7DC, 0x019B}, {0x10D50, 0x10D70}, {0x10D65, 0x10D85}, {0x16EA0, 0x16EBB},
		{0x16EB8, 0x16ED3}, {0x10D70, 0x10D70}, {0xFFFF, 0xFFFF},
	}
	for _, tc := range tests {
		var got []rune
		toLower(tc.r, func(r rune) { got = append(got, r) })
		if got[0] != tc.want {
			t.Errorf("toLower(U+%04X) = %U, want %U", tc.r, got, tc.want)
		}
	}
}

// TestAppendNFDUnicode9 checks that U+11938, decomposed since Unicode 13.0,
// stays whole as in Hugging Face's NFD.
func TestAppendNFDUnicode9(t *testing.T) {
	if got := appendNFD(nil, 0x11938, false); !slices.Equal(got, []rune{0x11938}) {
		t.Errorf("appendNFD(U+11938) = %U", got)
	}
	if got := appendNFD(nil, 0x00E9, false); !slices.Equal(got, []rune{'e', 0x0301}) {
		t.Errorf("appendNFD(U+00E9) = %U", got)
	}
}
