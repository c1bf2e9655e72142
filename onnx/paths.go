package onnx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/msrag/msrag/internal/cache"
)

// Environment variables that place the files this package needs.
const (
	// EnvCache names the cache directory (see CacheDir).
	EnvCache = cache.Env
	// EnvORTLib names the ONNX Runtime shared library, overriding the default
	// (see LibraryPath).
	EnvORTLib = "MSRAG_ORT_LIB"
	// EnvHFEndpoint is msrag's own base URL of a Hugging Face hub, for "hf:"
	// models; it wins over $HF_ENDPOINT, and without either the hub is
	// https://huggingface.co (package hub).
	EnvHFEndpoint = "MSRAG_HF_ENDPOINT"
	// EnvOffline, set to 1, keeps built-in models from being fetched on
	// first use (see EnsureModel).
	EnvOffline = "MSRAG_OFFLINE"
)

// CacheDir returns the directory that holds fetched files: $MSRAG_CACHE if
// set, else msrag in the user's cache directory (~/.cache/msrag on Linux).
func CacheDir() string { return cache.Dir() }

// LibraryPath returns the ONNX Runtime shared library to load:
// $MSRAG_ORT_LIB if set; else the first present of LibraryCandidates (beside
// the running program, in the cache, where make install puts it); else the
// cache's path, which then names what is missing.
func LibraryPath() string {
	if p := os.Getenv(EnvORTLib); p != "" {
		return p
	}
	places := LibraryCandidates()
	for _, p := range places {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return places[1]
}

// LibraryCandidates lists where LibraryPath looks for the ONNX Runtime
// library, in order: beside the running program (make build copies it next
// to bin/msrag), CacheDir()/onnxruntime (make setup puts it there), and
// lib/msrag beside the program's directory (make install: PREFIX/bin/msrag
// and PREFIX/lib/msrag).
func LibraryCandidates() []string {
	beside, installed := ortLibName, ortLibName
	if exe, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(exe), ortLibName)
		installed = filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "msrag", ortLibName)
	}
	return []string{beside, filepath.Join(CacheDir(), "onnxruntime", ortLibName), installed}
}

// ortLibName is the file name of the ONNX Runtime library.
const ortLibName = "libonnxruntime.so.1"

// ModelsDir returns the directory holding fetched models, CacheDir()/models.
func ModelsDir() string { return filepath.Join(CacheDir(), "models") }

// ResolveModel turns a model name into its directory: nameOrDir itself when it is a
// directory holding msrag-model.json, else ModelsDir()/nameOrDir (a built-in or
// fetched model; "hf:ORG/NAME" maps to hf--ORG--NAME). The empty name means
// DefaultModel. A model that has not been fetched yet gives an error wrapping
// ErrNotFetched that says how to fetch it; EnsureModel fetches a built-in one
// instead.
func ResolveModel(nameOrDir string) (string, error) {
	if nameOrDir == "" {
		nameOrDir = DefaultModel
	}
	if st, err := os.Stat(nameOrDir); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(nameOrDir, InfoFile)); err != nil {
			return "", fmt.Errorf("onnx: model directory %s has no %s: %w", nameOrDir, InfoFile, ErrModelFiles)
		}
		return nameOrDir, nil
	}
	dir := filepath.Join(ModelsDir(), cacheName(nameOrDir))
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); err == nil {
		return dir, nil
	}
	if _, ok := Builtin(nameOrDir); ok || strings.HasPrefix(nameOrDir, "hf:") {
		if err := CheckReadable(dir); err != nil {
			return "", fmt.Errorf("onnx: model %s: %w", nameOrDir, err)
		}
		return "", fmt.Errorf("onnx: model %s: %w (no %s); fetch it with: msrag model fetch %s",
			nameOrDir, ErrNotFetched, dir, nameOrDir)
	}
	return "", fmt.Errorf("onnx: model %q is neither a directory nor a built-in model (built in: %s; msrag model list): %w",
		nameOrDir, strings.Join(builtinNames(), ", "), ErrUnknownModel)
}

// cacheName maps a model name to its directory name under ModelsDir.
func cacheName(name string) string {
	if rest, ok := strings.CutPrefix(name, "hf:"); ok {
		return "hf--" + strings.ReplaceAll(rest, "/", "--")
	}
	return name
}

// CheckReadable says whether the model directory dir in the cache can be
// read: nil when it is absent or when it and the files of a model in it
// (those absent aside) open; otherwise an error wrapping ErrUnreadable that
// names the first path that does not, and why (permission denied: a cache
// of another user, or files whose mode was changed).
func CheckReadable(dir string) error {
	paths := []string{dir}
	for _, f := range []string{InfoFile, stampFile, ModelFile, TokenizerFile} {
		paths = append(paths, filepath.Join(dir, f))
	}
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block
		if errors.Is(err, fs.ErrNotExist) {
			if p == dir {
				return nil
			}
			continue
		}
		if err == nil {
			if p == dir {
				_, err = f.Readdirnames(1)
				if errors.Is(err, io.EOF) {
					err = nil
				}
			}
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
	}
	return nil
}
