package onnx

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

const (
	modTransformer = `{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}`
	modPooling     = `{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}`
	modNormalize   = `{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}`
	bertTokenizer  = `{"normalizer": {"type": "BertNormalizer", "lowercase": true}, "model": {"type": "WordPiece"}}`
)

// stDir writes a sentence-transformers directory of the files given (path
// -> content; "" leaves a default file out) over a default one: mean
// pooling, normalised, 256 tokens, no prompts.
func stDir(t *testing.T, over map[string]string) string {
	t.Helper()
	files := map[string]string{
		"modules.json":              "[" + modTransformer + "," + modPooling + "," + modNormalize + "]",
		"1_Pooling/config.json":     `{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false}`,
		"sentence_bert_config.json": `{"max_seq_length": 256, "do_lower_case": false}`,
		"config.json":               `{"hidden_size": 384, "num_hidden_layers": 6, "max_position_embeddings": 512}`,
		"tokenizer.json":            bertTokenizer,
	}
	for k, v := range over {
		files[k] = v
	}
	dir := t.TempDir()
	for p, body := range files {
		if body != "" {
			writeFile(t, filepath.Join(dir, filepath.FromSlash(p)), []byte(body))
		}
	}
	return dir
}

// TestReadST reads sentence-transformers configurations as
// sentence-transformers 6.3 loads them, and refuses what msrag cannot run
// or what the files do not say, naming the module, the mode or the flag.
func TestReadST(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		o       STOptions
		check   func(*testing.T, *stModel)
		wantErr string
	}{
		{name: "default", check: func(t *testing.T, m *stModel) {
			if m.info.Pooling != PoolMean || !m.info.Normalize || m.info.MaxTokens != 256 || m.info.Dims != 384 || m.info.QueryPrefix != "" || m.lowercase {
				t.Errorf("%+v", m.info)
			}
			if m.sources["max_tokens"] != "sentence_bert_config.json max_seq_length" || m.sources["pooling"] != "1_Pooling/config.json mean" {
				t.Errorf("sources %v", m.sources)
			}
		}},
		{name: "no Normalize", files: map[string]string{"modules.json": "[" + modTransformer + "," + modPooling + "]"},
			check: func(t *testing.T, m *stModel) {
				if m.info.Normalize {
					t.Error("normalised without a Normalize module")
				}
			}},
		{name: "Dense refused", files: map[string]string{"modules.json": "[" + modTransformer + "," + modPooling +
			`, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]`},
			wantErr: "module 2 (sentence_transformers.models.Dense"},
		{name: "lasttoken, the newer key", files: map[string]string{"1_Pooling/config.json": `{"embedding_dimension": 384, "pooling_mode": "lasttoken"}`},
			check: func(t *testing.T, m *stModel) {
				if m.info.Pooling != PoolLastToken {
					t.Errorf("pooling %s", m.info.Pooling)
				}
			}},
		{name: "max", files: map[string]string{"1_Pooling/config.json": `{"pooling_mode_max_tokens": true}`},
			check: func(t *testing.T, m *stModel) {
				if m.info.Pooling != PoolMax {
					t.Errorf("pooling %s", m.info.Pooling)
				}
			}},
		{name: "weightedmean refused", files: map[string]string{"1_Pooling/config.json": `{"pooling_mode_weightedmean_tokens": true}`},
			wantErr: "pooling mode weightedmean is one msrag does not run"},
		{name: "two modes refused", files: map[string]string{"1_Pooling/config.json": `{"pooling_mode": ["cls", "mean"]}`},
			wantErr: "pooling modes [cls mean] together"},
		{name: "no modules.json asks for --pooling", files: map[string]string{"modules.json": ""}, wantErr: "--pooling"},
		{name: "no modules.json, --pooling cls", files: map[string]string{"modules.json": ""}, o: STOptions{Pooling: PoolCLS},
			check: func(t *testing.T, m *stModel) {
				if m.info.Pooling != PoolCLS || m.info.Normalize || !strings.HasPrefix(m.sources["pooling"], "given (--pooling)") {
					t.Errorf("%+v %v", m.info, m.sources)
				}
			}},
		{name: "max tokens from the tokenizer, capped", files: map[string]string{"sentence_bert_config.json": `{"do_lower_case": false}`,
			"tokenizer_config.json": `{"model_max_length": 1000000000000000019884624838656}`, "config.json": `{"max_position_embeddings": 514}`},
			check: func(t *testing.T, m *stModel) {
				if m.info.MaxTokens != 514 || !strings.HasPrefix(m.sources["max_tokens"], "config.json max_position_embeddings") {
					t.Errorf("max tokens %d from %q", m.info.MaxTokens, m.sources["max_tokens"])
				}
			}},
		{name: "no max tokens asks for --max-tokens", files: map[string]string{"sentence_bert_config.json": "", "config.json": `{}`},
			wantErr: "--max-tokens"},
		{name: "--max-tokens", o: STOptions{MaxTokens: 128}, check: func(t *testing.T, m *stModel) {
			if m.info.MaxTokens != 128 || m.sources["max_tokens"] != "given (--max-tokens)" {
				t.Errorf("max tokens %d from %q", m.info.MaxTokens, m.sources["max_tokens"])
			}
		}},
		{name: "query and document prompts", files: map[string]string{"config_sentence_transformers.json": `{"prompts": {"query": "query: ", "document": "passage: "}}`},
			check: func(t *testing.T, m *stModel) {
				if m.info.QueryPrefix != "query: " || m.info.PassagePrefix != "passage: " {
					t.Errorf("prefixes %q %q", m.info.QueryPrefix, m.info.PassagePrefix)
				}
			}},
		// sentence-transformers 6.3 gives every model a "document" prompt
		// (empty), which encode_document takes before "passage".
		{name: "a passage prompt is not the document's", files: map[string]string{
			"config_sentence_transformers.json": `{"prompts": {"query": "q: ", "passage": "p: "}, "default_prompt_name": "query"}`},
			check: func(t *testing.T, m *stModel) {
				if m.info.QueryPrefix != "q: " || m.info.PassagePrefix != "" || !strings.Contains(m.sources["default_prompt_name"], "not used") {
					t.Errorf("prefixes %q %q, sources %v", m.info.QueryPrefix, m.info.PassagePrefix, m.sources)
				}
			}},
		{name: "do_lower_case, tokenizer lowercases", files: map[string]string{"sentence_bert_config.json": `{"max_seq_length": 256, "do_lower_case": true}`},
			check: func(t *testing.T, m *stModel) {
				if m.lowercase {
					t.Error("lowercases twice")
				}
			}},
		{name: "do_lower_case, tokenizer does not", files: map[string]string{"sentence_bert_config.json": `{"max_seq_length": 256, "do_lower_case": true}`,
			"tokenizer.json": `{"normalizer": {"type": "NFC"}}`},
			check: func(t *testing.T, m *stModel) {
				if !m.lowercase || !strings.Contains(m.sources[TokenizerFile], "Lowercase") {
					t.Errorf("lowercase %v, source %q", m.lowercase, m.sources[TokenizerFile])
				}
			}},
		{name: "include_prompt false with prompts", files: map[string]string{
			"1_Pooling/config.json":             `{"pooling_mode": "mean", "include_prompt": false}`,
			"config_sentence_transformers.json": `{"prompts": {"query": "query: "}}`}, wantErr: "include_prompt false"},
		{name: "no tokenizer.json", files: map[string]string{"tokenizer.json": ""}, wantErr: "no tokenizer.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := readST(stDir(t, tc.files), tc.o)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrModelFiles) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want ErrModelFiles containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, m)
		})
	}
}

// TestWithLowercase checks the Lowercase normalizer is put first, before
// the tokenizer's own normalizers.
func TestWithLowercase(t *testing.T) {
	for _, in := range []string{`{"normalizer": {"type": "NFC"}, "x": 1}`, `{"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}]}, "x": 1}`} {
		out, err := withLowercase([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Normalizer struct {
				Type        string `json:"type"`
				Normalizers []struct {
					Type string `json:"type"`
				} `json:"normalizers"`
			} `json:"normalizer"`
			X int `json:"x"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		n := got.Normalizer
		if n.Type != "Sequence" || len(n.Normalizers) != 2 || n.Normalizers[0].Type != "Lowercase" || n.Normalizers[1].Type != "NFC" || got.X != 1 {
			t.Errorf("%s -> %s", in, out)
		}
		if !lowercases(json.RawMessage(mustField(t, out, "normalizer"))) {
			t.Errorf("%s does not lowercase", out)
		}
	}
}

func mustField(t *testing.T, data []byte, key string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

// TestPoolings checks each pooling on a sequence of three tokens (two
// dimensions) and one padding row, against values worked out by hand from
// sentence-transformers' Pooling module's definitions.
func TestPoolings(t *testing.T) {
	tokens := []float32{1, -2, 3, 4, -1, 6, 100, 100} // rows (1,-2) (3,4) (-1,6), then padding
	mask := []int64{1, 1, 1, 0}
	for _, tc := range []struct {
		p    Pooling
		want [2]float64
	}{
		{PoolCLS, [2]float64{1, -2}},
		{PoolMean, [2]float64{1, 8.0 / 3}},
		{PoolMax, [2]float64{3, 6}},
		{PoolMeanSqrtLen, [2]float64{3 / math.Sqrt(3), 8 / math.Sqrt(3)}},
		{PoolLastToken, [2]float64{-1, 6}},
	} {
		dst := make([]float32, 2)
		pool(dst, tokens, mask, tc.p)
		for k := range dst {
			if math.Abs(float64(dst[k])-tc.want[k]) > 1e-6 {
				t.Errorf("%s: %v, want %v", tc.p, dst, tc.want)
			}
		}
	}
}
