// Package fusion says how a search fuses an index's channels: a rule of
// package fuse, the channels of a layout it fuses, their weights or linear
// coefficients, and an optional learned router. [Parse] reads its one text
// form, which [Fusion.String] writes back; [Fusion.Select] finds its
// channels in a layout, and [CheckRouter] checks a router against them.
// Package fuse's rules and kernels know nothing of channels or routers:
// this package joins them to package channel's layouts and package router's
// models.
package fusion

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/router"
)

// Fusion says how the index's channels become one document ranking per
// query: a rule (fuse.Rule: the method and its own parameters), the channels
// it fuses with their weights or coefficients, and an optional
// router. The zero value stands for an index's default fusion wherever a
// fusion is optional (msrag.SearchOptions, Fuse: Default of the index's
// layout; IsZero); Parse never returns it: "rrf" parses to RRF (c = 1,
// ranks from 0, every chunk voting) over the group of the index's first
// kind, which the zero value also is as a rule alone. Parse reads the one
// text form, which String writes back.
type Fusion struct {
	// Rule is the method and its parameters: MethodRRF,
	// MethodDocRRF, MethodCombSUM, MethodCombMNZ, MethodLinear or
	// MethodMaxP (package fuse). MaxP over one channel is that channel
	// alone, its chunks collapsed to documents by their best.
	fuse.Rule
	// Channels names the channels fused (each as its kind names it:
	// "w100", "full", "bm25-w100"), or is one group: a kind's name, its
	// channels that its group fuses (channel.Traits.Grouped), or "all"
	// (every kind's); empty means the group of the index's first kind.
	// The text form writes it windows=.
	Channels []string
	// Weights weighs channels by name, or every channel of a kind by the
	// kind's name (KIND:1.25); a channel named weighs its own value, one
	// not named its kind's, else 1. Not with MaxP.
	Weights map[string]float64
	// Balance, when set, gives each kind of channel fused the same total
	// weight: a channel's weight is multiplied by (channels fused) /
	// (kinds fused × channels of its kind), so three channels of one kind
	// and four of another weigh 7/6 and 7/8 each. Written balance=kinds; not
	// with MaxP.
	Balance bool
	// Score, Rank and Votes are the coefficients of MethodLinear per
	// channel name (fuse.Options.Linear): of the z-scored document score,
	// of 1/(docrank+1) and of the chunk votes; a channel not named has 0.
	Score, Rank, Votes map[string]float64
	// Router, when set, weighs channels per query by a learned model of the
	// query's embedding and the lists' features (msrag tune writes one in a
	// fusion model file); it cannot be written in the text form.
	Router *router.Model

	// parsed marks a Fusion Parse returned, so that "rrf" is not the zero
	// value.
	parsed bool
}

// IsZero reports whether f is the zero Fusion, which a search reads as
// the index's default fusion. A Fusion Parse returned, or one with any
// field set, is not.
func (f Fusion) IsZero() bool {
	return !f.parsed && f.Rule == (fuse.Rule{}) && f.Channels == nil && f.Weights == nil && !f.Balance &&
		f.Score == nil && f.Rank == nil && f.Votes == nil && f.Router == nil
}

// ErrUnknownRule is wrapped by Parse's error for a rule that is neither a
// method nor a channel's name, so that a caller that knows the index can
// list its channels.
var ErrUnknownRule = errors.New("unknown rule")

// single reports whether f is one window alone.
func (f Fusion) single() bool {
	return f.Method == fuse.MethodMaxP && len(f.Channels) == 1 && !channel.IsGroup(f.Channels[0])
}

// Parse reads a fusion rule:
//
//	rrf | docrrf | combsum | combmnz | maxp    a rule over every sliding window
//	RULE:PARAM=VALUE,...                       with parameters: the rule's
//	                                           own (fuse.Rule: c, base, cap,
//	                                           norm, adapt) and the channels':
//	    windows=100+200  the channels fused ("full" names the full window;
//	                     another kind's channels by its names for them)
//	    windows=KIND | all   the channels of a kind's group (a registered
//	                     kind's name), or of every kind
//	    weights=100:1/200:0.5/500:2   window weights (not maxp); KIND:1.5
//	                     weighs every channel of a kind
//	linear:score=100:1/full:0.5,rank=200:0.25,votes=100:1
//	                                           the learned linear rule's coefficients
//	w100 | w=100 | full | CHANNEL               one channel alone
//	rrf=100+200 | maxp=100+200                 the same as windows=100+200
func Parse(s string) (Fusion, error) {
	text := strings.ToLower(strings.TrimSpace(s))
	if w, ok := singleWindow(text); ok {
		return Fusion{Rule: fuse.Rule{Method: fuse.MethodMaxP}, Channels: []string{w}, parsed: true}, nil
	}
	name, params, _ := strings.Cut(text, ":")
	if rule, list, ok := strings.Cut(name, "="); ok && params == "" {
		name, params = rule, "windows="+list // legacy rrf=100+200
	}
	var f Fusion
	var err error
	if f.Method, err = fuse.ParseMethod(name); err != nil {
		if strings.HasSuffix(name, "+router") {
			return Fusion{}, fmt.Errorf("msrag: fusion %q: a router comes from a fusion model file (--fusion-model)", s)
		}
		return Fusion{}, fmt.Errorf("msrag: fusion %q: %w %q (want %s, wSIZE or full)", s, ErrUnknownRule, name, strings.Join(fuse.MethodNames(), ", "))
	}
	if params != "" {
		for _, p := range strings.Split(params, ",") {
			if err := f.set(p); err != nil {
				return Fusion{}, fmt.Errorf("msrag: fusion %q: %w", s, err)
			}
		}
	}
	if err := f.validate(); err != nil {
		return Fusion{}, fmt.Errorf("msrag: fusion %q: %w", s, err)
	}
	f.parsed = true
	return f, nil
}

// singleWindow recognises one channel alone: "w100", "w=100", "full",
// any registered kind's channel as channel.ParseName reads it;
// a bare number is a list of windows, not a channel.
func singleWindow(s string) (string, bool) {
	if strings.Trim(s, "0123456789") == "" {
		return "", false
	}
	n, err := channel.ParseName(s)
	return n, err == nil
}

// windowName turns "100", "w100", "full", another kind's channel as a user
// writes it, into a channel's name.
func windowName(s string) (string, error) {
	return channel.ParseName(s)
}

// set applies one PARAM=VALUE: the rule's own parameters parse in fuse, the
// channels' here.
func (f *Fusion) set(p string) error {
	key, val, ok := strings.Cut(strings.TrimSpace(p), "=")
	if !ok {
		return fmt.Errorf("parameter %q: want NAME=VALUE", p)
	}
	known, err := f.Rule.Set(key, val)
	if !known {
		known = true
		switch key {
		case "windows":
			err = f.setWindows(val)
		case "weights":
			f.Weights, err = parseValues(val, true)
		case "balance":
			f.Balance = val == balanceKinds
			if !f.Balance {
				err = fmt.Errorf("want %s", balanceKinds)
			}
		case "score":
			f.Score, err = parseValues(val, false)
		case "rank":
			f.Rank, err = parseValues(val, false)
		case "votes":
			f.Votes, err = parseValues(val, false)
		default:
			known = false
		}
	}
	if !known {
		return fmt.Errorf("unknown parameter %q (want %s, %s)", key, strings.Join(fuse.RuleParams, ", "), strings.Join(channelParams, ", "))
	}
	if err != nil {
		return fmt.Errorf("parameter %s=%q: %w", key, val, err)
	}
	return nil
}

// channelParams are the parameters of the text form that name channels.
var channelParams = []string{"windows", "weights", "balance", "score", "rank", "votes"}

// balanceKinds is the one value of balance=.
const balanceKinds = "kinds"

func (f *Fusion) setWindows(list string) error {
	f.Channels = nil
	if g := strings.TrimSpace(list); channel.IsGroup(g) {
		f.Channels = []string{g}
		return nil
	}
	for _, s := range strings.Split(list, "+") {
		w, err := windowName(s)
		if err != nil {
			return err
		}
		if slices.Contains(f.Channels, w) {
			return fmt.Errorf("window %s given twice", w)
		}
		f.Channels = append(f.Channels, w)
	}
	return nil
}

// parseValues parses WINDOW:VALUE/WINDOW:VALUE/...; with kinds, a kind's
// name may stand for a window.
func parseValues(list string, kinds bool) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range strings.Split(list, "/") {
		ws, vs, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want WINDOW:VALUE", s)
		}
		w, err := valueKey(ws, kinds)
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: %q is not a finite number", s, vs)
		}
		if _, dup := out[w]; dup {
			return nil, fmt.Errorf("window %s given twice", w)
		}
		out[w] = v
	}
	return out, nil
}

// valueKey is the window (or, with kinds, the kind) a value is given for.
func valueKey(s string, kinds bool) (string, error) {
	if k := strings.TrimSpace(s); kinds && k != channel.All && channel.IsGroup(k) {
		return k, nil
	}
	return windowName(s)
}

// validate checks that f's rule is valid and its channels' parameters fit
// it.
func (f Fusion) validate() error {
	if err := f.Rule.Validate(); err != nil {
		return err
	}
	switch {
	case (len(f.Weights) > 0 || f.Balance || f.Router != nil) && !f.Method.TakesWeights():
		return fmt.Errorf("%s takes no weights", f.Method)
	case f.Method != fuse.MethodLinear && len(f.Score)+len(f.Rank)+len(f.Votes) > 0:
		return fmt.Errorf("score, rank and votes are coefficients of linear, not %s", f.Method)
	}
	for w, v := range f.Weights {
		if !fuse.ValidWeight(v) {
			return fmt.Errorf("window %s: weight %v must be finite and not negative", w, v)
		}
	}
	return nil
}

// KindsNamed returns the kinds of the channels and groups f names (for the group
// "all", those of layout, and when layout has one kind the first
// registered kind it lacks: "all" fuses several); the first kind of
// layout when it names none.
func (f Fusion) KindsNamed(layout channel.Layout) []channel.Kind {
	var out []channel.Kind
	add := func(k channel.Kind) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(f.Channels) == 0 && len(layout) > 0 {
		add(layout[0].Kind)
	}
	for _, w := range f.Channels {
		if w == channel.All {
			for _, k := range layout.Kinds() {
				add(k)
			}
			if len(out) < 2 {
				if i := slices.IndexFunc(channel.Kinds(), func(k channel.Kind) bool { return !layout.Has(k) }); i >= 0 {
					add(channel.Kinds()[i])
				}
			}
		} else if k, ok := channel.Lookup(w); ok {
			add(k)
		} else if k, ok := channel.KindOf(w); ok {
			add(k)
		}
	}
	return out
}

// Select returns the positions, in layout, of the channels f fuses: those
// it names, those the group it names fuses (a kind's: channel.Channel's
// Grouped; "all": every kind's, of an index of several kinds), or, when it
// names none, the group of the layout's first kind. It fails
// unless every channel f names, weighs or routes is one of layout's.
func (f Fusion) Select(layout channel.Layout) ([]int, error) {
	for _, k := range f.KindsNamed(layout) {
		if !layout.Has(k) {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no %s windows (it has %s): %w", f, k.Name(), layout, k.Traits().Absent)
		}
	}
	group := ""
	switch {
	case len(f.Channels) == 0 && len(layout) > 0:
		group = layout[0].Kind.Name()
	case len(f.Channels) > 0 && channel.IsGroup(f.Channels[0]):
		group = f.Channels[0]
	}
	var sel []int
	for i, c := range layout {
		if group != "" && c.Grouped(group) {
			sel = append(sel, i)
		}
	}
	switch {
	case group == channel.All && len(layout.Kinds()) < 2:
		return nil, fmt.Errorf("msrag: fusion %s: windows=all fuses channels of several kinds, and the index has one (%s)", f, layout)
	case group != "" && len(sel) == 0:
		return nil, fmt.Errorf("msrag: fusion %s: the index has no channel that windows=%s fuses (it has %s)", f, group, layout)
	}
	for _, w := range f.Channels {
		if group != "" {
			break
		}
		i := layout.Index(w)
		if i < 0 {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no window %s (it has %s)", f, w, layout)
		}
		sel = append(sel, i)
	}
	fused := make(channel.Layout, len(sel))
	for i, wi := range sel {
		fused[i] = layout[wi]
	}
	for _, m := range []map[string]float64{f.Weights, f.Score, f.Rank, f.Votes} {
		for w := range m {
			if fused.Index(w) < 0 && !slices.ContainsFunc(fused, func(c channel.Channel) bool { return c.Kind.Name() == w }) {
				return nil, fmt.Errorf("msrag: fusion %s: weight for window %s, which it does not fuse", f, w)
			}
		}
	}
	if f.Router != nil && !slices.Equal(fused.Names(), f.Router.Channels) {
		return nil, fmt.Errorf("msrag: fusion %s: its router weighs windows %v, the rule fuses %v", f, f.Router.Channels, fused.Names())
	}
	return sel, nil
}

// Kinds returns the kinds of the channels of layout f fuses, in layout
// order: what a search for f must search.
func (f Fusion) Kinds(layout channel.Layout) ([]channel.Kind, error) {
	sel, err := f.Select(layout)
	if err != nil {
		return nil, err
	}
	var out []channel.Kind
	for _, i := range sel {
		if !slices.Contains(out, layout[i].Kind) {
			out = append(out, layout[i].Kind)
		}
	}
	return out, nil
}

// String returns the fusion in the form Parse reads, parameters in a
// fixed order and only where they differ from the defaults.
func (f Fusion) String() string {
	if f.single() {
		return f.Channels[0]
	}
	var p []string
	if len(f.Channels) > 0 {
		p = append(p, "windows="+strings.Join(mapSlice(f.Channels, shortName), "+"))
	}
	for _, m := range []struct {
		key string
		v   map[string]float64
	}{{"weights", f.Weights}, {"score", f.Score}, {"rank", f.Rank}, {"votes", f.Votes}} {
		if len(m.v) > 0 {
			p = append(p, m.key+"="+valuesString(m.v))
		}
		if m.key == "weights" && f.Balance {
			p = append(p, "balance="+balanceKinds)
		}
	}
	s := f.Rule.Format(p)
	if f.Router != nil {
		s += "+router"
	}
	return s
}

// valuesString writes per-window values as WINDOW:VALUE/..., windows in
// order.
func valuesString(v map[string]float64) string {
	names := make([]string, 0, len(v))
	for w := range v {
		names = append(names, w)
	}
	slices.SortFunc(names, compareWindowNames)
	parts := make([]string, len(names))
	for i, w := range names {
		parts[i] = shortName(w) + ":" + strconv.FormatFloat(v[w], 'g', -1, 64)
	}
	return strings.Join(parts, "/")
}

// shortName writes w100 as 100 (full stays full).
func shortName(w string) string { return strings.TrimPrefix(w, "w") }

// compareWindowNames orders sliding windows by size, the full window last.
func compareWindowNames(a, b string) int {
	na, ea := strconv.Atoi(shortName(a))
	nb, eb := strconv.Atoi(shortName(b))
	if (ea == nil) != (eb == nil) {
		if ea == nil {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(na, nb), strings.Compare(a, b))
}

func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// FileName returns a name for f usable in file names: its String with the
// characters ':' and '/' replaced by '_'.
func (f Fusion) FileName() string {
	return strings.NewReplacer(":", "_", "/", "_").Replace(f.String())
}

// CheckRouter fails unless r is a valid router for queries of dims
// dimensions over the channels sel of l.
func CheckRouter(r *router.Model, dims int, l channel.Layout, sel []int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Set() == router.Kinds {
		_, nk := KindNumbers(l, sel)
		if want := nk*fuse.NumKindFeatures + len(sel); r.Inputs != want {
			return fmt.Errorf("%w: inputs: %d, want %d (%d kinds x %d kind features + %d channels)", router.ErrShape, r.Inputs, want, nk, fuse.NumKindFeatures, len(sel))
		}
		return nil
	}
	return r.CheckInputs(dims, fuse.NumFeatures)
}

// KindNumbers numbers the kinds of the selected channels from 0, in the order
// they first appear, and returns each channel's number and how many kinds.
func KindNumbers(l channel.Layout, sel []int) ([]int, int) {
	num := map[channel.Kind]int{}
	kind := make([]int, len(sel))
	for j, i := range sel {
		k, ok := num[l[i].Kind]
		if !ok {
			k = len(num)
			num[l[i].Kind] = k
		}
		kind[j] = k
	}
	return kind, len(num)
}
