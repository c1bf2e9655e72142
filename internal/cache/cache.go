// Package cache says where msrag keeps what it fetches (models, the ONNX
// Runtime library, datasets): one place, for every package.
package cache

import (
	"os"
	"path/filepath"
)

// Env names the cache directory, overriding the default.
const Env = "MSRAG_CACHE"

// Dir returns the cache directory: $MSRAG_CACHE when set, else msrag in the
// user's cache directory (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on
// Linux), else .msrag-cache in the working directory when the user has no
// home. make setup fills the same directory, and the tests read it; scripts
// compute it the same way: $MSRAG_CACHE, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/msrag.
func Dir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "msrag")
	}
	return ".msrag-cache"
}
