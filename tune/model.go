package tune

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/router"
)

// FusionModelFormat is the format version of a fusion model file.
const FusionModelFormat = 1

// FusionModel is a fusion rule learned on labelled training queries (msrag tune
// writes it as fusion.json): the static rule, an optional query router,
// what it was trained on and how it was chosen. It serves only indices of
// the same model with the same windows.
type FusionModel struct {
	Format int `json:"format"`
	// Model is the embedding model of the index it was trained on.
	Model msrag.ModelInfo `json:"model"`
	// Windows are the index channels the rule fuses, in order, in the
	// layout's serialised form.
	Windows msrag.Layout `json:"windows"`
	// Rule is the learned static rule in msrag.ParseFusion's form.
	Rule string `json:"rule"`
	// Router weighs the windows per query; nil when none was fitted.
	Router *router.Model `json:"router,omitempty"`
	// Training says which queries it saw.
	Training Training `json:"training"`
	// Choice records the candidates and their cross-validated scores.
	Choice  json.RawMessage `json:"choice,omitempty"`
	Created time.Time       `json:"created"`
}

// Training describes the queries a fusion model was fitted on.
type Training struct {
	Dataset string `json:"dataset"`
	Split   string `json:"split"`
	// QueryIDs are the training queries' ids, sorted: evaluating on any of
	// them is refused.
	QueryIDs []string `json:"query_ids"`
	// Fingerprint is the sha256 of the training judgements, one
	// "query<TAB>document<TAB>level" line each, sorted.
	Fingerprint string `json:"fingerprint"`
}

// JudgementsFingerprint is the sha256 of judgements as Training.Fingerprint
// records them.
func JudgementsFingerprint(q map[string]map[string]int) string {
	var lines []string
	for qid, docs := range q {
		for d, l := range docs {
			lines = append(lines, fmt.Sprintf("%s\t%s\t%d\n", qid, d, l))
		}
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Fusion returns the model's rule, with its router when withRouter is set.
func (m *FusionModel) Fusion(withRouter bool) (msrag.Fusion, error) {
	f, err := msrag.ParseFusion(m.Rule)
	if err != nil {
		return msrag.Fusion{}, fmt.Errorf("tune: fusion model rule: %w", err)
	}
	if withRouter {
		if m.Router == nil {
			return msrag.Fusion{}, fmt.Errorf("tune: the fusion model has no router")
		}
		f.Router = m.Router
	}
	return f, nil
}

// Overlap returns the queries of ids the model was trained on.
func (m *FusionModel) Overlap(ids []string) []string {
	var out []string
	for _, id := range ids {
		if _, ok := slices.BinarySearch(m.Training.QueryIDs, id); ok {
			out = append(out, id)
		}
	}
	return out
}

// CheckFusionModel fails unless m was trained on an index of ix's model with the
// channels it fuses.
func CheckFusionModel(ix *msrag.Index, m *FusionModel) error {
	if have := ix.Manifest().Model; m.Model != have {
		return fmt.Errorf("tune: the fusion model was trained with model %s (sha256 %s), the index is of %s (sha256 %s): %w",
			m.Model.Name, m.Model.ModelSHA256, have.Name, have.ModelSHA256, msrag.ErrIndexMismatch)
	}
	have := ix.Layout()
	if d := have.Diff(m.Windows); !d.Covers() {
		w := d.Missing[0]
		return fmt.Errorf("tune: the fusion model fuses window %s (%d tokens), which the index does not have (it has %s): %w",
			w.Name(), w.Window.Size, have, msrag.ErrIndexMismatch)
	}
	return nil
}

// NewFusionModel starts a fusion model for rule over the channels fused, trained
// on ix.
func NewFusionModel(ix *msrag.Index, rule msrag.Fusion, fused msrag.Layout, tr Training) *FusionModel {
	slices.Sort(tr.QueryIDs)
	static := rule
	static.Router = nil
	return &FusionModel{Format: FusionModelFormat, Model: ix.Manifest().Model, Windows: slices.Clone(fused), Rule: static.String(),
		Router: rule.Router, Training: tr, Created: time.Now().UTC().Truncate(time.Second)}
}

// ReadFusionModel reads a fusion model file.
func ReadFusionModel(path string) (*FusionModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	var m FusionModel
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("tune: fusion model %s: %w", path, err)
	}
	if m.Format != FusionModelFormat {
		return nil, fmt.Errorf("tune: fusion model %s: format %d, this msrag reads %d", path, m.Format, FusionModelFormat)
	}
	if _, err := m.Fusion(false); err != nil {
		return nil, fmt.Errorf("tune: fusion model %s: %w", path, err)
	}
	if !slices.IsSorted(m.Training.QueryIDs) {
		slices.Sort(m.Training.QueryIDs)
	}
	return &m, nil
}

// Write writes the model to path, atomically.
func (m *FusionModel) Write(path string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = safefile.WriteFile(path, append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("tune: writing fusion model %s: %w", path, err)
	}
	return nil
}
