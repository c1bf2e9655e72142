package onnx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/msrag/msrag/internal/safefile"
)

// onnxCandidates are the ONNX files looked for, in order, when none is
// named: the hub's usual place for an export, then the root.
var onnxCandidates = []string{"onnx/model.onnx", ModelFile}

// external data of an ONNX file, kept beside it under the name it has.
const onnxDataSuffix = "_data"

// assembly says what a model directory is made from: the
// sentence-transformers files in src, and the names recorded for them.
type assembly struct {
	src      string // a directory of the model's files, in the model's layout
	work     string // a temporary directory: the model is made in work/model
	name     string // the model's name in msrag
	origin   string // where the files came from, for msrag-model.json
	revision string // the hub commit, if any
	onnxFile string // the ONNX file in src, "" for an export of model.safetensors
	st       *stModel
}

// chooseONNX returns the ONNX file of the model among the paths it has
// (has reports one): o's, else the first of onnxCandidates, else "" when
// the model has model.safetensors to export.
func chooseONNX(o STOptions, base string, has func(string) bool) (string, error) {
	if o.ONNXFile != "" {
		if !has(o.ONNXFile) {
			return "", fmt.Errorf("onnx: the model has no %s (--onnx-file): %w", o.ONNXFile, ErrModelFiles)
		}
		return o.ONNXFile, nil
	}
	for _, c := range onnxCandidates {
		if has(c) {
			return c, nil
		}
	}
	if has(path.Join(base, safetensorFile)) {
		return "", nil
	}
	return "", fmt.Errorf("onnx: the model has neither an ONNX file (%v; another one: --onnx-file) nor %s to export one from: %w",
		onnxCandidates, path.Join(base, safetensorFile), ErrModelFiles)
}

// assemble makes the model directory out from a: tokenizer.json (with a
// Lowercase normalizer first where do_lower_case asks for one), model.onnx
// (the ONNX file, or an export of model.safetensors checked against
// sentence-transformers), msrag-model.json with the source of every value,
// and the stamp. out must not exist; on failure the caller removes it.
func assemble(ctx context.Context, a assembly, o FetchOptions) error {
	out := a.outDir()
	if err := os.Mkdir(out, 0o755); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	info, st := a.st.info, a.st
	info.Name, info.Origin, info.Revision = a.name, a.origin, a.revision
	info.Description = a.origin
	info.Sources = st.sources
	if err := a.writeTokenizer(out); err != nil {
		return err
	}
	if a.onnxFile == "" {
		exp, err := exportST(ctx, a, out, o)
		if err != nil {
			return err
		}
		info.Export = exp
		info.Sources[ModelFile] = fmt.Sprintf("exported from %s by %s", path.Join(st.base, safetensorFile), exp.Exporter)
	} else {
		if err := a.copyONNX(out); err != nil {
			return err
		}
		info.Sources[ModelFile] = a.onnxFile
	}
	if err := chooseOutput(&info, filepath.Join(out, ModelFile), o.ST.Output); err != nil {
		return err
	}
	sums, err := sumFiles(out)
	if err != nil {
		return err
	}
	info.SHA256 = sums
	if err := info.validate(InfoFile + " of " + a.name); err != nil {
		return err
	}
	if err := WriteModelInfo(out, info); err != nil {
		return err
	}
	if info.Export != nil {
		if err := checkExport(ctx, out, &info, a); err != nil {
			return err
		}
		if err := WriteModelInfo(out, info); err != nil {
			return err
		}
	}
	return writeStamp(out, info)
}

// outDir is where assemble makes the model.
func (a assembly) outDir() string { return filepath.Join(a.work, "model") }

// writeTokenizer writes out/tokenizer.json from the transformer's.
func (a assembly) writeTokenizer(out string) error {
	src := filepath.Join(a.src, filepath.FromSlash(a.st.file(TokenizerFile)))
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("onnx: %w: %w", err, ErrModelFiles)
	}
	if a.st.lowercase {
		if data, err = withLowercase(data); err != nil {
			return fmt.Errorf("onnx: %s: %v: %w", src, err, ErrModelFiles)
		}
	}
	if err := safefile.WriteFile(filepath.Join(out, TokenizerFile), data); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// copyONNX copies the ONNX file, and its external data if it has any, to
// out/model.onnx (the data keeps its name, which the ONNX file records).
func (a assembly) copyONNX(out string) error {
	src := filepath.Join(a.src, filepath.FromSlash(a.onnxFile))
	if err := copyFile(src, filepath.Join(out, ModelFile)); err != nil {
		return err
	}
	data := src + onnxDataSuffix
	if _, err := os.Stat(data); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return copyFile(data, filepath.Join(out, filepath.Base(data)))
}

// copyFile copies src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("onnx: %w: %w", err, ErrModelFiles)
	}
	defer in.Close()
	w, err := safefile.Create(dst)
	if err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	defer w.Abort()
	if _, err := io.Copy(w, in); err != nil {
		return fmt.Errorf("onnx: copying %s: %w", src, err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// sumFiles returns the sha256 of every file of the model directory dir but
// msrag-model.json and the stamp.
func sumFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	sums := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == InfoFile || e.Name() == stampFile {
			continue
		}
		if sums[e.Name()], err = safefile.SHA256(filepath.Join(dir, e.Name())); err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
	}
	return sums, nil
}

// chooseOutput sets info.Output to the ONNX output of token vectors: the
// one given, else last_hidden_state, else the only output of rank 3;
// otherwise the error lists the outputs and names the flag.
func chooseOutput(info *ModelInfo, modelPath, given string) error {
	if err := initRuntime(); err != nil {
		return err
	}
	_, outs, err := ort.GetInputOutputInfo(modelPath)
	if err != nil {
		return fmt.Errorf("onnx: reading %s: %v: %w", modelPath, err, ErrModelFiles)
	}
	var names, perToken []string
	for _, o := range outs {
		names = append(names, o.Name)
		if len(o.Dimensions) == 3 {
			perToken = append(perToken, o.Name)
		}
	}
	switch {
	case given != "":
		if !slices.Contains(names, given) {
			return fmt.Errorf("onnx: %s has no output %q (--onnx-output; outputs: %v): %w", modelPath, given, names, ErrModelFiles)
		}
		info.Output, info.Sources["output"] = given, "given (--onnx-output)"
	case slices.Contains(perToken, "last_hidden_state"):
		info.Output, info.Sources["output"] = "last_hidden_state", "the ONNX file's output last_hidden_state"
	case len(perToken) == 1:
		info.Output, info.Sources["output"] = perToken[0], "the ONNX file's only output of one vector per token"
	default:
		sort.Strings(names)
		return fmt.Errorf("onnx: %s: which output holds the token vectors is not clear (outputs: %v): name it with --onnx-output: %w",
			modelPath, names, ErrModelFiles)
	}
	return nil
}
