package hub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/safefile"
)

// maxStamp bounds the size of a StampFile msrag reads.
const maxStamp = 16 << 20

// StampFile is the file, in a fetched dataset's directory, that records where
// the dataset came from and what was fetched.
const StampFile = ".hub-fetch.json"

// stamp is the content of [StampFile].
type stamp struct {
	Repo     string      `json:"repo"`     // mteb/NAME
	Revision string      `json:"revision"` // as asked, or pinned
	Commit   string      `json:"commit"`   // the commit listed and downloaded
	Files    []stampFile `json:"files"`
}

// stampFile records one file of the dataset directory.
type stampFile struct {
	Path   string `json:"path"`   // in the dataset directory, slash-separated
	Source string `json:"source"` // in the repository
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// writeStamp writes [StampFile] into dir.
func writeStamp(dir string, st stamp) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if err := safefile.WriteFile(filepath.Join(dir, StampFile), append(data, '\n')); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// present reports, as nil, a dataset directory that holds a stamp, every file
// the stamp records at its recorded size, and opens with corpus.OpenDataset.
// Files are not hashed again.
func present(dir string) error {
	data, err := safefile.ReadSmall(filepath.Join(dir, StampFile), maxStamp)
	if err != nil {
		return err
	}
	var st stamp
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	if len(st.Files) == 0 {
		return fmt.Errorf("%s records no file", StampFile)
	}
	for _, f := range st.Files {
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return err
		}
		if info.Size() != f.Size {
			return fmt.Errorf("%s: %d bytes, recorded %d", f.Path, info.Size(), f.Size)
		}
	}
	_, err = corpus.OpenDataset(dir)
	return err
}

// Fetched says where a dataset directory made by [FetchDataset] came from:
// the repository (mteb/NAME), the revision as asked (or pinned) and the
// commit its files were downloaded at. ok is false for a directory without
// a readable [StampFile], such as a dataset laid out by hand.
func Fetched(dir string) (repo, revision, commit string, ok bool) {
	data, err := safefile.ReadSmall(filepath.Join(dir, StampFile), maxStamp)
	if err != nil {
		return "", "", "", false
	}
	var st stamp
	if err := json.Unmarshal(data, &st); err != nil || st.Commit == "" {
		return "", "", "", false
	}
	return st.Repo, st.Revision, st.Commit, true
}
