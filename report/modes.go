package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/msrag/msrag/eval"
)

// Modes compares runs of one evaluation (the same dataset, split, queries and
// model) made differently, such as under several embeddings (independent,
// late), configuration by configuration, on the same queries: modes.json.
type Modes struct {
	Dataset string `json:"dataset"`
	Split   string `json:"split"`
	Model   string `json:"model"`
	Queries int    `json:"queries"`
	// Metric is the metric compared; Runs the runs in order, the first the
	// baseline of every comparison.
	Metric string    `json:"metric"`
	Runs   []ModeRun `json:"runs"`
	// Configs are the configurations every run has, in the first run's order.
	Configs []ModeConfig `json:"configs"`
}

// ModeRun is one of the runs compared.
type ModeRun struct {
	// Name labels the run in the tables.
	Name      string `json:"name"`
	Embedding string `json:"embedding"`
	Late      *Late  `json:"late,omitempty"`
	// Out is the run's output directory (its results.json and report.md).
	Out string `json:"out"`
	// Build, BuildEmbed and BuildTokens are the run's build (0 when its
	// index was reused).
	Build       float64 `json:"build_s"`
	BuildEmbed  float64 `json:"build_embed_s"`
	BuildTokens int64   `json:"build_tokens"`
}

// ModeConfig is one configuration under every embedding.
type ModeConfig struct {
	Name       string `json:"name"`
	UpperBound bool   `json:"upper_bound,omitempty"`
	// Means holds the configuration's mean Metric in each run.
	Means []float64 `json:"means"`
	// Paired compares run i+1 with the first run, query by query.
	Paired []eval.Paired `json:"paired"`
}

// CompareModes pairs the configurations of runs (the same dataset, split,
// queries and model, each made its own way) with the first run's; names
// label them and outs says where each was written.
func CompareModes(runs []*Eval, names, outs []string, metric string) (*Modes, error) {
	if len(runs) < 2 || len(outs) != len(runs) || len(names) != len(runs) {
		return nil, fmt.Errorf("report: comparing embeddings needs two runs or more, got %d", len(runs))
	}
	a := runs[0]
	m := &Modes{Dataset: a.Dataset, Split: a.Split, Model: a.Model.Name, Queries: a.Queries, Metric: metric}
	for i, r := range runs {
		if r.Dataset != a.Dataset || r.Split != a.Split || r.Model.Name != a.Model.Name || r.Queries != a.Queries {
			return nil, fmt.Errorf("report: run %d (%s %s, %s, %d queries) is not run 1's (%s %s, %s, %d queries)",
				i+1, r.Dataset, r.Split, r.Model.Name, r.Queries, a.Dataset, a.Split, a.Model.Name, a.Queries)
		}
		emb := r.Embedding
		if emb == "" {
			emb = "independent" // results.json before the embedding was recorded
		}
		m.Runs = append(m.Runs, ModeRun{Name: names[i], Embedding: emb, Late: r.Late, Out: outs[i],
			Build: r.Timings.Build, BuildEmbed: r.Timings.BuildEmbed, BuildTokens: r.Timings.BuildTokens})
	}
	for _, c := range a.Configs {
		mc, err := compareConfig(runs, c, metric)
		if err != nil {
			return nil, err
		}
		if mc != nil {
			m.Configs = append(m.Configs, *mc)
		}
	}
	return m, nil
}

// compareConfig is configuration c in every run, nil when a run lacks it.
func compareConfig(runs []*Eval, c Config, metric string) (*ModeConfig, error) {
	mc := &ModeConfig{Name: c.Name, UpperBound: c.UpperBound}
	for _, r := range runs {
		rc := r.Config(c.Name)
		if rc == nil {
			return nil, nil
		}
		v, _ := rc.mean(metric)
		mc.Means = append(mc.Means, v)
		if r == runs[0] {
			continue
		}
		p, err := eval.Compare(rc.Results, c.Results, metric)
		if err != nil {
			return nil, fmt.Errorf("report: %s, run %s against run %s: %w", c.Name, r.Dataset, runs[0].Dataset, err)
		}
		mc.Paired = append(mc.Paired, p)
	}
	family := make([]*eval.Paired, len(mc.Paired))
	for i := range mc.Paired {
		family[i] = &mc.Paired[i]
	}
	eval.AdjustHolm(family)
	return mc, nil
}

// WriteModesMarkdown writes modes.md: the builds, then every configuration
// in each run with its paired difference from the first.
func WriteModesMarkdown(w io.Writer, m *Modes) error {
	bw := bufio.NewWriter(w)
	label := metricLabel(m.Metric)
	fmt.Fprintf(bw, "# %s (%s split), %s: runs side by side\n\n", m.Dataset, m.Split, m.Model)
	fmt.Fprintf(bw, "%d queries. Differences are from %s, over the same queries, with a 95%% "+
		"paired bootstrap interval (10,000 resamplings), the queries won, tied and lost, and the two-sided "+
		"p-values of the paired t-test and of Fisher's randomization test%s.\n\n", m.Queries, m.Runs[0].Name, holmNote(len(m.Runs)-1))
	bt := &table{head: []string{"run", "embedding", "segments", "build (s)", "embedder busy (s)", "tokens embedded", "results"},
		right: []bool{false, false, false, true, true, true, false}}
	for _, r := range m.Runs {
		seg := "—"
		if r.Late != nil {
			seg = fmt.Sprintf("%d tokens, overlap %d, edges %s", r.Late.SegmentTokens, r.Late.Overlap, r.Late.Edges)
		}
		build, embed, tokens := "reused", "—", "—"
		if r.Build > 0 {
			build, embed, tokens = fmt.Sprintf("%.1f", r.Build), fmt.Sprintf("%.1f", r.BuildEmbed), fmt.Sprint(r.BuildTokens)
		}
		bt.rows = append(bt.rows, []string{r.Name, r.Embedding, seg, build, embed, tokens, r.Out})
	}
	bt.write(bw)
	fmt.Fprintf(bw, "\n## %s\n\n", label)
	head := []string{"configuration"}
	for _, r := range m.Runs {
		head = append(head, r.Name)
	}
	for _, r := range m.Runs[1:] {
		head = append(head, r.Name+" − "+m.Runs[0].Name, "95% interval", "win/tie/loss", "p (t-test)", "p (randomization)")
	}
	t := &table{head: head}
	for range head {
		t.right = append(t.right, len(t.right) > 0)
	}
	for _, c := range m.Configs {
		name := c.Name
		if c.UpperBound {
			name += " (upper bound)"
		}
		row := []string{name}
		for _, v := range c.Means {
			row = append(row, fmt.Sprintf("%.2f", 100*v))
		}
		for _, p := range c.Paired {
			row = append(row, pairedStats(p)...)
		}
		t.rows = append(t.rows, row)
	}
	t.write(bw)
	return bw.Flush()
}
