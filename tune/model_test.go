package tune

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fusion"
)

// TestFusionModelTail: a fusion model fitted on an index of aligned tails
// reads back the same and serves it, and one of short tails is refused on it.
func TestFusionModelTail(t *testing.T) {
	ix, _ := tinySet(t)
	f, err := fusion.Parse("rrf")
	if err != nil {
		t.Fatal(err)
	}
	m := NewFusionModel(ix, f, ix.Layout(), []Training{{Dataset: "tiny", Split: "train", QueryIDs: []string{"b", "a"}}})
	path := filepath.Join(t.TempDir(), "fusion.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFusionModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := back.Channels.Diff(ix.Layout()); !d.Same() || d.Reordered || back.Rule != "rrf" || back.Training[0].QueryIDs[0] != "a" {
		t.Fatalf("round trip: windows %v (diff %+v), rule %q, queries %v", back.Channels, d, back.Rule, back.Training[0].QueryIDs)
	}
	if err := CheckFusionModel(ix, back); err != nil {
		t.Fatalf("a model of the index's own windows: %v", err)
	}
	for i := range back.Channels {
		back.Channels[i].Window.ShortTail = !back.Channels[i].Window.Truncate // as a fusion.json of short tails
	}
	if err := CheckFusionModel(ix, back); !errors.Is(err, msrag.ErrIndexMismatch) {
		t.Errorf("a model of short tails on aligned ones: %v", err)
	}
}
