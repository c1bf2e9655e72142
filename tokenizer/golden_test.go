package tokenizer_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/testfiles"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/tokenizer"
)

// goldenTokenizers lists the tokenizer files with reference vectors from
// scripts/gen_tokenizer_golden.py. Files under the cache directory (CACHE/
// tokenizers, internal/cache.Dir) come from scripts/fetch-tokenizers.sh.
var goldenTokenizers = []struct {
	name, path string
}{
	{"bert-uncased", "testdata/bert-uncased.tokenizer.json.gz"},
	{"xlmr-ja", "testdata/xlmr-ja.tokenizer.json.gz"},
	{"bert-chinese", filepath.Join(cache.Dir(), "tokenizers", "bert-chinese", "tokenizer.json")},
}

type goldenCase struct {
	Special     bool
	MaxLength   int
	IDs         []int32
	TypeIDs     []int32
	SpecialMask []uint8
	Offsets     []int
	sameAs      int // index of an identical earlier case, or -1
}

// UnmarshalJSON reads a case; the integer arrays are parsed by hand, which
// keeps the golden test fast under the race detector. "same_as": i stands
// for a reference encoding identical to that of case i of the same text.
func (c *goldenCase) UnmarshalJSON(b []byte) error {
	var raw struct {
		Special     bool            `json:"special"`
		MaxLength   int             `json:"max_length"`
		SameAs      *int            `json:"same_as"`
		IDs         json.RawMessage `json:"ids"`
		TypeIDs     json.RawMessage `json:"type_ids"`
		SpecialMask json.RawMessage `json:"special_mask"`
		Offsets     json.RawMessage `json:"offsets"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	c.Special, c.MaxLength, c.sameAs = raw.Special, raw.MaxLength, -1
	if raw.SameAs != nil {
		c.sameAs = *raw.SameAs // resolved by goldenRecord.UnmarshalJSON
		return nil
	}
	var err error
	ints := func(r json.RawMessage) []int {
		v, e := parseInts(r)
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	for _, v := range ints(raw.IDs) {
		c.IDs = append(c.IDs, int32(v))
	}
	for _, v := range ints(raw.TypeIDs) {
		c.TypeIDs = append(c.TypeIDs, int32(v))
	}
	for _, v := range ints(raw.SpecialMask) {
		c.SpecialMask = append(c.SpecialMask, uint8(v))
	}
	c.Offsets = ints(raw.Offsets)
	if c.IDs == nil {
		c.IDs, c.TypeIDs, c.SpecialMask, c.Offsets = []int32{}, []int32{}, []uint8{}, []int{}
	}
	return err
}

// parseInts reads a JSON array of non-negative integers.
func parseInts(b []byte) ([]int, error) {
	out := make([]int, 0, len(b)/4)
	i := 0
	for i < len(b) && b[i] != '[' {
		i++
	}
	i++
	for i < len(b) {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			v := 0
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				v = v*10 + int(b[i]-'0')
				i++
			}
			out = append(out, v)
		case c == ',' || c == ' ':
			i++
		case c == ']':
			return out, nil
		default:
			return nil, fmt.Errorf("unexpected %q in integer array", c)
		}
	}
	return nil, fmt.Errorf("unterminated integer array")
}

// goldenRecord is one text and its reference encodings. Text is decoded by
// encoding/json, which turns an unpaired \ud800-style escape into U+FFFD: the
// generator gives the reference that same text.
type goldenRecord struct {
	Text    *string      `json:"text"`
	TextB64 string       `json:"text_b64"`
	Cases   []goldenCase `json:"cases"`
}

// UnmarshalJSON resolves "same_as" references between the cases.
func (r *goldenRecord) UnmarshalJSON(b []byte) error {
	type plain goldenRecord
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	for i := range r.Cases {
		if c := &r.Cases[i]; c.sameAs >= 0 {
			j := c.sameAs
			if j >= i {
				return fmt.Errorf("case %d: same_as %d is not an earlier case", i, j)
			}
			special, maxLength := c.Special, c.MaxLength
			*c = r.Cases[j]
			c.Special = special
			c.MaxLength = maxLength
		}
	}
	return nil
}

// loadTokenizer reads a tokenizer.json (gzipped if its name ends in .gz). A
// missing file skips the test unless CI is set, where it fails.
func loadTokenizer(tb testing.TB, path string) *tokenizer.Tokenizer {
	tb.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) && os.Getenv("CI") == "" {
		tb.Skipf("%s is missing (run scripts/fetch-tokenizers.sh)", path)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		r = zr
	}
	data, err := io.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return tok
}

func readGolden(tb testing.TB, name string) []goldenRecord {
	tb.Helper()
	var out []goldenRecord
	sc := bufio.NewScanner(bytes.NewReader(testfiles.ReadGzip(tb, filepath.Join("testdata", "golden_"+name+".jsonl.gz"))))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if (line-1)%goldenStride() != 0 {
			continue
		}
		var r goldenRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatalf("golden_%s line %d: %v", name, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func (r *goldenRecord) text(tb testing.TB) string {
	if r.Text != nil {
		return *r.Text
	}
	b, err := base64.StdEncoding.DecodeString(r.TextB64)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func flatOffsets(offs []tokenizer.Offset) []int {
	out := make([]int, 0, 2*len(offs))
	for _, o := range offs {
		out = append(out, o.Start, o.End)
	}
	return out
}

// TestGolden compares ids, type ids, special-token masks and offsets with the
// Hugging Face reference on every golden text, for every case.
func TestGolden(t *testing.T) {
	for _, g := range goldenTokenizers {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(filepath.Join("testdata", "golden_"+g.name+".jsonl.gz")); err != nil {
				t.Skipf("no golden vectors for %s", g.name)
			}
			tok := loadTokenizer(t, g.path)
			recs := readGolden(t, g.name)
			var texts, cases, bad int
			for i := range recs {
				r := &recs[i]
				text := r.text(t)
				texts++
				for _, c := range r.Cases {
					cases++
					e := tok.EncodeWith(text, tokenizer.Options{NoSpecial: !c.Special, MaxLength: c.MaxLength})
					diff := ""
					switch {
					case !slices.Equal(e.IDs, c.IDs):
						diff = fmt.Sprintf("ids\n got %v\nwant %v", e.IDs, c.IDs)
					case !slices.Equal(flatOffsets(e.Offsets), c.Offsets):
						diff = fmt.Sprintf("offsets\n got %v\nwant %v", flatOffsets(e.Offsets), c.Offsets)
					case !slices.Equal(e.TypeIDs, c.TypeIDs):
						diff = fmt.Sprintf("type ids\n got %v\nwant %v", e.TypeIDs, c.TypeIDs)
					case !slices.Equal(e.SpecialTokensMask, c.SpecialMask):
						diff = fmt.Sprintf("special mask\n got %v\nwant %v", e.SpecialTokensMask, c.SpecialMask)
					}
					if diff != "" {
						bad++
						if bad <= 10 || os.Getenv("GOLDEN_ALL") != "" {
							q := text
							if len(q) > 300 {
								q = q[:300] + "..."
							}
							t.Errorf("text %d %q (special=%v max_length=%d): %s", i, q, c.Special, c.MaxLength, diff)
						}
					}
					if c.MaxLength < 0 && !c.Special {
						if count := tok.Count(text); count != len(c.IDs) {
							t.Errorf("text %d: Count = %d, want %d", i, count, len(c.IDs))
						}
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d cases differ from the reference", bad, cases)
			}
			t.Logf("%d texts, %d cases identical to the reference", texts, cases)
		})
	}
}

// goldenStride is 1 (every golden text) except under the race detector,
// where every 7th text is checked.
func goldenStride() int {
	if raceEnabled {
		return 7
	}
	return 1
}
