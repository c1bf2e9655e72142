// Package scatterfile holds the files of a scatter-gather search: what each
// phase writes into the work directory and the next one reads.
//
//	queries/I.arrow, I.json   a block of the queries' vectors (Arrow IPC
//	                          stream: id, vector), embedded once, by the
//	                          statistics task I
//	stats/I.json              shard I's corpus statistics for the queries
//	lists/I.arrow, I.json     shard I's ranked rows of every channel (Arrow
//	                          IPC stream: query, channel, rank, row, doc_id,
//	                          score, start, end, terms), one record batch
//	                          per block of queries
//
// Every data file is written whole beside its name and renamed into place,
// then its record (the .json: what it holds, for which queries and shard,
// its size and sha256) the same way: a file without its record does not
// count, so a task killed while writing leaves nothing that counts. A
// reader checks the record first and hashes the data file as it reads it.
package scatterfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/internal/safefile"
)

// Format is the version of the files this package writes.
const Format = 1

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
	// window k, the channels searched); every file of one search has the
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
	// File, Size and SHA256 are the data file beside the record ("" for a
	// statistics file, which is its own record).
	File   string `json:"file,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Payload is a statistics file's statistics (channel.StatsSet's JSON).
	Payload json.RawMessage `json:"stats_payload,omitempty"`
}

// Path is where task i's file of phase lives in work: DIR/PHASE/I.EXT.
func Path(work, phase string, i int, ext string) string {
	return filepath.Join(work, phase, fmt.Sprintf("%05d%s", i, ext))
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
	path := Path(work, phase, i, ".arrow")
	if rec.File != filepath.Base(path) {
		return "", fmt.Errorf("scatterfile: %s names file %q, want %s: %w", Path(work, phase, i, ".json"), rec.File, filepath.Base(path), ErrBad)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("scatterfile: %s: %v: %w", path, err, ErrBad)
	}
	if st.Size() != rec.Size {
		return "", fmt.Errorf("scatterfile: %s has %d bytes, its record says %d (cut short or replaced): %w", path, st.Size(), rec.Size, ErrBad)
	}
	sum, err := safefile.SHA256(path)
	if err != nil {
		return "", fmt.Errorf("scatterfile: %w", err)
	}
	if sum != rec.SHA256 {
		return "", fmt.Errorf("scatterfile: %s has sha256 %s, its record says %s (damaged): %w", path, sum, rec.SHA256, ErrBad)
	}
	return path, nil
}
