package onnx

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/msrag/msrag/hub"
)

// hfName is a parsed "hf:ORG/NAME[@REVISION]".
type hfName struct {
	name string // as given
	repo string // ORG/NAME
	rev  string // the revision asked for; "main" when none was
}

var hfPattern = regexp.MustCompile(`^hf:([A-Za-z0-9][A-Za-z0-9._-]*)/([A-Za-z0-9][A-Za-z0-9._-]*)(?:@([A-Za-z0-9][A-Za-z0-9._-]*))?$`)

// IsHubName reports whether name is a hub model's name, "hf:ORG/NAME" or
// "hf:ORG/NAME@REVISION".
func IsHubName(name string) bool { return strings.HasPrefix(name, "hf:") }

// parseHF parses a hub model's name.
func parseHF(name string) (hfName, error) {
	m := hfPattern.FindStringSubmatch(name)
	if m == nil || strings.Contains(name, "..") {
		return hfName{}, fmt.Errorf(`onnx: model %q: want hf:ORG/NAME or hf:ORG/NAME@REVISION (a commit, branch or tag without "/"): %w`, name, ErrInput)
	}
	h := hfName{name: name, repo: m[1] + "/" + m[2], rev: m[3]}
	if h.rev == "" {
		h.rev = "main"
	}
	return h, nil
}

// fetchHF fetches the hub model name into root/hf--ORG--NAME[@REV] under
// the entry's lock, unless (o.Force aside) it is there once the lock is
// held: the revision is resolved to its commit, the repository listed,
// the sentence-transformers files and the ONNX file (or model.safetensors,
// to export) downloaded and checked against the listing, and the model
// directory assembled (assemble) and moved into place.
func fetchHF(ctx context.Context, root, name string, o FetchOptions, firstUse bool) (string, error) {
	h, err := parseHF(name)
	if err != nil {
		return "", err
	}
	logf := logger(o)
	entry := cacheName(name)
	dir := filepath.Join(root, entry)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	unlock, err := lockEntry(ctx, root, entry, logf)
	if err != nil {
		return "", err
	}
	defer unlock()
	if !o.Force && presentModel(dir) {
		logf("model %s present in %s", name, dir)
		return dir, nil
	}
	client, err := hub.NewClient(hub.Options{Endpoint: o.Endpoint, HTTPClient: o.Client, Log: o.Log})
	if err != nil {
		return "", fmt.Errorf("onnx: fetching %s: %w: %w", name, err, ErrFetch)
	}
	if firstUse {
		logf("model %s is not in the cache: fetching it (first use) from the hub into %s", name, dir)
	}
	tmp, err := os.MkdirTemp(root, ".fetch-"+entry+".")
	if err != nil {
		return "", fmt.Errorf("onnx: %w", err)
	}
	defer os.RemoveAll(tmp)
	a, err := downloadHF(ctx, client, h, filepath.Join(tmp, "src"), o)
	a.work = tmp
	if err != nil {
		return "", fmt.Errorf("onnx: fetching %s: %w", name, err)
	}
	if err := assemble(ctx, a, o); err != nil {
		return "", fmt.Errorf("onnx: fetching %s: %w", name, err)
	}
	if err := replaceDir(a.outDir(), dir); err != nil {
		return "", err
	}
	logf("model %s fetched into %s (%s@%s)", name, dir, h.repo, a.revision)
	return dir, nil
}

// logger returns a printf to o.Log, one line a call.
func logger(o FetchOptions) func(string, ...any) {
	return func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
}

// downloadHF downloads into src what assemble reads of the repository at
// h.rev: the JSON and text files of the root and of every module of
// modules.json, and the ONNX file (with its external data) or, without
// one, model.safetensors.
func downloadHF(ctx context.Context, c *hub.Client, h hfName, src string, o FetchOptions) (assembly, error) {
	repo := hub.Repo{ID: h.repo}
	commit := h.rev
	if !hub.IsCommit(commit) {
		var err error
		if commit, err = c.Commit(ctx, repo, h.rev); err != nil {
			return assembly{}, err
		}
	}
	files, err := c.List(ctx, repo, commit)
	if err != nil {
		return assembly{}, err
	}
	listed := map[string]hub.File{}
	for _, f := range files {
		listed[f.Path] = f
	}
	get := func(p string) error {
		dst := filepath.Join(src, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		_, err := c.Download(ctx, repo, commit, listed[p], dst)
		return err
	}
	if _, ok := listed[stModulesFile]; ok {
		if err := get(stModulesFile); err != nil {
			return assembly{}, err
		}
	}
	mods, err := readModules(src)
	if err != nil {
		return assembly{}, err
	}
	for _, p := range configFiles(files, mods) {
		if err := get(p); err != nil {
			return assembly{}, err
		}
	}
	st, err := readST(src, o.ST)
	if err != nil {
		return assembly{}, err
	}
	has := func(p string) bool { _, ok := listed[p]; return ok }
	file, err := chooseONNX(o.ST, st.base, has)
	if err != nil {
		return assembly{}, err
	}
	weights := []string{file, file + onnxDataSuffix}
	if file == "" {
		weights = []string{path.Join(st.base, safetensorFile)}
	}
	for _, p := range weights {
		if has(p) {
			if err := get(p); err != nil {
				return assembly{}, err
			}
		}
	}
	return assembly{src: src, name: h.name, origin: h.repo + " on the Hugging Face hub", revision: commit, onnxFile: file, st: st}, nil
}

// configFiles lists the small files of a listing that describe the model:
// the .json and .txt files and sentencepiece models of the root and of the
// modules' directories.
func configFiles(files []hub.File, mods []stModule) []string {
	dirs := map[string]bool{"": true, ".": true}
	for _, m := range mods {
		dirs[m.Path] = true
	}
	var out []string
	for _, f := range files {
		ext := path.Ext(f.Path)
		if f.Path != stModulesFile && dirs[path.Dir(f.Path)] && (ext == ".json" || ext == ".txt" || ext == ".model") {
			out = append(out, f.Path)
		}
	}
	return out
}
