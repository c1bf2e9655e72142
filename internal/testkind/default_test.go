package testkind_test

import (
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/testkind"
)

// TestDefaultFusionWithoutLexicalKind: a program that registers the dense
// kind and its own, and not the lexical kind DefaultHybrid weighs by name,
// gets a default fusion over both kinds that selects their channels, not a
// panic on a weight it cannot parse.
func TestDefaultFusionWithoutLexicalKind(t *testing.T) {
	if _, ok := channel.Lookup("lexical"); ok {
		t.Fatal("the lexical kind is registered in this test binary, which this test must run without")
	}
	l := msrag.LayoutOf(chunk.Sizes(16, 32), dense.Kind, testkind.Kind)
	f := fusion.Default(l)
	if sel, err := f.Select(l); err != nil || len(sel) != len(l) {
		t.Errorf("default fusion %s of %s selects %v, %v; want every channel", f, l, sel, err)
	}
}
