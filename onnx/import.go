package onnx

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// ImportOptions configure Import. The zero value imports into ModelsDir()
// under the directory's base name, and refuses to replace a model.
type ImportOptions struct {
	// Name is the model's name in msrag; empty means the base name of the
	// directory imported.
	Name string
	// Dir is the directory that holds the models; empty means ModelsDir().
	Dir string
	// Force replaces a model of that name imported before.
	Force bool
	// ST gives what the model's files do not say, or what to take instead.
	ST STOptions
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

var importName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+=,-]*$`)

// Import makes a model of msrag of the sentence-transformers directory dir
// (what SentenceTransformer.save writes), read as sentence-transformers
// reads it (see readST), in o.Dir/NAME, and returns that directory: its
// tokenizer.json, its ONNX file (onnx/model.onnx, else model.onnx, else
// o.ST.ONNXFile) or, for a directory with model.safetensors alone, an
// export of it that is checked against sentence-transformers' own vectors
// (CheckMinCosine), and a msrag-model.json that says where every value came
// from. The model is made in a temporary directory beside the target and
// moved into place only when whole. dir is left as it is.
func Import(ctx context.Context, dir string, o ImportOptions) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	name := o.Name
	if name == "" {
		name = filepath.Base(abs)
	}
	if _, builtin := Builtin(name); builtin || !importName.MatchString(name) {
		return "", fmt.Errorf("onnx: import name %q: want letters, digits and ._+=,- that are not a built-in model's name: %w", name, ErrInput)
	}
	st, err := readST(abs, o.ST)
	if err != nil {
		return "", fmt.Errorf("onnx: importing %s: %w", dir, err)
	}
	has := func(p string) bool { _, err := os.Stat(filepath.Join(abs, filepath.FromSlash(p))); return err == nil }
	file, err := chooseONNX(o.ST, st.base, has)
	if err != nil {
		return "", fmt.Errorf("onnx: importing %s: %w", dir, err)
	}
	root := o.Dir
	if root == "" {
		root = ModelsDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	fo := FetchOptions{Log: o.Log, ST: o.ST}
	unlock, err := lockEntry(ctx, root, name, logger(fo))
	if err != nil {
		return "", err
	}
	defer unlock()
	target := filepath.Join(root, name)
	if _, err := os.Stat(target); err == nil && !o.Force {
		return "", fmt.Errorf("onnx: model %s is in the cache already (%s): give another name, or replace it with --force: %w", name, target, ErrInput)
	}
	tmp, err := os.MkdirTemp(root, ".import-"+name+".")
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	defer os.RemoveAll(tmp)
	a := assembly{src: abs, work: tmp, name: name, origin: "sentence-transformers directory " + abs + " (msrag model import)", onnxFile: file, st: st}
	if err := assemble(ctx, a, fo); err != nil {
		return "", fmt.Errorf("onnx: importing %s: %w", dir, err)
	}
	if err := replaceDir(a.outDir(), target); err != nil {
		return "", err
	}
	logger(fo)("model %s imported from %s into %s", name, dir, target)
	return target, nil
}
