package msrag

import (
	"cmp"
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
// query: a rule (package fuse: the method and its own parameters), the
// channels it fuses with their weights or coefficients, and an optional
// router. The zero value is RRF (c = 1, ranks from 0, every chunk voting)
// over every sliding window. ParseFusion reads the one text form, which
// String writes back.
type Fusion struct {
	// Rule is the method and its parameters (fuse.Rule): MethodRRF,
	// MethodDocRRF, MethodCombSUM, MethodCombMNZ, MethodLinear or
	// MethodMaxP. MaxP over one window is that window alone, its chunks
	// collapsed to documents by their best.
	fuse.Rule
	// Windows names the channels fused (each as its kind names it:
	// "w100", "full"), or is one group: a kind's name, its channels that
	// its group fuses (channel.Kind.Grouped), or "all" (every kind's);
	// empty means the group of the index's first kind.
	Windows []string
	// Weights weighs windows by name; a window not named weighs 1. Not with
	// MaxP.
	Weights map[string]float64
	// Balance, when set, gives each kind of channel fused the same total
	// weight: a channel's weight is multiplied by (channels fused) /
	// (kinds fused × channels of its kind), so three channels of one kind
	// and four of another weigh 7/6 and 7/8 each. Written balance=kinds; not
	// with MaxP.
	Balance bool
	// Score, Rank and Votes are the coefficients of MethodLinear per window
	// name (fuse.Options.Linear): of the z-scored document score, of
	// 1/(docrank+1) and of the chunk votes; a window not named has 0.
	Score, Rank, Votes map[string]float64
	// Router, when set, weighs windows per query by a learned model of the
	// query's embedding and the lists' features (msrag tune writes one in a
	// fusion model file); it cannot be written in the text form.
	Router *router.Model
}

// Single returns the fusion that ranks by one window alone.
func Single(window string) Fusion {
	return Fusion{Rule: fuse.Rule{Method: fuse.MethodMaxP}, Windows: []string{window}}
}

// single reports whether f is one window alone.
func (f Fusion) single() bool {
	return f.Method == fuse.MethodMaxP && len(f.Windows) == 1 && !channel.IsGroup(f.Windows[0])
}

// DefaultHybrid is the fusion of channels of several kinds an index with
// them ranks by unless told otherwise (Index.DefaultFusion): z-scored
// scores summed over every channel. It was chosen on training splits only,
// by its worst margin over the better kind among the rules that rank a
// query the same whatever queries are searched with it (docs/results.md,
// "Fusion across kinds"); adapt=consensus, better in the worst case, is a
// batch's and so is not a default.
const DefaultHybrid = "combsum:norm=zscore,windows=all"

// ParseFusion reads a fusion rule:
//
//	rrf | docrrf | combsum | combmnz | maxp    a rule over every sliding window
//	RULE:PARAM=VALUE,...                       with parameters: the rule's
//	                                           own (fuse.Rule: c, base, cap,
//	                                           norm, adapt) and the channels':
//	    windows=100+200  the channels fused ("full" names the full window;
//	                     another kind's channels by its names for them)
//	    windows=KIND | all   the channels of a kind's group (a registered
//	                     kind's name), or of every kind
//	    weights=100:1/200:0.5/500:2   window weights (not maxp)
//	linear:score=100:1/full:0.5,rank=200:0.25,votes=100:1
//	                                           the learned linear rule's coefficients
//	w100 | w=100 | full | CHANNEL               one channel alone
//	rrf=100+200 | maxp=100+200                 the same as windows=100+200
func ParseFusion(s string) (Fusion, error) {
	text := strings.ToLower(strings.TrimSpace(s))
	if w, ok := singleWindow(text); ok {
		return Single(w), nil
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
		return Fusion{}, fmt.Errorf("msrag: fusion %q: unknown rule %q (want %s, wSIZE or full)", s, name, strings.Join(fuse.MethodNames(), ", "))
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
			f.Weights, err = windowValues(val)
		case "balance":
			f.Balance = val == balanceKinds
			if !f.Balance {
				err = fmt.Errorf("want %s", balanceKinds)
			}
		case "score":
			f.Score, err = windowValues(val)
		case "rank":
			f.Rank, err = windowValues(val)
		case "votes":
			f.Votes, err = windowValues(val)
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
	f.Windows = nil
	if g := strings.TrimSpace(list); channel.IsGroup(g) {
		f.Windows = []string{g}
		return nil
	}
	for _, s := range strings.Split(list, "+") {
		w, err := windowName(s)
		if err != nil {
			return err
		}
		if slices.Contains(f.Windows, w) {
			return fmt.Errorf("window %s given twice", w)
		}
		f.Windows = append(f.Windows, w)
	}
	return nil
}

// windowValues parses WINDOW:VALUE/WINDOW:VALUE/...
func windowValues(list string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, s := range strings.Split(list, "/") {
		ws, vs, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("%q: want WINDOW:VALUE", s)
		}
		w, err := windowName(ws)
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

// kinds returns the kinds of the channels and groups f names (for the group
// "all", those of layout, and when layout has one kind the first
// registered kind it lacks: "all" fuses several); the first kind of
// layout when it names none.
func (f Fusion) kinds(layout Layout) []channel.Kind {
	var out []channel.Kind
	add := func(k channel.Kind) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(f.Windows) == 0 && len(layout) > 0 {
		add(layout[0].Kind)
	}
	for _, w := range f.Windows {
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
func (f Fusion) Select(layout Layout) ([]int, error) {
	for _, k := range f.kinds(layout) {
		if !layout.Has(k) {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no %s windows (it has %s): %w", f, k.Name(), layout, k.Absent())
		}
	}
	group := ""
	switch {
	case len(f.Windows) == 0 && len(layout) > 0:
		group = layout[0].Kind.Name()
	case len(f.Windows) > 0 && channel.IsGroup(f.Windows[0]):
		group = f.Windows[0]
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
	for _, w := range f.Windows {
		if group != "" {
			break
		}
		i := layout.Index(w)
		if i < 0 {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no window %s (it has %s)", f, w, layout)
		}
		sel = append(sel, i)
	}
	fused := make(Layout, len(sel))
	for i, wi := range sel {
		fused[i] = layout[wi]
	}
	for _, m := range []map[string]float64{f.Weights, f.Score, f.Rank, f.Votes} {
		for w := range m {
			if fused.Index(w) < 0 {
				return nil, fmt.Errorf("msrag: fusion %s: weight for window %s, which it does not fuse", f, w)
			}
		}
	}
	if f.Router != nil && !slices.Equal(fused.Names(), f.Router.Windows) {
		return nil, fmt.Errorf("msrag: fusion %s: its router weighs windows %v, the rule fuses %v", f, f.Router.Windows, fused.Names())
	}
	return sel, nil
}

// Kinds returns the kinds of the channels of layout f fuses, in layout
// order: what a search for f must search.
func (f Fusion) Kinds(layout Layout) ([]ChannelKind, error) {
	sel, err := f.Select(layout)
	if err != nil {
		return nil, err
	}
	var out []ChannelKind
	for _, i := range sel {
		if !slices.Contains(out, layout[i].Kind) {
			out = append(out, layout[i].Kind)
		}
	}
	return out, nil
}

// String returns the fusion in the form ParseFusion reads, parameters in a
// fixed order and only where they differ from the defaults.
func (f Fusion) String() string {
	if f.single() {
		return f.Windows[0]
	}
	var p []string
	if len(f.Windows) > 0 {
		p = append(p, "windows="+strings.Join(mapSlice(f.Windows, shortName), "+"))
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

// checkRouter fails unless r is a valid router for queries of dims
// dimensions over the channels sel of l.
func checkRouter(r *router.Model, dims int, l Layout, sel []int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Set() == router.Kinds {
		_, nk := kindNumbers(l, sel)
		if want := nk*fuse.NumKindFeatures + len(sel); r.Inputs != want {
			return fmt.Errorf("%w: inputs: %d, want %d (%d kinds x %d kind features + %d channels)", router.ErrShape, r.Inputs, want, nk, fuse.NumKindFeatures, len(sel))
		}
		return nil
	}
	return r.CheckInputs(dims, fuse.NumFeatures)
}

// DefaultFusionOf is the default fusion of an index of layout l
// (Index.DefaultFusion): DefaultHybrid over channels of several kinds; rrf
// over one kind, named by its group unless it searches the model's
// vectors (rrf alone fuses the first kind's group).
func DefaultFusionOf(l Layout) Fusion {
	kinds := l.Kinds()
	s := "rrf"
	switch {
	case len(kinds) > 1:
		s = DefaultHybrid
	case len(kinds) == 1 && !kinds[0].Needs().Has(channel.ChunkVectors):
		s = "rrf:windows=" + kinds[0].Name()
	}
	f, err := ParseFusion(s)
	if err != nil {
		panic(fmt.Sprintf("msrag: default fusion %q: %v", s, err))
	}
	return f
}

// FuseHits fuses ch into k documents per query (document indices below ndocs)
// without an index: it returns the positions of the channels fused, in
// ch.Layout, and the ranking. Index.Fuse adds the documents' ids and
// evidence.
func (f Fusion) FuseHits(ch *ChunkHits, ndocs, k int) ([]int, *fuse.Ranking, error) {
	sel, err := f.Select(ch.Layout)
	if err != nil {
		return nil, nil, err
	}
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
		if h := hits[i]; ch.NQ > 0 && (h.K <= 0 || len(h.Docs) != ch.NQ*h.K) {
			return nil, nil, fmt.Errorf("msrag: fusion %s: channel %s was not searched for these queries", f, ch.Layout[wi].Name())
		}
	}
	fo, err := fuseOptions(f, ch, sel, hits, ndocs, k)
	if err != nil {
		return nil, nil, err
	}
	rk, err := fuse.Fuse(f.Method, hits, ndocs, fo)
	if err != nil {
		return nil, nil, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return sel, rk, nil
}

// fuseOptions turns f into fuse's options for the selected windows: static
// weights, linear coefficients and, with Adapt or a Router, query weights.
func fuseOptions(f Fusion, ch *ChunkHits, sel []int, hits []fuse.Hits, ndocs, k int) (fuse.Options, error) {
	fo := f.Rule.Options(k)
	fo.Workers = 2
	name := func(i int) string { return ch.Layout[sel[i]].Name() }
	if len(f.Weights) > 0 || f.Balance {
		fo.Weights = make([]float64, len(sel))
		for i := range sel {
			fo.Weights[i] = valueOr(f.Weights, name(i), 1)
		}
	}
	if f.Balance {
		balance(fo.Weights, ch.Layout, sel)
	}
	if f.Method == fuse.MethodLinear {
		fo.Linear = make([]float64, 0, fuse.NumLinear*len(sel))
		for i := range sel {
			fo.Linear = append(fo.Linear, valueOr(f.Score, name(i), 0), valueOr(f.Rank, name(i), 0), valueOr(f.Votes, name(i), 0))
		}
	}
	var err error
	switch {
	case f.Adapt != nil && f.Adapt.Scope == fuse.AdaptConsensus:
		err = consensusWeights(&fo, hits, ndocs, f.Adapt.T)
	case f.Adapt != nil && f.Adapt.Scope == fuse.AdaptKinds:
		fo.QueryWeights, err = kindWeights(*f.Adapt, hits, ch.Layout, sel)
	case f.Adapt != nil:
		fo.QueryWeights, err = windowWeights(*f.Adapt, hits)
	case f.Router != nil:
		fo.QueryWeights, err = routerWeights(f.Router, ch, sel)
	}
	if err != nil {
		return fo, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return fo, nil
}

// windowWeights weighs each window per query by a feature of its list.
func windowWeights(a fuse.Adapt, hits []fuse.Hits) ([]float64, error) {
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	return fuse.AdaptiveWeights(feats, len(hits), a.Feature, a.T)
}

// kindWeights weighs each kind of channel fused per query by a feature of
// its lists; each window gets its kind's weight.
func kindWeights(a fuse.Adapt, hits []fuse.Hits, l Layout, sel []int) ([]float64, error) {
	kind, nk := kindNumbers(l, sel)
	feats, err := fuse.KindFeatures(hits, kind, nk)
	if err != nil {
		return nil, err
	}
	kw, err := fuse.KindWeights(feats, nk, a.Feature, a.T)
	if err != nil {
		return nil, err
	}
	nq, nw := len(kw)/nk, len(sel)
	out := make([]float64, nq*nw)
	for q := range nq {
		for w, k := range kind {
			out[q*nw+w] = kw[q*nk+k]
		}
	}
	return out, nil
}

// kindNumbers numbers the kinds of the selected channels from 0, in the order
// they first appear, and returns each channel's number and how many kinds.
func kindNumbers(l Layout, sel []int) ([]int, int) {
	num := map[ChannelKind]int{}
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

// consensusWeights multiplies the static weights by each window's agreement
// with the batch's consensus.
func consensusWeights(fo *fuse.Options, hits []fuse.Hits, ndocs int, gamma float64) error {
	cw, err := fuse.ConsensusWeights(hits, ndocs, gamma)
	if err != nil {
		return err
	}
	if fo.Weights == nil {
		fo.Weights = cw
		return nil
	}
	for i := range cw {
		fo.Weights[i] *= cw[i]
	}
	return nil
}

// balance multiplies the weights of the selected channels so that each kind
// fused weighs as much in all: by (channels) / (kinds × channels of its kind).
func balance(w []float64, l Layout, sel []int) {
	per := map[ChannelKind]int{}
	for _, i := range sel {
		per[l[i].Kind]++
	}
	for j, i := range sel {
		w[j] *= float64(len(sel)) / float64(len(per)*per[l[i].Kind])
	}
}

// routerWeights runs the router over the batch's features (and query
// vectors).
func routerWeights(r *router.Model, ch *ChunkHits, sel []int) ([]float64, error) {
	x, err := RouterInputs(r.Set(), ch, sel)
	if err != nil {
		return nil, err
	}
	if err := checkRouter(r, ch.Dims, ch.Layout, sel); err != nil {
		return nil, err
	}
	return r.Weights(x)
}

// RouterInputs builds the input rows of feature set fs for the queries of
// ch, over its channels sel (as Fusion.Select returns them).
func RouterInputs(fs router.FeatureSet, ch *ChunkHits, sel []int) ([]float64, error) {
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
	}
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	switch fs {
	case router.EmbeddingWindows:
		if ch.Dims == 0 || len(ch.Queries) != ch.NQ*ch.Dims {
			return nil, fmt.Errorf("a router of feature set %s needs the query vectors (search with SearchVectors)", fs)
		}
		return router.Inputs(ch.Queries, ch.Dims, feats, len(hits), fuse.NumFeatures)
	case router.Kinds:
		kind, nk := kindNumbers(ch.Layout, sel)
		kf, err := fuse.KindFeatures(hits, kind, nk)
		if err != nil {
			return nil, err
		}
		return router.KindInputs(kf, nk*fuse.NumKindFeatures, feats, len(hits), fuse.NumFeatures, fuse.FeatureAgree)
	}
	return nil, fmt.Errorf("router feature set %q: %w", fs, router.ErrInvalid)
}

func valueOr(m map[string]float64, k string, def float64) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}
