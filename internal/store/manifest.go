package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/indexfile"
)

// The manifest's types are the public schema in package indexfile; these
// names keep the store's callers short.
type (
	Manifest   = indexfile.Manifest
	ModelInfo  = indexfile.ModelInfo
	WindowInfo = indexfile.WindowInfo
	LateInfo   = indexfile.LateInfo
	Input      = indexfile.Input
)

// ManifestName is the manifest's file name inside an index directory.
const ManifestName = indexfile.ManifestName

// FormatVersion is the on-disk format this code writes; versions 1 and 2
// are read too (indexfile converts them as they are decoded).
const FormatVersion = indexfile.FormatVersion

// ErrMismatch is wrapped by errors about an index that does not match its
// manifest, its files or the model it is opened with.
var ErrMismatch = errors.New("index does not match")

// IsIndex reports whether dir holds a manifest.
func IsIndex(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestName))
	return err == nil
}

// ReadManifest reads and checks dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not an index: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		return nil, fmt.Errorf("%s: format version %d, this msrag reads 1 to %d: %w", path, m.FormatVersion, FormatVersion, ErrMismatch)
	}
	if len(m.Windows) == 0 {
		return nil, fmt.Errorf("%s: no windows: %w", path, ErrMismatch)
	}
	return &m, nil
}

func encodeManifest(m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	return append(data, '\n'), nil
}
