package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

// Kind is what a configuration is: a way of ranking fused from the chunk
// lists, the oracle, or a cross-validated fitting.
type Kind int

// Kinds of configuration.
const (
	// KindRule is a fusion rule over several windows.
	KindRule Kind = iota
	// KindWindow is one sliding window, or one lexical channel, alone.
	KindWindow
	// KindFull is the full window alone.
	KindFull
	// KindOracle is per query and metric the best single window, chosen
	// with the labels: an upper bound, not a method.
	KindOracle
	// KindLearned is a fusion model's rule, with or without its router.
	KindLearned
	// KindLearnedCV is each query ranked by a rule fitted on the other
	// folds; each fold has its own rule, so the configuration has none.
	KindLearnedCV
)

// fused reports whether configurations of kind k rank by their Fusion from
// the chunk lists searched.
func (k Kind) fused() bool { return k != KindOracle && k != KindLearnedCV }

// Config is one configuration to fuse and score.
type Config struct {
	// Name names the configuration in reports and run files.
	Name string
	Kind Kind
	// Fusion is the rule of a fused kind (Kind.fused).
	Fusion msrag.Fusion
}

// reportKind is the kind results.json records: report.KindWindow, KindFull,
// KindOracle, KindLearned, or a rule's method name.
func (c Config) reportKind() string {
	switch c.Kind {
	case KindWindow:
		return report.KindWindow
	case KindFull:
		return report.KindFull
	case KindOracle:
		return report.KindOracle
	case KindLearned, KindLearnedCV:
		return report.KindLearned
	}
	return c.Fusion.Method.String()
}

// fileName is the configuration's run file name, without the directory.
func (c Config) fileName() string {
	return strings.NewReplacer(":", "_", "/", "_").Replace(c.Name) + ".trec"
}

// fusionText is the rule in msrag's text form, "" when there is not one.
func (c Config) fusionText() string {
	if !c.Kind.fused() {
		return ""
	}
	return c.Fusion.String()
}

// FusionConfig is the configuration of one fusion rule.
func FusionConfig(f msrag.Fusion) Config {
	c := Config{Name: f.String(), Fusion: f, Kind: KindRule}
	switch {
	case f.String() == "full":
		c.Kind = KindFull
	case len(f.Windows) == 1 && f.Method == fuse.MethodMaxP:
		c.Kind = KindWindow
	}
	return c
}

// DefaultConfigs is what msrag eval evaluates unless told otherwise:
// windows,rrf,maxp,full,oracle.
const DefaultConfigs = "windows,rrf,maxp,full,oracle"

// ParseConfigs expands a comma-separated list of configurations against the
// evaluation index's layout (EvalLayout):
//
//	windows   every channel alone but the full window's: each sliding
//	          window (w100, w200, ...) and, in a layout with lexical
//	          channels, each one's lexical channel (bm25-w100, ...) and
//	          bm25-doc
//	oracle    the oracle over those single channels (it adds them)
//	RULE      any fusion msrag.ParseFusion reads: w100, full, rrf, maxp,
//	          rrf=100+200, rrf:c=60,base=1, combsum:norm=minmax, ...
//
// A rule with parameters is written with ';' between its parameters in this
// list (rrf:c=60;base=1), since ',' separates configurations.
func ParseConfigs(s string, layout msrag.Layout) ([]Config, error) {
	var out []Config
	add := func(c Config) {
		if !slices.ContainsFunc(out, func(o Config) bool { return o.Name == c.Name }) {
			out = append(out, c)
		}
	}
	singles := func() {
		for _, c := range layout {
			if !c.Window.Truncate {
				add(FusionConfig(msrag.Single(c.Name())))
			}
		}
	}
	oracle := false
	for _, tok := range strings.Split(s, ",") {
		switch tok = strings.ToLower(strings.TrimSpace(tok)); tok {
		case "":
		case "windows":
			singles()
		case "oracle":
			oracle = true
		default:
			f, err := msrag.ParseFusion(strings.ReplaceAll(tok, ";", ","))
			if err != nil {
				return nil, fmt.Errorf("experiment: configuration %q: %w", tok, err)
			}
			if _, err := f.Select(layout); err != nil {
				return nil, fmt.Errorf("experiment: configuration %q: %w", tok, err)
			}
			add(FusionConfig(f))
		}
	}
	if oracle {
		singles()
		add(Config{Name: report.KindOracle, Kind: KindOracle})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("experiment: configurations %q name none", s)
	}
	return out, nil
}

// learnedConfigs are the configurations of a fusion model: its rule, and the
// rule with its router when it has one.
func learnedConfigs(m *tune.FusionModel) ([]Config, error) {
	f, err := m.Fusion(false)
	if err != nil {
		return nil, err
	}
	out := []Config{{Name: "learned", Kind: KindLearned, Fusion: f}}
	if m.Router != nil {
		r, _ := m.Fusion(true)
		out = append(out, Config{Name: "learned+router", Kind: KindLearned, Fusion: r})
	}
	return out, nil
}

// cvConfigs are the configurations of cross-validated fitting.
var cvConfigs = []Config{
	{Name: "learned-cv", Kind: KindLearnedCV},
	{Name: "learned+router-cv", Kind: KindLearnedCV},
}
