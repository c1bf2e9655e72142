package tokenizer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/tokenizer"
)

func TestLoadErrors(t *testing.T) {
	const model = `"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1}}`
	tests := []struct {
		name, json, want string
		sentinel         error
	}{
		{"unsupported normalizer", `{"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Foo"}]}, ` + model + `}`,
			`tokenizer: normalizer.normalizers[1]: unsupported type "Foo"`, tokenizer.ErrUnsupported},
		{"unsupported pre-tokenizer", `{"pre_tokenizer": {"type": "ByteLevel"}, ` + model + `}`,
			`tokenizer: pre_tokenizer: unsupported type "ByteLevel"`, tokenizer.ErrUnsupported},
		{"unsupported model", `{"model": {"type": "BPE", "vocab": {}, "merges": []}}`,
			`tokenizer: model: unsupported type "BPE"`, tokenizer.ErrUnsupported},
		{"unsupported post-processor", `{"post_processor": {"type": "Sequence", "processors": [{"type": "ByteLevel"}]}, ` + model + `}`,
			`tokenizer: post_processor.processors[0]: unsupported type "ByteLevel"`, tokenizer.ErrUnsupported},
		{"missing unk", `{"model": {"type": "WordPiece", "unk_token": "[X]", "vocab": {"a": 0}}}`,
			`tokenizer: model: unk_token "[X]" is not in the vocabulary`, tokenizer.ErrInvalid},
		{"not json", `{`, `tokenizer: unexpected end of JSON input`, tokenizer.ErrInvalid},
		{"no model", `{}`, `tokenizer: model: missing`, tokenizer.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tokenizer.FromJSON([]byte(tc.json))
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tc.sentinel)
			}
		})
	}
}

func TestLoadNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte(`{"normalizer": {"type": "Foo"}, "model": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := tokenizer.Load(path)
	if err == nil || !strings.Contains(err.Error(), path+": normalizer: unsupported type") {
		t.Fatalf("error %v does not name the file and component", err)
	}
}

func TestAccessors(t *testing.T) {
	tok := loadTokenizer(t, "testdata/bert-uncased.tokenizer.json.gz")
	// Values from the file: truncation max_length 128, pad_id 0, [CLS]/[SEP].
	if got := tok.MaxLength(); got != 128 {
		t.Errorf("MaxLength = %d, want 128", got)
	}
	if got := tok.PadID(); got != 0 {
		t.Errorf("PadID = %d, want 0", got)
	}
	if got := tok.NumSpecialTokens(); got != 2 {
		t.Errorf("NumSpecialTokens = %d, want 2", got)
	}
	for tokStr, want := range map[string]int32{"[CLS]": 101, "[SEP]": 102, "hello": 7592, "##s": 2015} {
		if id, ok := tok.TokenToID(tokStr); !ok || id != want {
			t.Errorf("TokenToID(%q) = %d, %v; want %d", tokStr, id, ok, want)
		}
	}
	if _, ok := tok.TokenToID("no-such-token"); ok {
		t.Error("TokenToID found a token that is not in the vocabulary")
	}
}

func TestEncodeBatchOrder(t *testing.T) {
	tok := loadTokenizer(t, "testdata/bert-uncased.tokenizer.json.gz")
	texts := make([]string, 200)
	for i := range texts {
		texts[i] = strings.Repeat("word ", i%17) + "end"
	}
	opts := tokenizer.Options{NoSpecial: true}
	for i, e := range tok.EncodeBatch(texts, opts) {
		want := tok.EncodeWith(texts[i], opts)
		if len(e.IDs) != len(want.IDs) || len(e.IDs) != i%17+1 {
			t.Fatalf("text %d: %d ids, want %d", i, len(e.IDs), i%17+1)
		}
	}
}

// TestVocabSize compares with the ids of the files' JSON read by Python:
// max(len(model.vocab), max added token id + 1).
func TestVocabSize(t *testing.T) {
	for file, want := range map[string]int{"bert-uncased": 30522, "xlmr-ja": 8002} {
		tok, err := tokenizer.FromJSON(testfiles.ReadGzip(t, filepath.Join("testdata", file+".tokenizer.json.gz")))
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.VocabSize(); got != want {
			t.Errorf("%s: VocabSize = %d, want %d", file, got, want)
		}
	}
}
