package hub

import (
	"path/filepath"

	"github.com/msrag/msrag/internal/cache"
)

// EnvCache names the cache directory, as for the models (onnx.CacheDir).
const EnvCache = cache.Env

// CacheDir returns the directory that holds fetched files: $MSRAG_CACHE if
// set, else msrag in the user's cache directory (the same as onnx.CacheDir).
func CacheDir() string { return cache.Dir() }

// DataDir returns the directory that holds fetched datasets, CacheDir()/data.
func DataDir() string { return filepath.Join(CacheDir(), "data") }
