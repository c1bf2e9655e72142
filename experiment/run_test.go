package experiment_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tune"
)

// hash opens the hash test embedder, skipping (failing under CI) when the
// tokenizer it uses has not been fetched.
func hash(t *testing.T) *hashembed.Hash {
	t.Helper()
	if _, err := onnx.ResolveModel("all-minilm-l6-v2"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	e, err := embedders.OpenHash()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func names(e *experiment.Result) []string {
	var out []string
	for _, c := range e.Report.Configs {
		out = append(out, c.Name)
	}
	return out
}

// TestRunLearnedAndPaired runs an evaluation from Go: it builds the index,
// tunes a fusion model on the train split, evaluates it on test with every
// configuration compared pairwise, and refuses to evaluate it on train.
func TestRunLearnedAndPaired(t *testing.T) {
	emb := hash(t)
	data, out := t.TempDir(), t.TempDir()
	if err := hashembed.WriteDataset(data, 160); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "test", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16, 32)}, K: 20, ChannelK: 30}
	res, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"w8", "w16", "w32", "rrf", "maxp", "full", "oracle"}; !slices.Equal(names(res), want) {
		t.Fatalf("configurations %v, want %v", names(res), want)
	}
	rrf := res.Report.Config("rrf")
	if p, ok := rrf.Paired["best_window"]; !ok || p.Queries != res.Report.Queries || p.Wins+p.Ties+p.Losses != p.Queries {
		t.Errorf("rrf's paired comparison with the best window: %+v", rrf.Paired)
	}
	model := fitOnTrain(t, data, filepath.Join(out, "index"), emb)
	spec.FusionModel = model
	res, err = experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Report.Config("learned+router"); c == nil || c.Results.NumQueries != res.Report.Queries || c.Paired["rrf"].Queries == 0 {
		t.Errorf("learned+router: %+v", c)
	}
	spec.Split = "train"
	if _, err := experiment.Run(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "trained on") {
		t.Errorf("evaluating the model on its own training queries: %v", err)
	}
}

// fitOnTrain tunes a fusion model on the train split of the index in dir.
func fitOnTrain(t *testing.T, data, dir string, emb msrag.Embedder) *tune.FusionModel {
	t.Helper()
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: emb}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	set, err := tune.Load(context.Background(), ix, data, "train", 64, 30)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tune.Fit(tune.Sets{set}, []tune.Training{{Dataset: filepath.Base(data), Split: "train"}}, tune.Options{Folds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Training[0].QueryIDs) != len(set.IDs) || m.Router == nil {
		t.Fatalf("model: %d training ids, router %v", len(m.Training[0].QueryIDs), m.Router)
	}
	path := filepath.Join(t.TempDir(), "fusion.json")
	if err := m.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := tune.ReadFusionModel(path)
	if err != nil || back.Rule != m.Rule {
		t.Fatalf("fusion model round trip: %v, rule %q, want %q", err, back.Rule, m.Rule)
	}
	return back
}

// TestRunCrossValidated: with folds, every query of the split is ranked by a
// rule fitted on the others, groups kept together.
func TestRunCrossValidated(t *testing.T) {
	emb := hash(t)
	data, out := t.TempDir(), t.TempDir()
	if err := hashembed.WriteDataset(data, 160); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "train", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)},
		K: 20, ChannelK: 30, Configs: []experiment.Config{experiment.FusionConfig(fusion.Single("w8"))},
		CVFolds: 3, CVGroup: regexp.MustCompile(`^q(\d)`)}
	res, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"learned-cv", "learned+router-cv"} {
		c := res.Report.Config(n)
		if c == nil || c.Results.NumQueries != res.Report.Queries || c.Fusion != "" {
			t.Errorf("%s: %+v", n, c)
		}
	}
}
