package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
)

// TestParseConfigsLexical checks the expansion against a layout with and
// without lexical channels: windows adds every single channel but the full
// window's, rules keep their meaning, and a lexical channel is refused
// where the layout has none.
func TestParseConfigsLexical(t *testing.T) {
	ws := chunk.Sizes(100, 200)
	for _, tc := range []struct {
		lexical bool
		in      string
		want    []string
	}{
		{false, "windows,rrf,oracle", []string{"w100", "w200", "rrf", "oracle"}},
		{true, "windows,rrf,oracle", []string{"w100", "w200", "bm25-w100", "bm25-w200", "bm25-doc", "rrf", "oracle"}},
		{true, "rrf:windows=all,rrf:windows=lexical,bm25-full", []string{"rrf:windows=all", "rrf:windows=lexical", "bm25-full"}},
	} {
		cs, err := ParseConfigs(tc.in, EvalLayout(ws, tc.lexical))
		if err != nil {
			t.Fatalf("%q (lexical %v): %v", tc.in, tc.lexical, err)
		}
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%q (lexical %v): %v, want %v", tc.in, tc.lexical, names, tc.want)
		}
	}
	for _, in := range []string{"bm25-w100", "rrf:windows=all", "rrf:windows=100+bm25-doc"} {
		if _, err := ParseConfigs(in, EvalLayout(ws, false)); err == nil || !strings.Contains(err.Error(), "no") {
			t.Errorf("%q without lexical channels: %v", in, err)
		}
	}
}
