package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

// Ranking is what a configuration ranks by: a fusion of the chunk lists,
// the oracle, or a cross-validated fitting.
type Ranking int

// What configurations rank by.
const (
	// ByRule is a fusion rule over several channels.
	ByRule Ranking = iota
	// ByChannel is one channel alone (but the full window).
	ByChannel
	// ByFull is the full window alone.
	ByFull
	// ByOracle is per query and metric the best single channel, chosen
	// with the labels: an upper bound, not a method.
	ByOracle
	// ByLearned is a fusion model's rule, with or without its router.
	ByLearned
	// ByLearnedCV is each query ranked by a rule fitted on the other
	// folds; each fold has its own rule, so the configuration has none.
	ByLearnedCV
)

// fused reports whether configurations of ranking r rank by their Fusion
// from the chunk lists searched.
func (r Ranking) fused() bool { return r != ByOracle && r != ByLearnedCV }

// Config is one configuration to fuse and score.
type Config struct {
	// Name names the configuration in reports and run files.
	Name    string
	Ranking Ranking
	// Fusion is the rule of a fused ranking (Ranking.fused).
	Fusion fusion.Fusion
	// OracleOf is, for an oracle, the kind of channel it picks among; nil:
	// every single channel.
	OracleOf []msrag.ChannelKind
}

// reportKind is the kind results.json records: report.KindWindow, KindFull,
// KindOracle, KindLearned, or a rule's method name.
func (c Config) reportKind() string {
	switch c.Ranking {
	case ByChannel:
		return report.KindWindow
	case ByFull:
		return report.KindFull
	case ByOracle:
		return report.KindOracle
	case ByLearned, ByLearnedCV:
		return report.KindLearned
	}
	return c.Fusion.Method.String()
}

// fileName is the configuration's run file name, without the directory:
// its name with each run of characters other than letters, digits, '.',
// '+' and '-' written '_', so that a shell takes it as it is
// (rrf:windows=all,weights=lexical:1.5 is rrf_windows_all_weights_lexical_1.5.trec).
// The name itself is in results.json and is the run's TREC tag.
func (c Config) fileName() string {
	var b strings.Builder
	for _, r := range c.Name {
		switch {
		case r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '+' || r == '-'):
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	return strings.TrimLeft(b.String(), ".-") + ".trec"
}

// fusionText is the rule in msrag's text form, "" when there is not one.
func (c Config) fusionText() string {
	if !c.Ranking.fused() {
		return ""
	}
	return c.Fusion.String()
}

// FusionConfig is the configuration of one fusion rule.
func FusionConfig(f fusion.Fusion) Config {
	c := Config{Name: f.String(), Fusion: f, Ranking: ByRule}
	switch {
	case f.String() == "full":
		c.Ranking = ByFull
	case len(f.Channels) == 1 && f.Method == fuse.MethodMaxP:
		c.Ranking = ByChannel
	}
	return c
}

// DefaultConfigs is what msrag eval evaluates unless told otherwise:
// windows,rrf,hybrid,maxp,full,oracle.
const DefaultConfigs = "windows,rrf,hybrid,maxp,full,oracle"

// ParseConfigs expands a comma-separated list of configurations against the
// evaluation index's layout (EvalLayout):
//
//	windows   every channel alone but the full window's: each sliding
//	          window's channel of every kind (w100, w200, ...) and the
//	          kinds' whole-document channels
//	hybrid    in a layout of several kinds of channel, RRF over each kind
//	          but the first (rrf:windows=KIND, ...), RRF over every
//	          channel (rrf:windows=all) and the layout's default
//	          (fusion.Default: fusion.DefaultHybrid, less its weights
//	          of kinds the layout lacks); nothing in a layout of one kind
//	oracle    the oracle over those single channels (it adds them) and, in
//	          a layout of several kinds, the oracle of each kind
//	          (oracle:KIND), which can also be asked alone
//	RULE      any fusion fusion.Parse reads: w100, full, rrf, maxp,
//	          rrf=100+200, rrf:c=60,base=1, combsum:norm=minmax, ...
//
// A rule with parameters is written with ';' between its parameters in this
// list (rrf:c=60;base=1), since ',' separates configurations.
func ParseConfigs(s string, layout msrag.Layout) ([]Config, error) {
	p := configParser{layout: layout}
	for _, tok := range strings.Split(s, ",") {
		if err := p.token(strings.ToLower(strings.TrimSpace(tok))); err != nil {
			return nil, err
		}
	}
	if len(p.oracles) > 0 {
		p.singles()
		for _, o := range p.oracles {
			p.add(o)
		}
	}
	if len(p.out) == 0 {
		return nil, fmt.Errorf("experiment: configurations %q name none", s)
	}
	return p.out, nil
}

// configParser collects configurations in the order they are named, each
// once; oracles go last, after the single channels they pick from.
type configParser struct {
	layout  msrag.Layout
	out     []Config
	oracles []Config
}

func (p *configParser) add(c Config) {
	if !slices.ContainsFunc(p.out, func(o Config) bool { return o.Name == c.Name }) {
		p.out = append(p.out, c)
	}
}

// singles adds every channel alone but the full window.
func (p *configParser) singles() {
	for _, c := range p.layout {
		if !c.Window.Truncate {
			p.add(FusionConfig(fusion.Single(c.Name())))
		}
	}
}

// kinds returns the kinds of the layout's channels, in order.
func (p *configParser) kinds() []msrag.ChannelKind { return p.layout.Kinds() }

func (p *configParser) token(tok string) error {
	switch {
	case tok == "":
	case tok == "windows":
		p.singles()
	case tok == "hybrid":
		kinds := p.kinds()
		if len(kinds) < 2 {
			return nil
		}
		var rules []string
		for _, k := range kinds[1:] {
			rules = append(rules, "rrf:windows="+k.Name())
		}
		return p.rules(append(rules, "rrf:windows=all", fusion.Default(p.layout).String())...)
	case tok == report.KindOracle:
		p.oracles = append(p.oracles, Config{Name: report.KindOracle, Ranking: ByOracle})
		if kinds := p.kinds(); len(kinds) > 1 {
			for _, k := range kinds {
				p.oracles = append(p.oracles, Config{Name: oracleOf(k), Ranking: ByOracle, OracleOf: []msrag.ChannelKind{k}})
			}
		}
	case strings.HasPrefix(tok, report.KindOracle+":"):
		name := strings.TrimPrefix(tok, report.KindOracle+":")
		k, ok := channel.Lookup(name)
		if !ok || !slices.ContainsFunc(p.layout, func(c msrag.Channel) bool { return c.Kind == k && !c.Window.Truncate }) {
			return fmt.Errorf("experiment: configuration %q: the index has no %s channels (it has %s)", tok, name, p.layout)
		}
		p.oracles = append(p.oracles, Config{Name: tok, Ranking: ByOracle, OracleOf: []msrag.ChannelKind{k}})
	default:
		return p.rules(tok)
	}
	return nil
}

// oracleOf names the oracle among the channels of kind k: "oracle:KIND".
func oracleOf(k msrag.ChannelKind) string { return report.KindOracle + ":" + k.Name() }

// rules adds fusion rules, each checked against the layout.
func (p *configParser) rules(toks ...string) error {
	for _, tok := range toks {
		f, err := fusion.Parse(strings.ReplaceAll(tok, ";", ","))
		if err != nil {
			return fmt.Errorf("experiment: configuration %q: %w", tok, err)
		}
		if _, err := f.Select(p.layout); err != nil {
			return fmt.Errorf("experiment: configuration %q: %w", tok, err)
		}
		p.add(FusionConfig(f))
	}
	return nil
}

// channelKinds says which kinds of channel a configuration ranks from: a
// kind's name, or report.ChannelsHybrid (several); "" when the layout does not say
// (a cross-validated fitting ranks from every channel).
func channelKinds(c Config, layout msrag.Layout) string {
	var used msrag.Layout
	switch {
	case c.Ranking == ByOracle && c.OracleOf != nil:
		used = slices.DeleteFunc(slices.Clone(layout), func(ch msrag.Channel) bool { return !slices.Contains(c.OracleOf, ch.Kind) })
	case c.Ranking == ByOracle || c.Ranking == ByLearnedCV:
		used = layout
	default:
		sel, err := c.Fusion.Select(layout)
		if err != nil {
			return ""
		}
		for _, i := range sel {
			used = append(used, layout[i])
		}
	}
	switch kinds := used.Kinds(); {
	case len(kinds) > 1:
		return report.ChannelsHybrid
	case len(kinds) == 1:
		return kinds[0].Name()
	}
	return ""
}

// learnedConfigs are the configurations of a fusion model: its rule, and the
// rule with its router when it has one.
func learnedConfigs(m *tune.FusionModel) ([]Config, error) {
	f, err := m.Fusion(false)
	if err != nil {
		return nil, err
	}
	out := []Config{{Name: "learned", Ranking: ByLearned, Fusion: f}}
	if m.Router != nil {
		r, _ := m.Fusion(true)
		out = append(out, Config{Name: "learned+router", Ranking: ByLearned, Fusion: r})
	}
	return out, nil
}

// cvConfigs are the configurations of cross-validated fitting.
var cvConfigs = []Config{
	{Name: "learned-cv", Ranking: ByLearnedCV},
	{Name: "learned+router-cv", Ranking: ByLearnedCV},
}

// checkFused fails unless layout, the channels an evaluation fuses, has
// every channel the fusion model m (called name) fuses. Its rule was
// fitted with them all: fusing the others alone (an evaluation with
// --no-lexical over an index with lexical channels) would evaluate another
// rule under its name.
func checkFused(layout msrag.Layout, name string, m *tune.FusionModel) error {
	d := layout.Diff(m.Channels)
	if d.Covers() {
		return nil
	}
	return fmt.Errorf("experiment: %s fuses %s, which this evaluation does not fuse (its channels: %s): its rule was fitted with them, "+
		"and the others alone would be another rule: evaluate the channels it fuses (without --no-lexical), or leave it out: %w",
		name, d.Missing, layout, ErrLearnedChannels)
}

// ErrLearnedChannels reports a fusion model (a file, or a built-in one)
// that fuses channels the evaluation leaves out.
var ErrLearnedChannels = errors.New("the fusion model's channels are not evaluated")

// checkLearned checks, before any work, that the evaluation's channels
// (Spec.Layout) include those of Spec.FusionModel, and those of one of the
// built-in models called Spec.Builtin.
func (s Spec) checkLearned() error {
	layout := s.Layout()
	if s.FusionModel != nil {
		if err := checkFused(layout, "the fusion model", s.FusionModel); err != nil {
			return err
		}
	}
	if s.Builtin == "" {
		return nil
	}
	ms, err := tune.BuiltinModels(s.Builtin)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err = checkFused(layout, "the built-in fusion "+s.Builtin, m); err == nil {
			return nil
		}
	}
	return err
}
