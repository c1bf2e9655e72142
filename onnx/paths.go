package onnx

import (
	"fmt"
	"github.com/msrag/msrag/internal/cache"
	"os"
	"path/filepath"
	"strings"
)

// Environment variables that place the files this package needs.
const (
	// EnvCache names the cache directory (see CacheDir).
	EnvCache = cache.Env
	// EnvORTLib names the ONNX Runtime shared library, overriding the default
	// (see LibraryPath).
	EnvORTLib = "MSRAG_ORT_LIB"
	// EnvHFEndpoint is the base URL of a Hugging Face hub, for "hf:" models.
	EnvHFEndpoint = "MSRAG_HF_ENDPOINT"
)

// CacheDir returns the directory that holds fetched files: $MSRAG_CACHE if
// set, else msrag in the user's cache directory (~/.cache/msrag on Linux).
func CacheDir() string { return cache.Dir() }

// LibraryPath returns the ONNX Runtime shared library to load:
// $MSRAG_ORT_LIB if set; else CacheDir()/onnxruntime/libonnxruntime.so.1 if
// present; else lib/msrag/libonnxruntime.so.1 beside the directory of the
// running program (where make install puts it: PREFIX/bin/msrag and
// PREFIX/lib/msrag); else the cache's path, which then names what is missing.
func LibraryPath() string {
	if p := os.Getenv(EnvORTLib); p != "" {
		return p
	}
	inCache := filepath.Join(CacheDir(), "onnxruntime", ortLibName)
	if _, err := os.Stat(inCache); err == nil {
		return inCache
	}
	if exe, err := os.Executable(); err == nil {
		installed := filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "msrag", ortLibName)
		if _, err := os.Stat(installed); err == nil {
			return installed
		}
	}
	return inCache
}

// ortLibName is the file name of the ONNX Runtime library.
const ortLibName = "libonnxruntime.so.1"

// ModelsDir returns the directory holding fetched models, CacheDir()/models.
func ModelsDir() string { return filepath.Join(CacheDir(), "models") }

// ResolveModel turns a model name into its directory: nameOrDir itself when it is a
// directory holding msrag-model.json, else ModelsDir()/nameOrDir (a built-in or
// fetched model; "hf:ORG/NAME" maps to hf--ORG--NAME). The empty name means
// DefaultModel. A built-in model that has not been fetched yet gives an error that
// says how to fetch it.
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
		return "", fmt.Errorf("onnx: model %s is not fetched (no %s); run: msrag model fetch %s: %w",
			nameOrDir, dir, nameOrDir, ErrUnknownModel)
	}
	return "", fmt.Errorf("onnx: model %q is neither a directory nor a built-in model (see msrag model list): %w",
		nameOrDir, ErrUnknownModel)
}

// cacheName maps a model name to its directory name under ModelsDir.
func cacheName(name string) string {
	if rest, ok := strings.CutPrefix(name, "hf:"); ok {
		return "hf--" + strings.ReplaceAll(rest, "/", "--")
	}
	return name
}
