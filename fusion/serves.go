package fusion

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/router"
)

// CheckServes is the one answer to whether an index of the channels l,
// whose model embeds queries in dims dimensions (0: it has no model), and
// which messages name where, can serve f: every channel f fuses or weighs
// is one of l's, of a kind that searchable says can be searched (nil:
// every kind), and a router of f reads what the index gives it (query
// vectors of dims, the channels f fuses). An open index asks it
// (msrag.Index.CheckFusion), as do a scatter-gather search's gather of the
// kinds its scatter searched, an evaluation of its configurations and a
// fusion model file of its rule.
func CheckServes(f Fusion, l channel.Layout, dims int, where string, searchable func(channel.Kind) error) error {
	for _, k := range f.KindsNamed(l) {
		if !l.Has(k) {
			return fmt.Errorf("msrag: fusion %s: index %s has no %s windows: %w", f, where, k.Name(), k.Traits().Absent)
		}
	}
	sel, err := f.Select(l)
	if err != nil {
		return err
	}
	kinds, _ := f.Kinds(l)
	for _, k := range kinds {
		if searchable == nil {
			break
		}
		if err := searchable(k); err != nil {
			return err
		}
	}
	if f.Router != nil {
		if f.Router.Set() == router.EmbeddingWindows && dims == 0 {
			return fmt.Errorf("msrag: fusion %s: its router weighs channels by the query vectors, and index %s has no model to embed them with: %w", f, where, channel.ErrNoModel)
		}
		if err := CheckRouter(f.Router, dims, l, sel); err != nil {
			return fmt.Errorf("msrag: fusion %s: %w", f, err)
		}
	}
	return nil
}
