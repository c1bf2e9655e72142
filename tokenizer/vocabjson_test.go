package tokenizer

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The fast vocabulary readers must agree with encoding/json.
func TestVocabParsers(t *testing.T) {
	wp := []byte(` { "[UNK]" : 0, "a\"b": 1, "\u00e9t\u00e9":2,"##x\\y" :3 ,"▁": 40000 } `)
	var want map[string]int32
	if err := json.Unmarshal(wp, &want); err != nil {
		t.Fatal(err)
	}
	got, err := parseWordPieceVocab(wp)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseWordPieceVocab = %v, %v; want %v", got, err, want)
	}
	ug := []byte(`[["<unk>", 0.0], ["\u2581a\n", -1.5e1],["b",-3] ]`)
	pieces, scores, err := parseUnigramVocab(ug)
	wantP, wantS := []string{"<unk>", "\u2581a\n", "b"}, []float64{0, -15, -3}
	if err != nil || !reflect.DeepEqual(pieces, wantP) || !reflect.DeepEqual(scores, wantS) {
		t.Errorf("parseUnigramVocab = %q %v %v; want %q %v", pieces, scores, err, wantP, wantS)
	}
	for _, bad := range []string{`{"a": 1`, `{"a" 1}`, `[["a"]]`, `[["a", x]]`, `{"a": 1.5}`} {
		if _, err := parseWordPieceVocab([]byte(bad)); err == nil && bad[0] == '{' {
			t.Errorf("parseWordPieceVocab(%s) accepted bad input", bad)
		}
		if _, _, err := parseUnigramVocab([]byte(bad)); err == nil && bad[0] == '[' {
			t.Errorf("parseUnigramVocab(%s) accepted bad input", bad)
		}
	}
}
