package experiment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/report"
)

// countingHash counts the query texts the hash embedder embeds.
type countingHash struct {
	*hashembed.Hash
	queries atomic.Int64
}

func (c *countingHash) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	if role == embed.Query {
		c.queries.Add(int64(len(texts)))
	}
	return c.Hash.Embed(ctx, texts, role)
}

// TestRunModes evaluates one dataset with both embeddings: two indices and
// two runs, the queries embedded once, every configuration compared; a second
// call reuses both indices, and an index of the other embedding is rebuilt.
func TestRunModes(t *testing.T) {
	emb := &countingHash{Hash: hash(t)}
	data, out := t.TempDir(), t.TempDir()
	if err := hashembed.WriteDataset(data, 120); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "test", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16, 32)}, K: 20, ChannelK: 30}
	modes := []msrag.Embedding{msrag.Independent, msrag.Late}
	res, err := experiment.RunModes(context.Background(), spec, modes)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Runs[0].Report.Queries
	one := &countingHash{Hash: emb.Hash}
	alone := spec
	alone.Build.Embedder, alone.Out = one, t.TempDir()
	if _, err := experiment.Run(context.Background(), alone); err != nil {
		t.Fatal(err)
	}
	// The queries embedded once for both, exactly as one run alone embeds
	// them, repeated texts included (the dataset's 15 test queries have 3
	// texts): an int8 model's vectors depend on the batch, so both must come
	// from the same batches.
	if n, n1 := emb.queries.Load(), one.queries.Load(); n != n1 || n == 0 {
		t.Errorf("two runs embedded %d query texts, one run alone %d", n, n1)
	}
	for i, m := range modes {
		r := res.Runs[i].Report
		if r.Embedding != m.String() || r.Index.Dir != filepath.Join(out, m.String(), "index") || r.Index.Reused {
			t.Errorf("run %d: embedding %s, index %+v", i, r.Embedding, r.Index)
		}
	}
	if res.Runs[1].Report.Late == nil || res.Runs[0].Report.Late != nil {
		t.Errorf("late segments recorded: independent %+v, late %+v", res.Runs[0].Report.Late, res.Runs[1].Report.Late)
	}
	rrf := findMode(res.Modes, "rrf")
	if rrf == nil || len(rrf.Means) != 2 || len(rrf.Paired) != 1 || rrf.Paired[0].Queries != q {
		t.Fatalf("rrf across embeddings: %+v", rrf)
	}
	// The hash embedder ignores context: late vectors equal independent
	// ones, so every query ties.
	if p := rrf.Paired[0]; p.Ties != q || p.Diff != 0 {
		t.Errorf("rrf, late against independent with a context-free embedder: %+v", p)
	}
	md, err := os.ReadFile(res.Markdown)
	if err != nil || !strings.Contains(string(md), "| rrf |") || !strings.Contains(string(md), "late − independent") {
		t.Errorf("modes.md: %v\n%s", err, md)
	}

	res, err = experiment.RunModes(context.Background(), spec, modes)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Runs {
		if !r.Report.Index.Reused {
			t.Errorf("second call, run %d: index not reused: %s", i, r.Report.Index.Why)
		}
	}
	late := experiment.ModeSpec(spec, msrag.Late)
	late.Build.Out = filepath.Join(out, "independent", "index")
	r, err := experiment.Run(context.Background(), late)
	if err != nil {
		t.Fatal(err)
	}
	if r.Report.Index.Reused || !strings.Contains(r.Report.Index.Why, "embedded independent, not late") {
		t.Errorf("a late run on an independent index: %+v", r.Report.Index)
	}
}

func findMode(m *report.Modes, name string) *report.ModeConfig {
	for i := range m.Configs {
		if m.Configs[i].Name == name {
			return &m.Configs[i]
		}
	}
	return nil
}
