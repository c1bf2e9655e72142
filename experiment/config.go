package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

// Config is one configuration to fuse and score: a fusion rule, or the
// oracle (per query and metric the best single window, chosen with the
// labels: an upper bound, not a method).
type Config struct {
	// Name names the configuration in reports and run files.
	Name   string
	Kind   string // report.KindWindow, KindFull, KindOracle, KindLearned or the rule's name
	Fusion msrag.Fusion
	Oracle bool
	// CV marks the cross-validated configurations: each fold has its own
	// fitted rule, so Fusion is not used.
	CV bool
}

// fileName is the configuration's run file name, without the directory.
func (c Config) fileName() string {
	return strings.NewReplacer(":", "_", "/", "_").Replace(c.Name) + ".trec"
}

// fusionText is the rule in msrag's text form, "" when there is not one.
func (c Config) fusionText() string {
	if c.Oracle || c.CV {
		return ""
	}
	return c.Fusion.String()
}

// FusionConfig is the configuration of one fusion rule.
func FusionConfig(f msrag.Fusion) Config {
	c := Config{Name: f.String(), Fusion: f, Kind: f.Method.String()}
	switch {
	case f.String() == "full":
		c.Kind = report.KindFull
	case len(f.Windows) == 1 && f.Method == fuse.MethodMaxP:
		c.Kind = report.KindWindow
	}
	return c
}

// DefaultConfigs is what msrag eval evaluates unless told otherwise:
// windows,rrf,maxp,full,oracle.
const DefaultConfigs = "windows,rrf,maxp,full,oracle"

// ParseConfigs expands a comma-separated list of configurations against the
// index's sliding windows:
//
//	windows   every window alone (w100, w200, ...)
//	oracle    the oracle over the single windows (it adds them)
//	RULE      any fusion msrag.ParseFusion reads: w100, full, rrf, maxp,
//	          rrf=100+200, rrf:c=60,base=1, combsum:norm=minmax, ...
//
// A rule with parameters is written with ';' between its parameters in this
// list (rrf:c=60;base=1), since ',' separates configurations.
func ParseConfigs(s string, windows []chunk.Window) ([]Config, error) {
	var out []Config
	add := func(c Config) {
		if !slices.ContainsFunc(out, func(o Config) bool { return o.Name == c.Name }) {
			out = append(out, c)
		}
	}
	singles := func() {
		for _, w := range windows {
			if !w.Truncate {
				add(FusionConfig(msrag.Single(w.Name())))
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
			if err := checkWindows(f, windows); err != nil {
				return nil, fmt.Errorf("experiment: configuration %q: %w", tok, err)
			}
			add(FusionConfig(f))
		}
	}
	if oracle {
		singles()
		add(Config{Name: report.KindOracle, Kind: report.KindOracle, Oracle: true})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("experiment: configurations %q name none", s)
	}
	return out, nil
}

// checkWindows fails unless every window f fuses or weighs is a sliding
// window of windows or the full window (which every evaluation index has).
func checkWindows(f msrag.Fusion, windows []chunk.Window) error {
	_, err := f.Select(msrag.LayoutOf(append(slices.Clone(windows), chunk.Full)))
	return err
}

// KindLearned is the kind of the configurations of a fusion model and of
// cross-validated fitting.
const KindLearned = "learned"

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
	{Name: "learned-cv", Kind: KindLearned, CV: true},
	{Name: "learned+router-cv", Kind: KindLearned, CV: true},
}
