package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/router"
)

// Options says how to fit. The zero value uses 5 folds and seed 1, and
// the router's feature set that suits the sets (Sets.Features).
type Options struct {
	Folds int
	Seed  uint64
	// Features is the router's feature set; empty: router.EmbeddingWindows
	// for one dataset, router.Kinds for several.
	Features router.FeatureSet
	// LossAversion counts a training query's loss of nDCG@10 against the
	// index's default fusion 1+LossAversion times in what the fit
	// maximises (FitLinear); 0, the default, maximises mean nDCG@10.
	LossAversion float64
	// Log receives a line per step; nil discards them.
	Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.Folds < 2 {
		o.Folds = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Choice records what fitting tried, for the fusion model file.
type Choice struct {
	// Train holds the mean nDCG@10 on the training queries (over several
	// datasets, the mean of their means) of the rules the learned one is
	// measured against, and of the learned one.
	Train map[string]float64 `json:"train_ndcg_cut_10"`
	Start string             `json:"linear_start"`
	// LossAversion is Options.LossAversion.
	LossAversion float64       `json:"loss_aversion"`
	Router       *RouterChoice `json:"router"`
	// Features is the router's feature set.
	Features router.FeatureSet `json:"router_features"`
}

// Fit learns a linear rule over every window of the sets' indices and a
// router for it on ss (Sets.Check must pass), and returns them as a fusion
// model that records what it was trained on (trs, one per set, in order).
// A router of router.EmbeddingWindows reads the query's embedding: over an
// index without a model there is none, and the
// fusion model is the linear rule alone, which Fit says on Options.Log.
func Fit(ss Sets, trs []Training, o Options) (*FusionModel, error) {
	o = o.withDefaults()
	if err := ss.Check(); err != nil {
		return nil, err
	}
	if len(trs) != len(ss) {
		return nil, fmt.Errorf("tune: %d training descriptions for %d sets", len(trs), len(ss))
	}
	fs := o.Features
	if fs == "" {
		fs = router.EmbeddingWindows
		if len(ss) > 1 {
			fs = router.Kinds
		}
	}
	layout := ss[0].Index.Layout()
	windows, sliding, singles := names(layout)
	ch := &Choice{Train: map[string]float64{}, Features: fs, LossAversion: o.LossAversion}
	for _, b := range append([]string{"rrf", "combsum:norm=zscore", fusion.DefaultHybrid}, singles...) {
		f, _ := fusion.Parse(b)
		if _, err := f.Select(layout); err != nil {
			continue // the default hybrid over an index of one kind
		}
		_, sc, err := ss.Score(f)
		if err != nil {
			return nil, err
		}
		ch.Train[f.String()] = sc
	}
	lin, err := FitLinear(ss, o.LossAversion, windows, sliding, singles)
	if err != nil {
		return nil, err
	}
	if _, ch.Train["learned"], err = ss.Score(lin.Fusion); err != nil {
		return nil, err
	}
	ch.Start = lin.Start
	fmt.Fprintf(o.Log, "tune: linear rule from %s (loss aversion %g): train nDCG@10 %.4f: %s\n", lin.Start, o.LossAversion, ch.Train["learned"], lin.Fusion)
	rule := lin.Fusion
	if fs != router.EmbeddingWindows || ss.HasModel() {
		r, rc, err := FitRouter(ss, o.LossAversion, lin.Fusion, windows, fs, o.Folds, o.Seed)
		if err != nil {
			return nil, err
		}
		ch.Router, rule.Router = rc, r
		fmt.Fprintf(o.Log, "tune: router (%s) penalty %g (%d-fold cross-validated nDCG@10 %v)\n", fs, rc.Lambda, rc.Folds, rc.CV)
	} else {
		fmt.Fprintf(o.Log, "tune: no router: it weighs the windows from the query's embedding, and the index has no model: the linear rule alone\n")
	}
	for i, s := range ss {
		trs[i].QueryIDs = slices.Clone(s.IDs)
		judged := map[string]map[string]int{}
		for _, id := range s.IDs {
			judged[id] = s.Qrels[id]
		}
		trs[i].Fingerprint = JudgementsFingerprint(judged)
	}
	m := NewFusionModel(ss[0].Index, rule, layout, trs)
	if m.Choice, err = json.Marshal(ch); err != nil {
		return nil, err
	}
	return m, nil
}

// names returns the names of every channel of l (the linear rule's
// coefficients), of the sliding windows of the model's vectors (where it
// starts: the rules it is measured against fuse those), and of every
// channel but the full window's (the single baselines, and the channels
// windows=all fuses, where it starts too).
func names(l msrag.Layout) (all, sliding, singles []string) {
	for _, c := range l {
		all = append(all, c.Name())
		if !c.Window.Truncate {
			singles = append(singles, c.Name())
			if c.Kind.Needs().Has(channel.ChunkVectors) {
				sliding = append(sliding, c.Name())
			}
		}
	}
	return all, sliding, singles
}

// CrossValidate ranks every query of s with rules fitted on the other folds:
// the queries are split into folds by group (every query of a group in one
// fold), and for each fold the linear rule and its router are fitted on the
// rest. It returns the held-out runs of the linear rule and of the rule with
// its router, k documents per query.
func CrossValidate(s *Set, group func(id string) string, o Options, k int) (linear, routed eval.Run, err error) {
	o = o.withDefaults()
	fold := groupFolds(s.IDs, group, o.Folds, o.Seed)
	linear, routed = eval.Run{}, eval.Run{}
	for f := range o.Folds {
		var train, test []int
		for q, g := range fold {
			if g == f {
				test = append(test, q)
			} else {
				train = append(train, q)
			}
		}
		if len(test) == 0 || len(train) == 0 {
			continue
		}
		if err := foldRuns(s, train, test, o, k, linear, routed); err != nil {
			return nil, nil, fmt.Errorf("tune: fold %d of %d: %w", f+1, o.Folds, err)
		}
		fmt.Fprintf(o.Log, "tune: fold %d of %d: %d training queries, %d held out\n", f+1, o.Folds, len(train), len(test))
	}
	return linear, routed, nil
}

// foldRuns fits on train and adds the runs of test to linear and routed.
func foldRuns(s *Set, train, test []int, o Options, k int, linear, routed eval.Run) error {
	tr, te := Sets{s.Subset(train)}, s.Subset(test)
	windows, sliding, singles := names(s.Index.Layout())
	lin, err := FitLinear(tr, o.LossAversion, windows, sliding, singles)
	if err != nil {
		return err
	}
	fs := o.Features
	if fs == "" {
		fs = router.EmbeddingWindows
	}
	r, _, err := FitRouter(tr, o.LossAversion, lin.Fusion, windows, fs, o.Folds, o.Seed)
	if err != nil {
		return err
	}
	withRouter := lin.Fusion
	withRouter.Router = r
	for _, p := range []struct {
		f   fusion.Fusion
		run eval.Run
	}{{lin.Fusion, linear}, {withRouter, routed}} {
		run, err := te.Run(p.f, k)
		if err != nil {
			return err
		}
		for id, hits := range run {
			p.run[id] = hits
		}
	}
	return nil
}

// groupFolds assigns each query the fold of its group: groups shuffled with
// seed and dealt round robin.
func groupFolds(ids []string, group func(string) string, folds int, seed uint64) []int {
	var groups []string
	of := map[string]int{}
	for _, id := range ids {
		g := group(id)
		if _, ok := of[g]; !ok {
			of[g] = len(groups)
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	deal := assignFolds(len(groups), folds, seed)
	gf := map[string]int{}
	for i, g := range groups {
		gf[g] = deal[i]
	}
	out := make([]int, len(ids))
	for q, id := range ids {
		out[q] = gf[group(id)]
	}
	return out
}
