package tokenizer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/msrag/msrag/internal/testfiles"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/tokenizer"
)

// componentVariant heads a group of lines in golden_components.jsonl.gz,
// written by scripts/gen_tokenizer_components.py: a patch of a committed
// tokenizer file, followed by N lines of reference encodings of the patched
// file.
type componentVariant struct {
	Name    string                     `json:"name"`
	Base    string                     `json:"base"`
	Patch   map[string]json.RawMessage `json:"patch"`
	N       int                        `json:"n"`
	Records []goldenRecord             `json:"-"`
}

func readGzip(tb testing.TB, path string) []byte { return testfiles.ReadGzip(tb, path) }

// applyPatch mirrors patch() in the generator.
func applyPatch(tb testing.TB, base []byte, p map[string]json.RawMessage) []byte {
	tb.Helper()
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(base, &cfg); err != nil {
		tb.Fatal(err)
	}
	for k, v := range p {
		switch k {
		case "added_tokens_extra":
			var have, extra []json.RawMessage
			_ = json.Unmarshal(cfg["added_tokens"], &have)
			if err := json.Unmarshal(v, &extra); err != nil {
				tb.Fatal(err)
			}
			cfg["added_tokens"], _ = json.Marshal(append(have, extra...))
		case "model_merge":
			var m, extra map[string]json.RawMessage
			_ = json.Unmarshal(cfg["model"], &m)
			_ = json.Unmarshal(v, &extra)
			for kk, vv := range extra {
				m[kk] = vv
			}
			cfg["model"], _ = json.Marshal(m)
		case "normalizer_append":
			cfg["normalizer"], _ = json.Marshal(map[string]any{"type": "Sequence", "normalizers": []json.RawMessage{cfg["normalizer"], v}})
		case "vocab_extra":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(cfg["model"], &m)
			var vocab, extra []json.RawMessage
			_ = json.Unmarshal(m["vocab"], &vocab)
			if err := json.Unmarshal(v, &extra); err != nil {
				tb.Fatal(err)
			}
			m["vocab"], _ = json.Marshal(append(vocab, extra...))
			cfg["model"], _ = json.Marshal(m)
		case "byte_fallback":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(cfg["model"], &m)
			var vocab []json.RawMessage
			_ = json.Unmarshal(m["vocab"], &vocab)
			for b := 0; b < 256; b++ {
				vocab = append(vocab, json.RawMessage(fmt.Sprintf(`["<0x%02X>", -30.0]`, b)))
			}
			m["vocab"], _ = json.Marshal(vocab)
			m["byte_fallback"] = json.RawMessage("true")
			cfg["model"], _ = json.Marshal(m)
		default:
			cfg[k] = v
		}
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestComponents checks every supported normaliser, pre-tokeniser,
// post-processor and model setting against the Hugging Face reference.
func TestComponents(t *testing.T) {
	bases := map[string][]byte{
		"bert-uncased": readGzip(t, "testdata/bert-uncased.tokenizer.json.gz"),
		"xlmr-ja":      readGzip(t, "testdata/xlmr-ja.tokenizer.json.gz"),
	}
	sc := bufio.NewScanner(bytes.NewReader(readGzip(t, filepath.Join("testdata", "golden_components.jsonl.gz"))))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		var v componentVariant
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < v.N; k++ {
			if !sc.Scan() {
				t.Fatalf("%s: %d of %d records", v.Name, k, v.N)
			}
			if k%goldenStride() != 0 {
				continue
			}
			var r goldenRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s record %d: %v", v.Name, k, err)
			}
			v.Records = append(v.Records, r)
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			tok, err := tokenizer.FromJSON(applyPatch(t, bases[v.Base], v.Patch))
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range v.Records {
				r := &v.Records[i]
				text := r.text(t)
				for _, c := range r.Cases {
					e := tok.EncodeWith(text, tokenizer.Options{NoSpecial: !c.Special, MaxLength: c.MaxLength})
					if slices.Equal(e.IDs, c.IDs) && slices.Equal(flatOffsets(e.Offsets), c.Offsets) &&
						slices.Equal(e.TypeIDs, c.TypeIDs) && slices.Equal(e.SpecialTokensMask, c.SpecialMask) {
						continue
					}
					bad++
					if bad <= 5 || os.Getenv("GOLDEN_ALL") != "" {
						t.Errorf("text %q (special=%v max_length=%d):\n got ids %v offsets %v types %v mask %v\nwant ids %v offsets %v types %v mask %v",
							text, c.Special, c.MaxLength, e.IDs, flatOffsets(e.Offsets), e.TypeIDs, e.SpecialTokensMask,
							c.IDs, c.Offsets, c.TypeIDs, c.SpecialMask)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d cases differ", bad)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
