package msrag

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/router"
)

// FusionModelFormat is the format version of a fusion model file.
const FusionModelFormat = 1

// FusionModel is a fusion rule learned on labelled training queries (msrag
// tune writes it as fusion.json): the static rule, an optional query router,
// what it was trained on and how it was chosen. It serves only indices of
// the same model with the same windows.
type FusionModel struct {
	Format int `json:"format"`
	// Model is the embedding model of the index it was trained on.
	Model ModelInfo `json:"model"`
	// Windows are the index windows the rule fuses, in order.
	Windows []ModelWindow `json:"windows"`
	// Rule is the learned static rule in ParseFusion's form.
	Rule string `json:"rule"`
	// Router weighs the windows per query; nil when none was fitted.
	Router *router.Model `json:"router,omitempty"`
	// Training says which queries it saw.
	Training Training `json:"training"`
	// Choice records the candidates and their cross-validated scores.
	Choice  json.RawMessage `json:"choice,omitempty"`
	Created time.Time       `json:"created"`
}

// ModelWindow is a window as a fusion model records it.
type ModelWindow struct {
	Name     string `json:"name"`
	Size     int    `json:"size"`
	Stride   int    `json:"stride,omitempty"`
	Truncate bool   `json:"truncate,omitempty"`
	// Tail is as the index manifest records it ("aligned" or "short";
	// absent: "short").
	Tail string `json:"tail,omitempty"`
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
func (m *FusionModel) Fusion(withRouter bool) (Fusion, error) {
	f, err := ParseFusion(m.Rule)
	if err != nil {
		return Fusion{}, fmt.Errorf("msrag: fusion model rule: %w", err)
	}
	if withRouter {
		if m.Router == nil {
			return Fusion{}, fmt.Errorf("msrag: the fusion model has no router")
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

// CheckFusionModel fails unless m was trained on an index of this index's
// model with the windows it fuses.
func (ix *Index) CheckFusionModel(m *FusionModel) error {
	if !m.Model.SameModel(ix.man.Model) {
		return fmt.Errorf("msrag: the fusion model was trained with model %s (sha256 %s), the index is of %s (sha256 %s): %w",
			m.Model.Name, m.Model.ModelSHA256, ix.man.Model.Name, ix.man.Model.ModelSHA256, ErrIndexMismatch)
	}
	have := ix.Windows()
	for _, w := range m.Windows {
		want := chunk.Window{Size: w.Size, Stride: w.Stride, Truncate: w.Truncate, ShortTail: !w.Truncate && w.Tail != tailAligned}
		if !slices.Contains(have, want) {
			return fmt.Errorf("msrag: the fusion model fuses window %s (%d tokens), which the index does not have (it has %s): %w",
				w.Name, w.Size, windowList(have), ErrIndexMismatch)
		}
	}
	return nil
}

func windowList(ws []chunk.Window) string {
	s := ""
	for i, w := range ws {
		if i > 0 {
			s += ", "
		}
		s += w.Name()
	}
	return s
}

// modelWindows records windows for a fusion model.
func modelWindows(ws []chunk.Window) []ModelWindow {
	out := make([]ModelWindow, len(ws))
	for i, w := range ws {
		out[i] = ModelWindow{Name: w.Name(), Size: w.Size, Stride: w.Stride, Truncate: w.Truncate, Tail: tailOf(w)}
	}
	return out
}

// NewFusionModel starts a fusion model for rule, trained on ix.
func (ix *Index) NewFusionModel(rule Fusion, fused []chunk.Window, tr Training) *FusionModel {
	slices.Sort(tr.QueryIDs)
	static := rule
	static.Router = nil
	return &FusionModel{Format: FusionModelFormat, Model: ix.man.Model, Windows: modelWindows(fused), Rule: static.String(),
		Router: rule.Router, Training: tr, Created: time.Now().UTC().Truncate(time.Second)}
}

// ReadFusionModel reads a fusion model file.
func ReadFusionModel(path string) (*FusionModel, error) {
	data, err := safefile.ReadSmall(path, maxFusionModel)
	if err != nil {
		return nil, fmt.Errorf("msrag: fusion model: %w", err)
	}
	var m FusionModel
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("msrag: fusion model %s: %w", path, err)
	}
	if m.Format != FusionModelFormat {
		return nil, fmt.Errorf("msrag: fusion model %s: format %d, this msrag reads %d", path, m.Format, FusionModelFormat)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("msrag: fusion model %s: %w", path, err)
	}
	if !slices.IsSorted(m.Training.QueryIDs) {
		slices.Sort(m.Training.QueryIDs)
	}
	return &m, nil
}

// ErrBadFusionModel is wrapped by ReadFusionModel's errors for a file whose
// fields do not describe a usable fusion model.
var ErrBadFusionModel = errors.New("invalid fusion model")

// maxFusionModel bounds a fusion model file's size: a router over
// 1024-dimensional embeddings takes about 40 KB of numbers.
const maxFusionModel = 256 << 20

// maxDims bounds an embedding's dims in files msrag reads.
const maxDims = 1 << 16

// validate checks m's fields against one another: the model's dims, the
// windows (valid, each once), the rule over those windows and the router
// over the rule's windows and the model's dims. Errors name the field.
func (m *FusionModel) validate() error {
	if m.Model.Dims <= 0 || m.Model.Dims > maxDims {
		return fmt.Errorf("model.dims: %d, want 1 to %d: %w", m.Model.Dims, maxDims, ErrBadFusionModel)
	}
	if len(m.Windows) == 0 {
		return fmt.Errorf("windows: none: %w", ErrBadFusionModel)
	}
	ws := make([]chunk.Window, len(m.Windows))
	for i, w := range m.Windows {
		cw, err := w.window()
		if err != nil {
			return fmt.Errorf("windows[%d]: %w", i, err)
		}
		if slices.ContainsFunc(ws[:i], func(o chunk.Window) bool { return o.Name() == cw.Name() }) {
			return fmt.Errorf("windows[%d]: %s is repeated: %w", i, w.Name, ErrBadFusionModel)
		}
		ws[i] = cw
	}
	f, err := m.Fusion(false)
	if err != nil {
		return fmt.Errorf("rule: %w", err)
	}
	if m.Router != nil {
		if err := m.Router.Validate(); err != nil {
			return err
		}
		if err := m.Router.CheckInputs(m.Model.Dims, fuse.NumFeatures); err != nil {
			return err
		}
		f.Router = m.Router
	}
	if _, err := fusedWindows(ws, f); err != nil {
		return fmt.Errorf("rule %q over windows %s: %w", m.Rule, windowList(ws), err)
	}
	return nil
}

// window is the chunk.Window w records, checked: a positive size, a stride
// within it, a known tail and the name those give.
func (w ModelWindow) window() (chunk.Window, error) {
	var cw chunk.Window
	switch {
	case w.Size < 0 || w.Size == 0 && !w.Truncate:
		return cw, fmt.Errorf("size %d, want a positive number: %w", w.Size, ErrBadFusionModel)
	case w.Stride < 0 || w.Stride > w.Size:
		return cw, fmt.Errorf("stride %d, want 0 to the size %d: %w", w.Stride, w.Size, ErrBadFusionModel)
	case w.Tail != "" && w.Tail != tailAligned && w.Tail != tailShort:
		return cw, fmt.Errorf("tail %q, want %s or %s: %w", w.Tail, tailAligned, tailShort, ErrBadFusionModel)
	}
	cw = chunk.Window{Size: w.Size, Stride: w.Stride, Truncate: w.Truncate, ShortTail: !w.Truncate && w.Tail != tailAligned}
	if w.Truncate {
		cw = chunk.Window{Size: w.Size, Truncate: true}
	}
	if cw.Name() != w.Name {
		return cw, fmt.Errorf("name %q, the window is %s: %w", w.Name, cw.Name(), ErrBadFusionModel)
	}
	return cw, nil
}

// Write writes the model to path, atomically.
func (m *FusionModel) Write(path string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = safefile.WriteFile(path, append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("msrag: writing fusion model %s: %w", path, err)
	}
	return nil
}
