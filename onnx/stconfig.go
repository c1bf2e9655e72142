package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/msrag/msrag/embed"
)

// The files of a sentence-transformers model (SentenceTransformer.save, or
// a repository of the hub) that msrag reads.
const (
	stModulesFile  = "modules.json"
	stConfigFile   = "config_sentence_transformers.json"
	stBertConfig   = "sentence_bert_config.json"
	hfConfigFile   = "config.json"
	hfTokConfig    = "tokenizer_config.json"
	safetensorFile = "model.safetensors"
)

// STOptions give what a sentence-transformers model's files do not say, or
// override what they say; each value given is recorded as given in
// msrag-model.json's sources. The zero value takes everything from the
// files.
type STOptions struct {
	// ONNXFile is the path, in the model, of the ONNX file to run; empty
	// means onnx/model.onnx, else model.onnx, else an export of
	// model.safetensors.
	ONNXFile string
	// MaxTokens overrides the model's maximum sequence length.
	MaxTokens int
	// Pooling is the pooling of a model without a Pooling module.
	Pooling Pooling
	// Output is the ONNX output tensor of token vectors; empty means
	// last_hidden_state, or the model's only output of one vector per
	// token.
	Output string
}

// stModule is one entry of modules.json.
type stModule struct {
	Idx  int    `json:"idx"`
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type"`
}

// kind is the module's class name: the last dotted part of its type.
func (m stModule) kind() string { return m.Type[strings.LastIndex(m.Type, ".")+1:] }

// stModel is what msrag read of a sentence-transformers model: the
// description without the files' sums, where each value came from, and
// the paths (in the model) of its transformer's files.
type stModel struct {
	info      ModelInfo
	sources   map[string]string
	base      string // the Transformer module's path ("" for the root)
	lowercase bool   // do_lower_case, where tokenizer.json does not lowercase already
	// includePrompt is the Pooling module's include_prompt: false leaves
	// the prompt's tokens out of the pooling.
	includePrompt bool
}

// file returns the path, in the model, of a file of the transformer.
func (m *stModel) file(name string) string { return path.Join(m.base, name) }

// readST reads the configuration of the sentence-transformers model in
// dir as sentence-transformers 6 loads it, with o over it. Where a value
// can be neither read nor derived, the error names the flag that gives it.
func readST(dir string, o STOptions) (*stModel, error) {
	m := &stModel{sources: map[string]string{}, info: ModelInfo{Output: o.Output}}
	modules, err := readModules(dir)
	if err != nil {
		return nil, err
	}
	if err := m.readModules(dir, modules, o); err != nil {
		return nil, err
	}
	if err := m.readTransformer(dir, o); err != nil {
		return nil, err
	}
	if err := m.readPrompts(dir); err != nil {
		return nil, err
	}
	if !m.includePrompt && (m.info.QueryPrefix != "" || m.info.PassagePrefix != "") {
		return nil, fmt.Errorf("onnx: the Pooling module leaves the prompt's tokens out of the pooling (include_prompt false) and the model has prompts (%q, %q): msrag pools every token: %w",
			m.info.QueryPrefix, m.info.PassagePrefix, ErrModelFiles)
	}
	return m, nil
}

// readJSON reads dir/name into v; absent reports a missing file, which is
// not an error.
func readJSON(dir, name string, v any) (absent bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("onnx: %w: %w", err, ErrModelFiles)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("onnx: %s: %v: %w", name, err, ErrModelFiles)
	}
	return false, nil
}

// readModules reads modules.json, sorted by idx; nil when there is none.
func readModules(dir string) ([]stModule, error) {
	var mods []stModule
	absent, err := readJSON(dir, stModulesFile, &mods)
	if err != nil || absent {
		return nil, err
	}
	sort.SliceStable(mods, func(i, j int) bool { return mods[i].Idx < mods[j].Idx })
	return mods, nil
}

// readModules checks that the model is a Transformer, a Pooling and
// optionally a Normalize module, the modules msrag runs, and reads the
// pooling. Without modules.json it takes o.Pooling, or asks for it.
func (m *stModel) readModules(dir string, mods []stModule, o STOptions) error {
	if mods == nil {
		if o.Pooling == "" {
			return fmt.Errorf("onnx: no %s, so the model's pooling is not known (sentence-transformers would assume mean pooling, a guess): give it with --pooling (one of %v): %w",
				stModulesFile, embed.Poolings, ErrModelFiles)
		}
		m.info.Pooling, m.sources["pooling"] = o.Pooling, "given (--pooling): no "+stModulesFile
		m.sources["normalize"] = "no " + stModulesFile + ": no Normalize module"
		return nil
	}
	want := []string{"Transformer", "Pooling", "Normalize"}
	for i, mod := range mods {
		if !strings.HasPrefix(mod.Type, "sentence_transformers.") || i >= len(want) || mod.kind() != want[i] {
			return fmt.Errorf("onnx: %s: module %s (%s, path %q) is one msrag cannot run: it runs a Transformer, then a Pooling and optionally a Normalize module: %w",
				stModulesFile, mod.Name, mod.Type, mod.Path, ErrModelFiles)
		}
	}
	if len(mods) < 2 {
		return fmt.Errorf("onnx: %s lists no Pooling module after the Transformer: %w", stModulesFile, ErrModelFiles)
	}
	m.base = mods[0].Path
	m.info.Normalize = len(mods) == 3
	m.sources["normalize"] = stModulesFile + ": no Normalize module"
	if m.info.Normalize {
		m.sources["normalize"] = fmt.Sprintf("%s: module %s (%s)", stModulesFile, mods[2].Name, mods[2].Type)
	}
	return m.readPooling(dir, mods[1], o)
}

// poolingKeys are the boolean keys of the Pooling module's older
// config.json, by the mode each turns on.
var poolingKeys = map[string]string{
	"pooling_mode_cls_token": "cls", "pooling_mode_max_tokens": "max", "pooling_mode_mean_tokens": "mean",
	"pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens": "weightedmean",
	"pooling_mode_lasttoken": "lasttoken",
}

// stPoolingConfig is a Pooling module's config.json, in both of its forms.
type stPoolingConfig struct {
	Mode          json.RawMessage `json:"pooling_mode"`
	Dim           int             `json:"embedding_dimension"`
	WordDim       int             `json:"word_embedding_dimension"`
	IncludePrompt *bool           `json:"include_prompt"`
}

// readPooling reads the Pooling module's mode and dimension.
func (m *stModel) readPooling(dir string, mod stModule, o STOptions) error {
	name := path.Join(mod.Path, "config.json")
	var raw map[string]json.RawMessage
	var cfg stPoolingConfig
	absent, err := readJSON(dir, name, &raw)
	if err == nil && !absent {
		_, err = readJSON(dir, name, &cfg)
	}
	if err != nil {
		return err
	}
	if absent {
		return fmt.Errorf("onnx: the Pooling module's %s is missing: %w", name, ErrModelFiles)
	}
	modes, err := poolingModes(raw, cfg)
	if err != nil {
		return fmt.Errorf("onnx: %s: %w", name, err)
	}
	switch {
	case o.Pooling != "":
		m.info.Pooling, m.sources["pooling"] = o.Pooling, fmt.Sprintf("given (--pooling), over %s's %v", name, modes)
	case len(modes) != 1:
		return fmt.Errorf("onnx: %s: pooling modes %v together (one vector of each, concatenated): msrag pools one way (%v): %w",
			name, modes, embed.Poolings, ErrModelFiles)
	case !Pooling(modes[0]).Valid() || modes[0] == string(PoolNone):
		return fmt.Errorf("onnx: %s: pooling mode %s is one msrag does not run (it runs %v): %w", name, modes[0], embed.Poolings, ErrModelFiles)
	default:
		m.info.Pooling, m.sources["pooling"] = Pooling(modes[0]), name+" "+modes[0]
	}
	if d := max(cfg.Dim, cfg.WordDim); d > 0 {
		m.info.Dims, m.sources["dims"] = d, name+" embedding dimension"
	}
	m.includePrompt = cfg.IncludePrompt == nil || *cfg.IncludePrompt
	return nil
}

// poolingModes returns the modes a Pooling config turns on: pooling_mode
// (a name or a list), else the older boolean keys.
func poolingModes(raw map[string]json.RawMessage, cfg stPoolingConfig) ([]string, error) {
	if len(cfg.Mode) > 0 {
		var one string
		if json.Unmarshal(cfg.Mode, &one) == nil {
			return []string{one}, nil
		}
		var many []string
		if err := json.Unmarshal(cfg.Mode, &many); err != nil {
			return nil, fmt.Errorf("pooling_mode %s: want a name or a list of names: %w", cfg.Mode, ErrModelFiles)
		}
		return many, nil
	}
	var modes []string
	for key, mode := range poolingKeys {
		var on bool
		if v, ok := raw[key]; ok && json.Unmarshal(v, &on) == nil && on {
			modes = append(modes, mode)
		}
	}
	slices.Sort(modes)
	if len(modes) == 0 {
		return nil, fmt.Errorf("no pooling mode is on: %w", ErrModelFiles)
	}
	return modes, nil
}

// stBertConfig is the Transformer module's sentence_bert_config.json.
type stBertConfigFile struct {
	MaxSeqLength *int `json:"max_seq_length"`
	DoLowerCase  bool `json:"do_lower_case"`
}

// hfConfig is what msrag reads of the transformer's config.json and
// tokenizer_config.json.
type hfConfig struct {
	Hidden       int             `json:"hidden_size"`
	Layers       int             `json:"num_hidden_layers"`
	Intermediate int             `json:"intermediate_size"`
	MaxPos       *int            `json:"max_position_embeddings"`
	AutoMap      json.RawMessage `json:"auto_map"`
}

// readTransformer reads the transformer's sentence_bert_config.json,
// config.json and tokenizer_config.json: the maximum sequence length as
// sentence-transformers sets it (max_seq_length; else the tokenizer's
// model_max_length capped by max_position_embeddings), lowercasing, and
// the encoder's sizes.
func (m *stModel) readTransformer(dir string, o STOptions) error {
	var sb stBertConfigFile
	sbAbsent, err := readJSON(dir, m.file(stBertConfig), &sb)
	if err != nil {
		return err
	}
	var cfg hfConfig
	cfgAbsent, err := readJSON(dir, m.file(hfConfigFile), &cfg)
	if err != nil {
		return err
	}
	if !cfgAbsent {
		m.info.Hidden, m.info.Layers, m.info.Intermediate = cfg.Hidden, cfg.Layers, cfg.Intermediate
		if m.info.Dims == 0 && cfg.Hidden > 0 {
			m.info.Dims, m.sources["dims"] = cfg.Hidden, m.file(hfConfigFile)+" hidden_size"
		}
	}
	if err := m.maxTokens(dir, sb, sbAbsent, cfg, o); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m.file(TokenizerFile)))); err != nil {
		return fmt.Errorf("onnx: no %s (msrag reads the tokenizer in the Hugging Face tokenizers format only): %w", m.file(TokenizerFile), ErrModelFiles)
	}
	if !sb.DoLowerCase {
		return nil
	}
	lower, err := tokenizerLowercases(filepath.Join(dir, filepath.FromSlash(m.file(TokenizerFile))))
	if err != nil {
		return err
	}
	m.lowercase = !lower
	m.sources[TokenizerFile] = m.file(TokenizerFile) + ", which lowercases already (" + stBertConfig + " do_lower_case)"
	if m.lowercase {
		m.sources[TokenizerFile] = m.file(TokenizerFile) + " with a Lowercase normalizer put first, as sentence-transformers does for " + stBertConfig + " do_lower_case"
	}
	return nil
}

// maxTokens sets the maximum sequence length as sentence-transformers
// does, or o's.
func (m *stModel) maxTokens(dir string, sb stBertConfigFile, sbAbsent bool, cfg hfConfig, o STOptions) error {
	switch {
	case o.MaxTokens > 0:
		m.info.MaxTokens, m.sources["max_tokens"] = o.MaxTokens, "given (--max-tokens)"
		return nil
	case !sbAbsent && sb.MaxSeqLength != nil && *sb.MaxSeqLength > 0:
		m.info.MaxTokens, m.sources["max_tokens"] = *sb.MaxSeqLength, m.file(stBertConfig)+" max_seq_length"
		return nil
	}
	var tc struct {
		MaxLen *float64 `json:"model_max_length"`
	}
	if _, err := readJSON(dir, m.file(hfTokConfig), &tc); err != nil {
		return err
	}
	n, src := 0, ""
	if tc.MaxLen != nil && *tc.MaxLen > 0 && *tc.MaxLen < 1e9 {
		n, src = int(*tc.MaxLen), m.file(hfTokConfig)+" model_max_length"
	}
	if cfg.MaxPos != nil && *cfg.MaxPos > 0 && (n == 0 || *cfg.MaxPos < n) {
		n, src = *cfg.MaxPos, m.file(hfConfigFile)+" max_position_embeddings"
	}
	if n == 0 {
		return fmt.Errorf("onnx: the model's maximum sequence length is in none of %s (max_seq_length), %s (model_max_length) and %s (max_position_embeddings): give it with --max-tokens: %w",
			m.file(stBertConfig), m.file(hfTokConfig), m.file(hfConfigFile), ErrModelFiles)
	}
	m.info.MaxTokens, m.sources["max_tokens"] = n, src+", as sentence-transformers takes it without max_seq_length"
	return nil
}

// stPrompts is config_sentence_transformers.json.
type stPrompts struct {
	Prompts           map[string]string `json:"prompts"`
	DefaultPromptName *string           `json:"default_prompt_name"`
}

// readPrompts sets the prefixes as sentence-transformers 6's encode_query
// and encode_document choose them (what MTEB calls): the prompts named
// "query" and "document", none where a name is absent (its default, which
// also keeps default_prompt_name from applying).
func (m *stModel) readPrompts(dir string) error {
	var p stPrompts
	absent, err := readJSON(dir, stConfigFile, &p)
	if err != nil {
		return err
	}
	for _, r := range []struct {
		key    string
		field  string
		target *string
	}{{"query", "query_prefix", &m.info.QueryPrefix}, {"document", "passage_prefix", &m.info.PassagePrefix}} {
		v, ok := p.Prompts[r.key]
		switch {
		case absent:
			m.sources[r.field] = "none: no " + stConfigFile
		case ok:
			*r.target, m.sources[r.field] = v, fmt.Sprintf("%s prompts.%s", stConfigFile, r.key)
		default:
			m.sources[r.field] = fmt.Sprintf("none: %s has no prompts.%s (sentence-transformers' default)", stConfigFile, r.key)
		}
	}
	if p.DefaultPromptName != nil && *p.DefaultPromptName != "" {
		m.sources["default_prompt_name"] = fmt.Sprintf("%s default_prompt_name %q: not used, as by encode_query and encode_document", stConfigFile, *p.DefaultPromptName)
	}
	return nil
}

// tokenizerLowercases reports whether the tokenizer.json at path lowercases
// its input: a Lowercase normalizer, or BertNormalizer's lowercase, alone
// or in a Sequence.
func tokenizerLowercases(path string) (bool, error) {
	var t struct {
		Normalizer json.RawMessage `json:"normalizer"`
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &t)
	}
	if err != nil {
		return false, fmt.Errorf("onnx: %s: %v: %w", path, err, ErrModelFiles)
	}
	return lowercases(t.Normalizer), nil
}

// lowercases reports whether a normalizer's JSON lowercases.
func lowercases(raw json.RawMessage) bool {
	var n struct {
		Type        string            `json:"type"`
		Lowercase   bool              `json:"lowercase"`
		Normalizers []json.RawMessage `json:"normalizers"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return false
	}
	switch n.Type {
	case "Lowercase":
		return true
	case "BertNormalizer":
		return n.Lowercase
	case "Sequence":
		return slices.ContainsFunc(n.Normalizers, lowercases)
	}
	return false
}

// withLowercase returns tokenizer.json's content with a Lowercase
// normalizer put before its own, as sentence-transformers' Transformer
// module does for do_lower_case.
func withLowercase(data []byte) ([]byte, error) {
	var t map[string]json.RawMessage
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	list := []json.RawMessage{json.RawMessage(`{"type":"Lowercase"}`)}
	if old := t["normalizer"]; len(old) > 0 && string(old) != "null" {
		var n struct {
			Type        string            `json:"type"`
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(old, &n); err != nil {
			return nil, err
		}
		if n.Type == "Sequence" {
			list = append(list, n.Normalizers...)
		} else {
			list = append(list, old)
		}
	}
	seq, err := json.Marshal(map[string]any{"type": "Sequence", "normalizers": list})
	if err != nil {
		return nil, err
	}
	t["normalizer"] = seq
	return json.Marshal(t)
}
