package lexical

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Analyzer names the way text becomes terms. Its zero value is [English].
// The same analyzer must analyse the documents of an index and the queries
// that search it; [Analyzer.Version] identifies its output, for a manifest to
// record and an opener to compare.
type Analyzer uint8

const (
	// English splits words, lower-cases them, drops English stop words
	// (stopwords_en.txt) and stems with Snowball 2.0's English stemmer.
	English Analyzer = iota
	// None splits words and lower-cases them, nothing more: for languages
	// the English stop words and stemmer would harm.
	None
	numAnalyzers
)

var analyzerNames = [numAnalyzers]string{English: "english", None: "none"}

// ParseAnalyzer returns the analyzer called name ("english" or "none").
func ParseAnalyzer(name string) (Analyzer, error) {
	for a, n := range analyzerNames {
		if n == name {
			return Analyzer(a), nil
		}
	}
	return 0, fmt.Errorf("lexical: %w %q (want %s)", ErrAnalyzer, name, strings.Join(analyzerNames[:], " or "))
}

// Name returns the analyzer's name, as ParseAnalyzer takes it.
func (a Analyzer) Name() string {
	if a >= numAnalyzers {
		return fmt.Sprintf("analyzer(%d)", uint8(a))
	}
	return analyzerNames[a]
}

// String returns the name.
func (a Analyzer) String() string { return a.Name() }

// Version identifies what the analyzer produces: the version of its rules,
// the Unicode version of its character tables, and for English the
// stemmer and a digest of the stop word list. Two analyzers with the same
// name and version turn every text into the same terms.
func (a Analyzer) Version() string {
	v := "1 unicode-" + unicodeVersion
	if a == English {
		v += " snowball-english-2.0 stop-" + stopDigest
	}
	return v
}

// MarshalText returns the name, so that an Analyzer reads and writes as a
// JSON string.
func (a Analyzer) MarshalText() ([]byte, error) {
	if a >= numAnalyzers {
		return nil, fmt.Errorf("lexical: %w %d", ErrAnalyzer, uint8(a))
	}
	return []byte(a.Name()), nil
}

// UnmarshalText parses a name written by MarshalText.
func (a *Analyzer) UnmarshalText(b []byte) error {
	p, err := ParseAnalyzer(string(b))
	if err != nil {
		return err
	}
	*a = p
	return nil
}

//go:embed stopwords_en.txt
var stopFile string

// stopWords is the English stop list; stopDigest the first 8 bytes of the
// sha256 of its words, one a line, in file order.
var stopWords, stopDigest = parseStopWords(stopFile)

func parseStopWords(file string) (map[string]struct{}, string) {
	words := map[string]struct{}{}
	h := sha256.New()
	for line := range strings.Lines(file) {
		w := strings.TrimSpace(line)
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		words[w] = struct{}{}
		h.Write([]byte(w + "\n"))
	}
	return words, hex.EncodeToString(h.Sum(nil)[:8])
}

// IsStopWord reports whether the English analyzer drops the word w (lower
// case, unstemmed).
func IsStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// MaxTermBytes is the longest word, in bytes of UTF-8 after lower-casing,
// that the analyzers keep; longer runs of word characters (a base64 blob, a
// DNA sequence) are dropped, as if they were not there, and do not count in
// the document's length. 4096 bytes hold any 1,000 characters.
const MaxTermBytes = 4096

// stem returns the English stem of the lower-case word w. Snowball leaves
// words of fewer than three characters alone; kljensen/snowball tests bytes
// instead, so the test is made here.
func stem(w string) string {
	if utf8.RuneCountInString(w) < 3 {
		return w
	}
	return english.Stem(w, true)
}

// Identity is what an index's manifest records of its analyzer.
type Identity struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Identity returns a's name and version.
func (a Analyzer) Identity() Identity { return Identity{Name: a.Name(), Version: a.Version()} }

// ParseIdentity returns the analyzer that id names, checking that this
// build's analyzer of that name has the same version: one of another
// version could turn queries into terms the index does not use. The error
// wraps [ErrAnalyzer].
func ParseIdentity(id Identity) (Analyzer, error) {
	a, err := ParseAnalyzer(id.Name)
	if err != nil {
		return 0, err
	}
	if v := a.Version(); v != id.Version {
		return 0, fmt.Errorf("lexical: %w: the index was analysed by %s version %q, this build has version %q",
			ErrAnalyzer, id.Name, id.Version, v)
	}
	return a, nil
}
