// Package scatterfile holds the files of a scatter-gather search: what each
// phase writes into the work directory and the next one reads.
//
//	queries/I.arrow, I.json   a block of the queries' vectors (Arrow IPC
//	                          stream: id, vector), embedded once, by the
//	                          statistics task I
//	stats/I.stats.json, I.json  shard I's corpus statistics for the
//	                          queries (channel.StatsSet's JSON)
//	lists/I.arrow, I.json     shard I's ranked rows of every channel (Arrow
//	                          IPC stream: query, channel, rank, row, doc_id,
//	                          score, start, end, terms), one record batch
//	                          per block of queries
//
// Every data file is written whole beside its name and renamed into place,
// then its record (the .json: what it holds, for which queries and shard,
// its size and sha256) the same way: a file without its record does not
// count, so a task killed while writing leaves nothing that counts. A
// reader checks the record first and the data file's size and sha256
// before it uses what the file holds. A task killed while writing leaves a
// temporary ".NAME.tmp-*" beside the file: the task's rerun removes it
// (RemoveTemps).
package scatterfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/internal/safefile"
)

// Format is the version of the files this package writes: 2 since a
// statistics file is a data file beside its record, with its size and
// sha256 (format 1 held the statistics in the record, unchecked).
const Format = 2

// ErrBad is wrapped by every error about a file of the work directory that
// is missing, damaged or of another search.
var ErrBad = errors.New("scatter-gather file does not fit")

// Phases, as records name them.
const (
	PhaseQueries = "queries"
	PhaseStats   = "stats"
	PhaseLists   = "lists"
)

// Record describes what one task of a phase wrote.
type Record struct {
	Format int    `json:"format"`
	Phase  string `json:"phase"`
	// Queries is the fingerprint of the query set (ids and texts, the
	// channel k, the channels searched); every file of one search has the
	// same.
	Queries string `json:"queries"`
	// Shard and Shards place the task: shard (or block of queries) Shard
	// of Shards.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Manifest is the sha256 of the shard's manifest.json (stats, lists):
	// which index the file is of.
	Manifest string `json:"manifest_sha256,omitempty"`
	// Stats is the fingerprint of the statistics a lists file was searched
	// with (every shard's, added).
	Stats string `json:"stats,omitempty"`
	// Lo and Hi are the queries a queries file holds, [Lo, Hi).
	Lo int `json:"lo"`
	Hi int `json:"hi"`
	// Batch is the queries per record batch (lists), Dims the vectors'
	// (queries).
	Batch int `json:"batch,omitempty"`
	Dims  int `json:"dims,omitempty"`
	// File, Size and SHA256 are the data file beside the record.
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Path is where task i's file of phase lives in work: DIR/PHASE/I.EXT.
func Path(work, phase string, i int, ext string) string {
	return filepath.Join(work, phase, fmt.Sprintf("%05d%s", i, ext))
}

// DataPath is where task i's data file of phase lives in work: .arrow for
// the queries and lists, .stats.json for the statistics.
func DataPath(work, phase string, i int) string {
	if phase == PhaseStats {
		return Path(work, phase, i, ".stats.json")
	}
	return Path(work, phase, i, ".arrow")
}

// WriteData writes data as task i's data file of phase, atomically, and
// returns its size and sha256 for its record.
func WriteData(work, phase string, i int, data []byte) (int64, string, error) {
	path := DataPath(work, phase, i)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, "", fmt.Errorf("scatterfile: %w", err)
	}
	sum, err := safefile.Write(path, func(w io.Writer) error { _, err := w.Write(data); return err })
	if err != nil {
		return 0, "", fmt.Errorf("scatterfile: %w", err)
	}
	return int64(len(data)), sum, nil
}

// WriteRecord writes rec as task i's record of its phase, atomically.
func WriteRecord(work string, i int, rec *Record) error {
	rec.Format = Format
	path := Path(work, rec.Phase, i, ".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("scatterfile: %w", err)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		err = safefile.WriteFile(path, append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("scatterfile: %s: %w", path, err)
	}
	return nil
}

// maxRecord bounds a record's size: statistics of many query terms.
const maxRecord = 1 << 30

// ReadRecord reads task i's record of phase and checks that it is one: its
// format, phase and place.
func ReadRecord(work, phase string, i, n int) (*Record, error) {
	path := Path(work, phase, i, ".json")
	data, err := safefile.ReadSmall(path, maxRecord)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("scatterfile: %s is missing (task %d of the %s phase did not finish): %w", path, i, phase, ErrBad)
		}
		return nil, fmt.Errorf("scatterfile: %w", err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("scatterfile: %s: %v: %w", path, err, ErrBad)
	}
	switch {
	case rec.Format != Format:
		return nil, fmt.Errorf("scatterfile: %s: format %d, this msrag reads %d: %w", path, rec.Format, Format, ErrBad)
	case rec.Phase != phase || rec.Shard != i || rec.Shards != n:
		return nil, fmt.Errorf("scatterfile: %s: %s file of task %d of %d, want %s of task %d of %d: %w", path, rec.Phase, rec.Shard, rec.Shards, phase, i, n, ErrBad)
	}
	return &rec, nil
}

// CheckData fails unless the data file of rec is there whole: its size and
// sha256 as recorded. A bit flipped or a file cut short is found here,
// before anything is read from it.
func CheckData(work, phase string, i int, rec *Record) (string, error) {
	path, err := dataFile(work, phase, i, rec)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("scatterfile: %s: %v: %w", path, err, ErrBad)
	}
	if err := checkSize(path, st.Size(), rec); err != nil {
		return "", err
	}
	sum, err := safefile.SHA256(path)
	if err != nil {
		return "", fmt.Errorf("scatterfile: %w", err)
	}
	return path, checkSum(path, sum, rec)
}

// maxData bounds a data file read whole (ReadData): statistics of many
// query terms.
const maxData = 1 << 30

// ReadData reads the data file of rec whole and returns it once its size
// and sha256 are the recorded ones: what is checked is what is used.
func ReadData(work, phase string, i int, rec *Record) ([]byte, error) {
	path, err := dataFile(work, phase, i, rec)
	if err != nil {
		return nil, err
	}
	data, err := safefile.ReadSmall(path, maxData)
	if err != nil {
		return nil, fmt.Errorf("scatterfile: %v: %w", err, ErrBad)
	}
	if err := checkSize(path, int64(len(data)), rec); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return data, checkSum(path, hex.EncodeToString(sum[:]), rec)
}

// dataFile returns the path of rec's data file, failing unless rec names it.
func dataFile(work, phase string, i int, rec *Record) (string, error) {
	path := DataPath(work, phase, i)
	if rec.File != filepath.Base(path) {
		return "", fmt.Errorf("scatterfile: %s names file %q, want %s: %w", Path(work, phase, i, ".json"), rec.File, filepath.Base(path), ErrBad)
	}
	return path, nil
}

func checkSize(path string, size int64, rec *Record) error {
	if size != rec.Size {
		return fmt.Errorf("scatterfile: %s has %d bytes, its record says %d (cut short or replaced): %w", path, size, rec.Size, ErrBad)
	}
	return nil
}

func checkSum(path, sum string, rec *Record) error {
	if sum != rec.SHA256 {
		return fmt.Errorf("scatterfile: %s has sha256 %s, its record says %s (changed or damaged): %w", path, sum, rec.SHA256, ErrBad)
	}
	return nil
}

// RemoveTemps removes what a writer of task i's files of phase killed
// before it finished left in work: the temporaries of its data file and
// record. Only the task's rerun, or a phase that reads the files once every
// task is done, may call it.
func RemoveTemps(work, phase string, i int) error {
	for _, path := range []string{DataPath(work, phase, i), Path(work, phase, i, ".json")} {
		if err := safefile.RemoveTemps(path); err != nil {
			return fmt.Errorf("scatterfile: %w", err)
		}
	}
	return nil
}
