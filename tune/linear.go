package tune

import (
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
)

// Grid is the values coordinate ascent tries for each coefficient.
var Grid = []float64{0, 0.25, 0.5, 1, 2, 4}

// Passes is the most rounds of coordinate ascent over all coefficients.
const Passes = 3

// Linear is a fitted linear rule and its training score.
type Linear struct {
	Fusion fusion.Fusion
	Score  float64 // the objective on the sets it was fitted on (mean nDCG@10 at loss aversion 0)
	Start  string  // the starting rule it was fitted from
}

// FitLinear fits the linear rule's coefficients over windows (names) by
// coordinate ascent on mean nDCG@10 of ss, each query's loss against the
// index's default fusion counted 1+aversion times (aversion 0: Sets.Score),
// once from each rule it generalises
// (CombSUM-z: every score coefficient 1; RRF: every votes coefficient 1;
// DocRRF: every rank coefficient 1), keeping the best: over the sliding
// windows, or, where the index has channels of several kinds, over hybrid
// (the channels windows=all fuses: every kind's but the full window's).
// Each pass tries every value of Grid for every coefficient in turn and
// keeps a change only when it raises the score.
func FitLinear(ss Sets, aversion float64, windows, sliding, hybrid []string) (*Linear, error) {
	obj, err := newObjective(ss, aversion)
	if err != nil {
		return nil, err
	}
	var best *Linear
	for _, st := range linearStarts(sliding, hybrid) {
		theta := make([]float64, fuse.NumLinear*len(windows))
		for w, name := range windows {
			if contains(st.over, name) {
				theta[fuse.NumLinear*w+st.coef] = 1
			}
		}
		l, err := ascend(obj, windows, theta)
		if err != nil {
			return nil, err
		}
		l.Start = st.name
		if best == nil || l.Score > best.Score {
			best = l
		}
	}
	return best, nil
}

// linearStart is a rule the linear rule's fit starts from: one coefficient
// set to 1 for the channels over.
type linearStart struct {
	name string
	coef int
	over []string
}

// linearStarts returns CombSUM-z, RRF and DocRRF over the sliding windows,
// or over hybrid when it holds more channels than them.
func linearStarts(sliding, hybrid []string) []linearStart {
	if len(hybrid) == len(sliding) {
		return []linearStart{{"combsum:norm=zscore", fuse.LinearScore, sliding}, {"rrf", fuse.LinearVotes, sliding}, {"docrrf", fuse.LinearRank, sliding}}
	}
	return []linearStart{{"combsum:norm=zscore,windows=all", fuse.LinearScore, hybrid}, {"rrf:windows=all", fuse.LinearVotes, hybrid}, {"docrrf:windows=all", fuse.LinearRank, hybrid}}
}

// ascend runs coordinate ascent from theta.
func ascend(obj *objective, windows []string, theta []float64) (*Linear, error) {
	score, err := obj.score(linearFusion(windows, theta))
	if err != nil {
		return nil, err
	}
	for range Passes {
		improved := false
		for i := range theta {
			old := theta[i]
			for _, v := range Grid {
				if v == old {
					continue
				}
				theta[i] = v
				sc, err := obj.score(linearFusion(windows, theta))
				if err != nil {
					return nil, err
				}
				if sc > score+1e-12 {
					score, old, improved = sc, v, true
				}
			}
			theta[i] = old
		}
		if !improved {
			break
		}
	}
	return &Linear{Fusion: linearFusion(windows, theta), Score: score}, nil
}

// linearFusion is the linear rule with coefficients theta over windows.
func linearFusion(windows []string, theta []float64) fusion.Fusion {
	f := fusion.Fusion{Rule: fuse.Rule{Method: fuse.MethodLinear}, Channels: windows,
		Score: map[string]float64{}, Rank: map[string]float64{}, Votes: map[string]float64{}}
	for w, name := range windows {
		for m, v := range map[*map[string]float64]float64{
			&f.Score: theta[fuse.NumLinear*w+fuse.LinearScore],
			&f.Rank:  theta[fuse.NumLinear*w+fuse.LinearRank],
			&f.Votes: theta[fuse.NumLinear*w+fuse.LinearVotes],
		} {
			if v != 0 {
				(*m)[name] = v
			}
		}
	}
	return f
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
