package onnx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/tokenizer"
)

// CheckMinCosine is the lowest cosine an exported model's vector of a
// check text may have with sentence-transformers' own vector of it.
const CheckMinCosine = 0.9999

// checkCount is the number of texts an export is checked with, and
// checkLong how many of them are longer than the model's maximum sequence
// length.
const (
	checkCount = 200
	checkLong  = 24
)

// ErrNoExporter: a model must be exported to ONNX and the exporter
// (scripts/setup-export.sh's venv in the cache) is not installed.
var ErrNoExporter = errors.New("onnx exporter not installed")

// ExporterDir returns the venv of the ONNX exporter that
// scripts/setup-export.sh makes: CacheDir()/venv/export.
func ExporterDir() string { return filepath.Join(CacheDir(), "venv", "export") }

// exporter returns the exporter's Python and script, or an error wrapping
// ErrNoExporter that names the script that installs them.
func exporter() (python, script string, err error) { return exporterOf(ExporterDir()) }

// exporterOf returns the exporter's Python and script in the venv dir.
func exporterOf(dir string) (python, script string, err error) {
	python, script = filepath.Join(dir, "bin", "python"), filepath.Join(dir, "st_export.py")
	for _, p := range []string{python, script} {
		if _, err := os.Stat(p); err != nil {
			return "", "", fmt.Errorf("onnx: the model has no ONNX file, and the exporter that makes one of model.safetensors is not installed (no %s): run scripts/setup-export.sh from msrag's source tree (it makes the venv %s): %w",
				p, dir, ErrNoExporter)
		}
	}
	return python, script, nil
}

// checkFiles are the check's texts and sentence-transformers' vectors of
// them, beside a's source directory.
func (a assembly) checkFiles() (texts, vectors string) {
	return filepath.Join(a.work, "check-texts.jsonl"), filepath.Join(a.work, "check-vectors.json")
}

// checkText is one text of an export's check.
type checkText struct {
	Text string `json:"text"`
	Role string `json:"role"`
}

// exportST exports a's model.safetensors to out/model.onnx with the
// exporter, which also writes sentence-transformers' vectors of the check
// texts (checkExport compares them with msrag's). A model that needs its
// repository's own Python code is refused: msrag does not run it.
func exportST(ctx context.Context, a assembly, out string, o FetchOptions) (*ExportInfo, error) {
	var cfg hfConfig
	if _, err := readJSON(a.src, a.st.file(hfConfigFile), &cfg); err != nil {
		return nil, err
	}
	if len(cfg.AutoMap) > 0 {
		return nil, fmt.Errorf("onnx: the model has no ONNX file, and exporting it would run the repository's own Python code (%s has auto_map), which msrag does not do: use a model with an ONNX file, or name one with --onnx-file: %w",
			a.st.file(hfConfigFile), ErrModelFiles)
	}
	python, script, err := exporter()
	if err != nil {
		return nil, err
	}
	textsPath, vecPath := a.checkFiles()
	if err := writeCheckTexts(textsPath, checkTexts(a.st.info.MaxTokens)); err != nil {
		return nil, err
	}
	logger(o)("model %s: exporting %s to ONNX (%s) and embedding %d texts with sentence-transformers", a.name,
		filepath.Join(a.st.base, safetensorFile), ExporterDir(), checkCount)
	cmd := exec.CommandContext(ctx, python, script, "--model", a.src, "--base", a.st.base,
		"--out", filepath.Join(out, ModelFile), "--texts", textsPath, "--vectors", vecPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("onnx: exporting model %s: %s %s failed (%v): %s: %w", a.name, python, script, err, lastLines(stderr.String(), 5), ErrFetch)
	}
	var exp ExportInfo
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &exp); err != nil || exp.Exporter == "" {
		return nil, fmt.Errorf("onnx: exporting model %s: the exporter's report %q does not read: %w", a.name, stdout.String(), ErrFetch)
	}
	return &exp, nil
}

// writeCheckTexts writes the texts as JSON lines.
func writeCheckTexts(path string, texts []checkText) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, t := range texts {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// checkWords are the words the check texts are made of.
var checkWords = strings.Fields(`The evaluation of a retrieval system asks which documents a reader would
want for a question, and whether the system ranks them first. Long reports, short notes, tables of
numbers such as 3.14, 2,718 or 1,000,000, names like Zürich, São Paulo and Kraków, and words in
other scripts (東京, Москва, Αθήνα) all reach the same index. A passage about proteins binding to
receptors; another about the treaty signed in 1648; a third about rainfall over the Sahel between
1970 and 1990. Questions are short: what causes it? who signed? how much rain fell? Answers are
longer, with clauses, parentheses (like these), hyphenated compound-words, e-mail addresses such as
someone@example.org and code like x = f(y) + 2.`)

// checkTexts returns checkCount texts of the check words, alternately
// passages and queries, of lengths spread from a few words to more than
// the model's maximum sequence length (the last checkLong: about 1.5
// times maxTokens words, more tokens than the model takes).
func checkTexts(maxTokens int) []checkText {
	out := make([]checkText, checkCount)
	state := uint32(2463534242)
	next := func() int { // xorshift32: the same texts on every run
		state ^= state << 13
		state ^= state >> 17
		state ^= state << 5
		return int(state)
	}
	for i := range out {
		n := 3 + next()%max(maxTokens/2, 8)
		if i >= checkCount-checkLong {
			n = maxTokens + maxTokens/2 + next()%16
		}
		start := next() % len(checkWords)
		words := make([]string, n)
		for j := range words {
			words[j] = checkWords[(start+j)%len(checkWords)]
		}
		out[i] = checkText{Text: strings.Join(words, " "), Role: []string{"passage", "query"}[i%2]}
	}
	return out
}

// checkExport embeds the check texts with the assembled model in out and
// compares every vector with sentence-transformers' (cosine), recording
// the lowest in info.Export; below CheckMinCosine the export is refused.
func checkExport(ctx context.Context, out string, info *ModelInfo, a assembly) error {
	textsPath, vecPath := a.checkFiles()
	var ref [][]float64
	data, err := os.ReadFile(vecPath)
	if err == nil {
		err = json.Unmarshal(data, &ref)
	}
	if err != nil {
		return fmt.Errorf("onnx: the exporter's vectors %s: %w", vecPath, err)
	}
	texts := checkTexts(info.MaxTokens)
	if len(ref) != len(texts) {
		return fmt.Errorf("onnx: the exporter wrote %d vectors for %d texts (%s)", len(ref), len(texts), textsPath)
	}
	e, err := Open(out, Options{})
	if err != nil {
		return err
	}
	defer e.Close()
	minCos, longer := 1.0, 0
	for i, t := range texts {
		role := Passage
		if t.Role == "query" {
			role = Query
		}
		v, err := e.Embed(ctx, []string{t.Text}, role)
		if err != nil {
			return err
		}
		if n := len(e.tok.EncodeWith(t.Text, tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs) + e.tok.NumSpecialTokens() + e.PrefixTokens(role); n > info.MaxTokens {
			longer++
		}
		minCos = math.Min(minCos, cosineRef(v, ref[i]))
	}
	info.Export.Texts, info.Export.Longer, info.Export.MinCosine = len(texts), longer, minCos
	if minCos < CheckMinCosine {
		return fmt.Errorf("onnx: model %s: the export's vectors differ from sentence-transformers': lowest cosine %.6f over %d texts, want >= %g: %w",
			a.name, minCos, len(texts), CheckMinCosine, ErrModelFiles)
	}
	return nil
}

// cosineRef is the cosine of a (float32) and b.
func cosineRef(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i, x := range a {
		dot += float64(x) * b[i]
		na += float64(x) * float64(x)
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}
