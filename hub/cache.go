package hub

import (
	"os"
	"path/filepath"
)

// EnvCache names the cache directory, as for the models (onnx.CacheDir).
const EnvCache = "MSRAG_CACHE"

// CacheDir returns the directory that holds fetched files, found as
// onnx.CacheDir finds it: $MSRAG_CACHE if set; otherwise .cache beside the
// nearest go.mod above the working directory; otherwise .cache in the working
// directory.
func CacheDir() string {
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ".cache"
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".cache")
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return filepath.Join(wd, ".cache")
}

// DataDir returns the directory that holds fetched datasets, CacheDir()/data.
func DataDir() string { return filepath.Join(CacheDir(), "data") }
