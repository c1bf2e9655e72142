package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
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
	// KindWindow is one channel alone (but the full window).
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
	// OracleOf is, for an oracle, the kind of channel it picks among; nil:
	// every single channel.
	OracleOf []msrag.ChannelKind
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
//	          (msrag.DefaultFusionOf: msrag.DefaultHybrid, less its weights
//	          of kinds the layout lacks); nothing in a layout of one kind
//	oracle    the oracle over those single channels (it adds them) and, in
//	          a layout of several kinds, the oracle of each kind
//	          (oracle:KIND), which can also be asked alone
//	RULE      any fusion msrag.ParseFusion reads: w100, full, rrf, maxp,
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
			p.add(FusionConfig(msrag.Single(c.Name())))
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
		return p.rules(append(rules, "rrf:windows=all", msrag.DefaultFusionOf(p.layout).String())...)
	case tok == report.KindOracle:
		p.oracles = append(p.oracles, Config{Name: report.KindOracle, Kind: KindOracle})
		if kinds := p.kinds(); len(kinds) > 1 {
			for _, k := range kinds {
				p.oracles = append(p.oracles, Config{Name: oracleOf(k), Kind: KindOracle, OracleOf: []msrag.ChannelKind{k}})
			}
		}
	case strings.HasPrefix(tok, report.KindOracle+":"):
		name := strings.TrimPrefix(tok, report.KindOracle+":")
		k, ok := channel.Lookup(name)
		if !ok || !slices.ContainsFunc(p.layout, func(c msrag.Channel) bool { return c.Kind == k && !c.Window.Truncate }) {
			return fmt.Errorf("experiment: configuration %q: the index has no %s channels (it has %s)", tok, name, p.layout)
		}
		p.oracles = append(p.oracles, Config{Name: tok, Kind: KindOracle, OracleOf: []msrag.ChannelKind{k}})
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
		f, err := msrag.ParseFusion(strings.ReplaceAll(tok, ";", ","))
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
	case c.Kind == KindOracle && c.OracleOf != nil:
		used = slices.DeleteFunc(slices.Clone(layout), func(ch msrag.Channel) bool { return !slices.Contains(c.OracleOf, ch.Kind) })
	case c.Kind == KindOracle || c.Kind == KindLearnedCV:
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

// checkFused fails unless layout, the channels an evaluation fuses, has
// every channel the fusion model m (called name) fuses. Its rule was
// fitted with them all: fusing the others alone (an evaluation with
// --no-lexical over an index with lexical channels) would evaluate another
// rule under its name.
func checkFused(layout msrag.Layout, name string, m *tune.FusionModel) error {
	d := layout.Diff(m.Windows)
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
