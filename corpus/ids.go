package corpus

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// ErrBadID marks an id that a TREC run or qrels line cannot carry: TREC
// separates its columns with white space and its records with newlines, so
// an id holding either (or another control character) would split or shift
// the line. Readers refuse such ids, naming the file and line or row, so that
// no writer ever sees one.
var ErrBadID = errors.New("id holds white space or a control character")

// CheckID fails unless id can be written as one column of a TREC line:
// non-empty valid UTF-8 with no white space and no control character.
func CheckID(id string) error {
	if id == "" {
		return fmt.Errorf("empty id: %w", ErrRecord)
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("id %q is not valid UTF-8: %w", id, ErrBadID)
	}
	for i, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("id %q holds %U at byte %d (ids may not hold white space or control characters): %w", id, r, i, ErrBadID)
		}
	}
	return nil
}
