package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/internal/safefile"
)

// corpusSource is a dataset's corpus as a reuse decision sees it: its files
// (one, or a directory's Parquet files in name order), each with its size
// and modification time, hashed only when that is needed.
type corpusSource struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	MTime  string `json:"mtime"`
	SHA256 string `json:"sha256"`
	files  []string
	sums   map[string]string
}

// sourceOf describes the corpus at path.
func sourceOf(path string) *corpusSource {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s := &corpusSource{Path: abs, files: []string{abs}, sums: map[string]string{}}
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

// fileSum returns the sha256 of one of the corpus files, hashing it once.
func (s *corpusSource) fileSum(path string) (string, error) {
	if sum, ok := s.sums[path]; ok {
		return sum, nil
	}
	sum, err := safefile.SHA256(path)
	if err != nil {
		return "", fmt.Errorf("experiment: %w", err)
	}
	s.sums[path] = sum
	return sum, nil
}

// inputs returns the corpus files as a manifest records them (msrag.Input):
// path, size, modification time and sha256. It also sets the corpus's
// sha256 (of the files one after the other), which results.json records.
func (s *corpusSource) inputs() ([]msrag.Input, error) {
	var out []msrag.Input
	h := sha256.New()
	for _, f := range s.files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("experiment: %w", err)
		}
		sum, err := s.fileSum(f)
		if err != nil {
			return nil, err
		}
		out = append(out, msrag.Input{Path: f, Size: st.Size(), SHA256: sum, MTime: st.ModTime().UTC().Format(time.RFC3339Nano)})
		if err := hashInto(h, f); err != nil {
			return nil, err
		}
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

func hashInto(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("experiment: reading %s: %w", path, err)
	}
	return nil
}

// differs compares inputs an index recorded (of every shard) with the
// corpus files, by name within the corpus (the path given to msrag index
// may have been another), size, then sha256 unless the file's
// modification time is the one recorded. It says which file differs and
// how, or "".
func (s *corpusSource) differs(recorded []msrag.Input) (string, error) {
	byName := map[string][]msrag.Input{}
	for _, in := range recorded {
		byName[filepath.Base(in.Path)] = append(byName[filepath.Base(in.Path)], in)
	}
	for _, f := range s.files {
		name := filepath.Base(f)
		ins := byName[name]
		delete(byName, name)
		if len(ins) == 0 {
			return fmt.Sprintf("not from the dataset's file %s (it read %s)", f, inputNames(recorded)), nil
		}
		st, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("experiment: %w", err)
		}
		for _, in := range ins {
			if why, err := s.fileDiffers(f, st, in); err != nil || why != "" {
				return why, err
			}
		}
	}
	if len(byName) > 0 {
		return fmt.Sprintf("also from %s, which the dataset's corpus lacks", strings.Join(slices.Sorted(keys(byName)), ", ")), nil
	}
	return "", nil
}

// fileDiffers compares corpus file f with an input recorded of it.
func (s *corpusSource) fileDiffers(f string, st os.FileInfo, in msrag.Input) (string, error) {
	if in.Size != st.Size() {
		return fmt.Sprintf("corpus file %s differs from the one it was built from (%s): size %d, recorded %d", f, in.Path, st.Size(), in.Size), nil
	}
	if in.MTime != "" && in.MTime == st.ModTime().UTC().Format(time.RFC3339Nano) {
		return "", nil // unchanged since it was read
	}
	sum, err := s.fileSum(f)
	if err != nil || sum == in.SHA256 {
		return "", err
	}
	return fmt.Sprintf("corpus file %s differs from the one it was built from (%s): sha256 %s, recorded %s", f, in.Path, sum, in.SHA256), nil
}

func keys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// inputNames lists the files inputs name, for a message.
func inputNames(ins []msrag.Input) string {
	var names []string
	for _, in := range ins {
		if !slices.Contains(names, in.Path) {
			names = append(names, in.Path)
		}
	}
	return strings.Join(names, ", ")
}

// checksum computes the corpus's sha256 (of its files one after the other)
// once.
func (s *corpusSource) checksum() error {
	if s.SHA256 != "" {
		return nil
	}
	h := sha256.New()
	for _, f := range s.files {
		if err := hashInto(h, f); err != nil {
			return err
		}
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// matches reports whether the corpus is the one a record from before
// manifests recorded their inputs describes: same size, and the same mtime
// or, failing that, the same sha256.
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

// sidecarPath is where indices of msrag eval kept the record of their
// corpus before manifests recorded it (INDEX.source.json).
func sidecarPath(ixDir string) string { return filepath.Clean(ixDir) + ".source.json" }

// readSource reads the record beside an index; nil when there is none (no
// file). A record there that cannot be read is an error: whether the index
// is reused, or may be rebuilt, is never decided on a record unread.
func readSource(ixDir string) (*corpusSource, error) {
	path := sidecarPath(ixDir)
	data, err := safefile.ReadSmall(path, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("experiment: reading the corpus record of index %s: %w", ixDir, err)
	}
	var rec corpusSource
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("experiment: unreadable %s: %v", path, err)
	}
	return &rec, nil
}

// removeSource removes the record beside an index, if any: the index built
// in its place records its corpus in its manifest.
func removeSource(ixDir string) error {
	if err := os.Remove(sidecarPath(ixDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// ErrOtherCorpus reports an index built from another corpus than the one
// named.
var ErrOtherCorpus = errors.New("experiment: the index was built from another corpus")

// CheckSource checks that the index in ixDir (one, or shards) was built
// from the corpus at corpusPath, as an evaluation reusing it does: by the
// inputs its manifests record, or by the record beside an index from
// before they did. An index with neither passes: what it holds is then
// checked by the caller against the judged documents.
func CheckSource(ixDir, corpusPath string) error {
	src := sourceOf(corpusPath)
	var inputs []msrag.Input
	for _, d := range indexDirs(ixDir) {
		m, err := msrag.ReadManifest(d)
		if err != nil {
			return err
		}
		inputs = append(inputs, m.Inputs...)
	}
	if len(inputs) == 0 {
		return checkLegacySource(ixDir, src)
	}
	why, err := src.differs(inputs)
	if err != nil || why == "" {
		return err
	}
	return fmt.Errorf("index %s was built from %s, not from %s: %s: %w", ixDir, inputNames(inputs), corpusPath, why, ErrOtherCorpus)
}

// checkLegacySource checks an index from before manifests recorded their
// inputs by the record beside it (none: it passes).
func checkLegacySource(ixDir string, src *corpusSource) error {
	rec, err := readSource(ixDir)
	if err != nil {
		return err
	}
	if rec == nil {
		return nil
	}
	ok, err := src.matches(rec)
	if err != nil || ok {
		return err
	}
	return fmt.Errorf("index %s was built from %s (%d bytes, sha256 %.12s...), not from %s (%d bytes): %w",
		ixDir, rec.Path, rec.Size, rec.SHA256, src.Path, src.Size, ErrOtherCorpus)
}
