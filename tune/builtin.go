package tune

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fusion"
)

// TransferName names the built-in transferred fusion (msrag search
// --fusion transfer): a fusion model that msrag tune fitted on the training
// splits of every dataset of docs/results.md at once, for indices of their
// channels. It needs no labels from the user (docs/fusion.md).
const TransferName = "transfer"

// builtins holds the built-in fusion models, builtin/NAME-TAG.json: one
// per set of channels a model named NAME was fitted for.
//
//go:embed builtin/*.json
var builtins embed.FS

// ErrNoBuiltin is wrapped by Builtin's error for a name no built-in fusion
// model has.
var ErrNoBuiltin = errors.New("no such built-in fusion")

// IsBuiltin reports whether name names a built-in fusion model.
func IsBuiltin(name string) bool { return name == TransferName }

// ParseBuiltin reads a fusion as msrag's flags take it: whether s names a
// built-in fusion model, in any case (as fusion.Parse takes rule
// names), and the model's name. A built-in model takes no parameters (its
// rule, channels and weights are those msrag tune fitted):
// "transfer:windows=64" is an error.
func ParseBuiltin(s string) (name string, ok bool, err error) {
	text := strings.ToLower(strings.TrimSpace(s))
	base, params, hasParams := strings.Cut(text, ":")
	if !IsBuiltin(strings.TrimSpace(base)) {
		return "", false, nil
	}
	name = strings.TrimSpace(base)
	if hasParams {
		return name, true, fmt.Errorf("tune: fusion %q: the built-in fusion %s takes no parameters, given %q: its rule, channels and weights are those msrag tune fitted (docs/fusion.md)", s, name, params)
	}
	return name, true, nil
}

// Builtin returns the built-in fusion model called name that serves ix:
// the first, in file order, whose channels ix has (CheckFusionModel). A
// built-in file that is damaged or of another version is refused as a file
// is (ReadFusionModel), naming it; an index that none serves is refused,
// naming the channels each would need.
func Builtin(name string, ix msrag.Searcher) (*FusionModel, error) {
	return builtinFrom(builtins, "builtin", name, ix)
}

// BuiltinModels returns every built-in fusion model called name, in file
// order: one per set of channels it was fitted for (FusionModel.Channels),
// so that what an evaluation fuses can be checked before any index is open.
func BuiltinModels(name string) ([]*FusionModel, error) {
	return modelsFrom(builtins, "builtin", name)
}

// modelsFrom reads the built-in fusion models dir/NAME-*.json of fsys.
func modelsFrom(fsys fs.FS, dir, name string) ([]*FusionModel, error) {
	if !IsBuiltin(name) {
		return nil, fmt.Errorf("tune: %q: %w (msrag has %s)", name, ErrNoBuiltin, TransferName)
	}
	files, err := fs.Glob(fsys, path.Join(dir, name+"-*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("tune: built-in fusion %s: no model in this msrag: %w", name, ErrNoBuiltin)
	}
	slices.Sort(files)
	var out []*FusionModel
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("tune: built-in fusion %s: %w", name, err)
		}
		m, err := parseFusionModel(data)
		if err != nil {
			return nil, fmt.Errorf("tune: built-in fusion %s (%s): %w", name, path.Base(f), err)
		}
		out = append(out, m)
	}
	return out, nil
}

// builtinFrom is Builtin over the files dir/NAME-*.json of fsys.
func builtinFrom(fsys fs.FS, dir, name string, ix msrag.Searcher) (*FusionModel, error) {
	ms, err := modelsFrom(fsys, dir, name)
	if err != nil {
		return nil, err
	}
	var needs []string
	for _, m := range ms {
		if CheckFusionModel(ix, m) == nil {
			return m, nil
		}
		needs = append(needs, fmt.Sprintf("%s (fitted on indices of %s)", m.Channels, m.Model.Name))
	}
	return nil, fmt.Errorf("tune: built-in fusion %s serves indices with the channels %s; index %s has %s: %w",
		name, strings.Join(needs, ", or "), ix.Dir(), ix.Layout(), msrag.ErrIndexMismatch)
}

// Chosen returns the fusion the model's fit chose: its rule with its router
// when the router's cross-validated nDCG@10 beat the rule's alone, else the
// rule alone. Its name is "learned+router" or "learned".
func (m *FusionModel) Chosen() (fusion.Fusion, string, error) {
	var ch Choice
	if len(m.Choice) > 0 {
		if err := json.Unmarshal(m.Choice, &ch); err != nil {
			return fusion.Fusion{}, "", fmt.Errorf("tune: fusion model choice: %w", err)
		}
	}
	router := m.Router != nil && ch.Router != nil && ch.Router.BeatsNone
	f, err := m.Fusion(router)
	if router {
		return f, "learned+router", err
	}
	return f, "learned", err
}
