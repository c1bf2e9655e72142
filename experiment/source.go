package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/internal/safefile"
)

// corpusSource is INDEX.source.json: which corpus an index was built from.
// A corpus that is a directory of Parquet files counts as the concatenation
// of its files in name order: Size and SHA256 cover them all, MTime is the
// latest.
type corpusSource struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	MTime  string `json:"mtime"`
	SHA256 string `json:"sha256"`
	files  []string
}

// sourceOf describes the corpus at path; the checksum is computed on demand.
func sourceOf(path string) *corpusSource {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s := &corpusSource{Path: abs, files: []string{abs}}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		s.files, _ = filepath.Glob(filepath.Join(abs, "*.parquet"))
		slices.Sort(s.files)
	}
	var latest time.Time
	for _, f := range s.files {
		if st, err := os.Stat(f); err == nil {
			s.Size += st.Size()
			if st.ModTime().After(latest) {
				latest = st.ModTime()
			}
		}
	}
	s.MTime = latest.UTC().Format(time.RFC3339Nano)
	return s
}

// checksum computes the corpus's sha256 once.
func (s *corpusSource) checksum() error {
	if s.SHA256 != "" {
		return nil
	}
	h := sha256.New()
	for _, path := range s.files {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("experiment: %w", err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("experiment: reading %s: %w", path, err)
		}
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// matches reports whether the corpus is the one recorded: same size, and the
// same mtime or, failing that, the same sha256.
func (s *corpusSource) matches(rec *corpusSource) (bool, error) {
	if s.Size != rec.Size {
		return false, nil
	}
	if s.MTime == rec.MTime && rec.SHA256 != "" {
		s.SHA256 = rec.SHA256 // trusted as the index is
		return true, nil
	}
	if err := s.checksum(); err != nil {
		return false, err
	}
	return s.SHA256 == rec.SHA256, nil
}

// sidecarPath is where the record of an index's corpus is kept.
func sidecarPath(ixDir string) string { return filepath.Clean(ixDir) + ".source.json" }

// readSource reads the record beside an index; nil when there is none.
func readSource(ixDir string) (*corpusSource, error) {
	data, err := safefile.ReadSmall(sidecarPath(ixDir), 1<<20)
	if err != nil {
		return nil, nil
	}
	var rec corpusSource
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("unreadable %s: %v", sidecarPath(ixDir), err)
	}
	return &rec, nil
}

func (s *corpusSource) write(ixDir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err == nil {
		err = safefile.WriteFile(sidecarPath(ixDir), append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// removeSource removes the record beside an index, if any.
func removeSource(ixDir string) error {
	if err := os.Remove(sidecarPath(ixDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// ErrOtherCorpus reports an index built from another corpus than the one
// named.
var ErrOtherCorpus = errors.New("experiment: the index was built from another corpus")

// CheckSource checks that the index in ixDir was built from the corpus at
// corpusPath, as an evaluation reusing an index does: by the record an
// evaluation keeps beside the index (size and mtime, else sha256), or by
// the inputs msrag index records in the manifests (one index or shards). An
// index with neither record passes: what it holds is then checked by the
// caller against the judged documents.
func CheckSource(ixDir, corpusPath string) error {
	rec, err := readSource(ixDir)
	if err != nil {
		return fmt.Errorf("experiment: %v", err)
	}
	src := sourceOf(corpusPath)
	if rec == nil {
		return checkRecordedInputs(ixDir, src)
	}
	ok, err := src.matches(rec)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("index %s was built from %s (%d bytes, sha256 %.12s...), not from %s (%d bytes): %w",
			ixDir, rec.Path, rec.Size, rec.SHA256, src.Path, src.Size, ErrOtherCorpus)
	}
	return nil
}

// fileSHA256 returns the sha256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("experiment: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("experiment: reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkRecordedInputs compares the inputs the manifests of the index (or
// shards) in ixDir record with the corpus src; an index that records none
// passes.
func checkRecordedInputs(ixDir string, src *corpusSource) error {
	var recorded []msrag.Manifest
	for _, d := range indexDirs(ixDir) {
		m, err := msrag.ReadManifest(d)
		if err != nil {
			return err
		}
		if len(m.Inputs) == 0 {
			return nil
		}
		recorded = append(recorded, *m)
	}
	if len(recorded) == 0 {
		return nil
	}
	why, err := inputsDiffer(recorded, src)
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("index %s: %s: %w", ixDir, why, ErrOtherCorpus)
	}
	return nil
}
