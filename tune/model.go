package tune

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/router"
)

// FusionModelFormat is the format version of a fusion model file. Format 1
// (one training dataset, no checksum) is read too.
const FusionModelFormat = 2

// FusionModel is a fusion rule learned on labelled training queries (msrag tune
// writes it as fusion.json): the static rule, an optional query router,
// what it was trained on and how it was chosen. It serves indices with the
// channels it fuses; a router that reads the query's embedding, only those
// of the same model (Transfers).
type FusionModel struct {
	Format int `json:"format"`
	// SHA256 is the sha256 of the model's JSON encoding with this field
	// empty: a file whose fields were changed is refused as damaged.
	SHA256 string `json:"sha256"`
	// Model is the embedding model of the index it was trained on.
	Model msrag.ModelInfo `json:"model"`
	// Channels are the index channels the rule fuses, in order, in the
	// layout's serialised form.
	Channels msrag.Layout `json:"windows"`
	// Rule is the learned static rule in fusion.Parse's form.
	Rule string `json:"rule"`
	// Router weighs the channels per query; nil when none was fitted.
	Router *router.Model `json:"router,omitempty"`
	// Training says which queries of which datasets it saw.
	Training []Training `json:"training"`
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
func (m *FusionModel) Fusion(withRouter bool) (fusion.Fusion, error) {
	f, err := fusion.Parse(m.Rule)
	if err != nil {
		return fusion.Fusion{}, fmt.Errorf("tune: fusion model rule: %w", err)
	}
	if withRouter {
		if m.Router == nil {
			return fusion.Fusion{}, fmt.Errorf("tune: the fusion model has no router (msrag tune fits none on an index without a model): use its rule alone (learned)")
		}
		f.Router = m.Router
	}
	return f, nil
}

// Overlap returns the queries of ids, of dataset (a directory's base name,
// as Training.Dataset records it), that the model was trained on, and the
// training entry they come from.
func (m *FusionModel) Overlap(dataset string, ids []string) ([]string, Training) {
	for _, tr := range m.Training {
		if tr.Dataset != dataset {
			continue
		}
		var out []string
		for _, id := range ids {
			if _, ok := slices.BinarySearch(tr.QueryIDs, id); ok {
				out = append(out, id)
			}
		}
		if len(out) > 0 {
			return out, tr
		}
	}
	return nil, Training{}
}

// Transfers reports whether the model serves indices of other embedding
// models than its own: its rule reads ranks and per-query normalised
// scores, and a router, when it has one, the features of router.Kinds,
// not the query's embedding.
func (m *FusionModel) Transfers() bool {
	return m.Router == nil || m.Router.Set() != router.EmbeddingWindows
}

// CheckFusionModel fails unless ix has every channel m fuses, with the same
// window parameters, and, unless m transfers (Transfers), is of m's model;
// and ix serves m's rule (fusion.CheckServes; its router is checked with
// the fusion that uses it).
func CheckFusionModel(ix msrag.Searcher, m *FusionModel) error {
	if have := ix.Manifest().Model; !m.Transfers() && !m.Model.SameModel(have) {
		return fmt.Errorf("tune: the fusion model was trained with model %s (sha256 %s), the index is of %s (sha256 %s): %w",
			m.Model.Name, m.Model.ModelSHA256, have.Name, have.ModelSHA256, msrag.ErrIndexMismatch)
	}
	have := ix.Layout()
	if d := have.Diff(m.Channels); !d.Covers() {
		w := d.Missing[0]
		return fmt.Errorf("tune: the fusion model fuses window %s (%d tokens), which the index does not have (it has %s): %w",
			w.Name(), w.Window.Size, have, msrag.ErrIndexMismatch)
	}
	f, err := m.Fusion(false)
	if err != nil {
		return err
	}
	if err := fusion.CheckServes(f, have, ix.Manifest().Model.Dims, ix.Dir(), nil); err != nil {
		return fmt.Errorf("tune: the fusion model: %w", err)
	}
	return nil
}

// NewFusionModel starts a fusion model for rule over the channels fused, trained
// on indices of ix's model (trs: what of which datasets).
func NewFusionModel(ix msrag.Searcher, rule fusion.Fusion, fused msrag.Layout, trs []Training) *FusionModel {
	for _, tr := range trs {
		slices.Sort(tr.QueryIDs)
	}
	static := rule
	static.Router = nil
	return &FusionModel{Format: FusionModelFormat, Model: ix.Manifest().Model, Channels: slices.Clone(fused), Rule: static.String(),
		Router: rule.Router, Training: trs, Created: time.Now().UTC().Truncate(time.Second)}
}

// ReadFusionModel reads a fusion model file.
func ReadFusionModel(path string) (*FusionModel, error) {
	data, err := safefile.ReadSmall(path, maxFusionModel)
	if err != nil {
		return nil, fmt.Errorf("tune: fusion model: %w", err)
	}
	m, err := parseFusionModel(data)
	if err != nil {
		return nil, fmt.Errorf("tune: fusion model %s: %w", path, err)
	}
	return m, nil
}

// parseFusionModel reads a fusion model file's bytes and checks them.
func parseFusionModel(data []byte) (*FusionModel, error) {
	if err := checkChannels(data); err != nil {
		return nil, err
	}
	var head struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	var m FusionModel
	switch head.Format {
	case 1:
		var v1 struct {
			FusionModel
			Training Training `json:"training"`
		}
		if err := json.Unmarshal(data, &v1); err != nil {
			return nil, err
		}
		m = v1.FusionModel
		m.Training = []Training{v1.Training}
	case FusionModelFormat:
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		if sum := m.checksum(); m.SHA256 != sum {
			return nil, fmt.Errorf("sha256 of its fields %s, it records %s: the file was changed or damaged: %w", sum, m.SHA256, ErrBadFusionModel)
		}
	default:
		return nil, fmt.Errorf("format %d, this msrag reads 1 and %d", head.Format, FusionModelFormat)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	for _, tr := range m.Training {
		if !slices.IsSorted(tr.QueryIDs) {
			slices.Sort(tr.QueryIDs)
		}
	}
	return &m, nil
}

// checksum is the sha256 of m's JSON encoding with SHA256 empty.
func (m *FusionModel) checksum() string {
	c := *m
	c.SHA256 = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// ErrBadFusionModel is wrapped by ReadFusionModel's errors for a file whose
// fields do not describe a usable fusion model.
var ErrBadFusionModel = errors.New("invalid fusion model")

// maxFusionModel bounds a fusion model file's size: a router over
// 1024-dimensional embeddings takes about 40 KB of numbers.
const maxFusionModel = 256 << 20

// maxDims bounds an embedding's dims in files msrag reads.
const maxDims = 1 << 16

// checkChannels reads the windows of a fusion model file one by one, so that
// a damaged one is named by its place (msrag.Channel checks its fields).
func checkChannels(data []byte) error {
	var raw struct {
		Windows []json.RawMessage `json:"windows"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for i, w := range raw.Windows {
		var c msrag.Channel
		if err := json.Unmarshal(w, &c); err != nil {
			return fmt.Errorf("windows[%d]: %w: %w", i, err, ErrBadFusionModel)
		}
	}
	return nil
}

// validate checks m's fields against one another: the model's dims (none
// and no router for an index without a model), the windows (each once), the rule over those windows and the router over the
// rule's windows and the model's dims. Errors name the field.
func (m *FusionModel) validate() error {
	switch {
	case m.Model.None() && (m.Model.Dims != 0 || m.Router != nil):
		// Trained on an index without a model: no vectors, no router.
		return fmt.Errorf("model.dims: %d, router: %v: a model of kind none has neither: %w", m.Model.Dims, m.Router != nil, ErrBadFusionModel)
	case !m.Model.None() && (m.Model.Dims <= 0 || m.Model.Dims > maxDims):
		return fmt.Errorf("model.dims: %d, want 1 to %d: %w", m.Model.Dims, maxDims, ErrBadFusionModel)
	}
	if len(m.Channels) == 0 {
		return fmt.Errorf("windows: none: %w", ErrBadFusionModel)
	}
	for i, c := range m.Channels {
		if m.Channels[:i].Index(c.Name()) >= 0 {
			return fmt.Errorf("windows[%d]: %s is repeated: %w", i, c.Name(), ErrBadFusionModel)
		}
	}
	f, err := m.Fusion(false)
	if err != nil {
		return fmt.Errorf("rule: %w", err)
	}
	if m.Router != nil {
		if err := m.Router.Validate(); err != nil {
			return err
		}
		if err := m.checkRouterInputs(); err != nil {
			return err
		}
		f.Router = m.Router
	}
	if w := lacking(f, m.Channels); w != "" {
		return fmt.Errorf("rule %q fuses or weighs channel %s, which the fusion model's windows (%s) do not list: %w", m.Rule, w, m.Channels, ErrBadFusionModel)
	}
	if _, err := f.Select(m.Channels); err != nil {
		return fmt.Errorf("rule %q over the fusion model's windows %s: %w", m.Rule, m.Channels, err)
	}
	return nil
}

// checkRouterInputs checks the router's input count against its feature
// set: the model's dims and 4 features per window, or 5 features per kind
// of the router's windows and one per window.
func (m *FusionModel) checkRouterInputs() error {
	r := m.Router
	if r.Set() == router.EmbeddingWindows {
		return r.CheckInputs(m.Model.Dims, fuse.NumFeatures)
	}
	kinds := map[msrag.ChannelKind]bool{}
	for _, w := range r.Channels {
		if i := m.Channels.Index(w); i >= 0 {
			kinds[m.Channels[i].Kind] = true
		}
	}
	if want := len(kinds)*fuse.NumKindFeatures + len(r.Channels); r.Inputs != want {
		return fmt.Errorf("%w: inputs: %d, want %d (%d kinds x %d kind features + %d windows)", router.ErrShape, r.Inputs, want, len(kinds), fuse.NumKindFeatures, len(r.Channels))
	}
	return nil
}

// lacking returns the first channel f names, weighs or routes that windows
// lacks, in f's order (weights by name), or "".
func lacking(f fusion.Fusion, windows msrag.Layout) string {
	names := slices.Clone(f.Channels)
	for _, m := range []map[string]float64{f.Weights, f.Score, f.Rank, f.Votes} {
		names = append(names, slices.Sorted(maps.Keys(m))...)
	}
	if f.Router != nil {
		names = append(names, f.Router.Channels...)
	}
	for _, w := range names {
		if !channel.IsGroup(w) && windows.Index(w) < 0 {
			return w
		}
	}
	return ""
}

// Write writes the model to path in the current format with its checksum:
// a file replaced atomically, a link followed, a device or FIFO written as
// it is (safefile.WriteOutput; a FIFO waits for its reader).
func (m *FusionModel) Write(path string) error {
	if _, err := safefile.WriteOutput(context.Background(), path, m.Encode); err != nil {
		return fmt.Errorf("tune: writing fusion model %s: %w", path, err)
	}
	return nil
}

// Encode writes the model as Write writes it, in the current format with
// its checksum, to w.
func (m *FusionModel) Encode(w io.Writer) error {
	m.Format = FusionModelFormat
	m.SHA256 = m.checksum()
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
