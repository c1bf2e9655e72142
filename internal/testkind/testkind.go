// Package testkind is a small kind of channel for tests: it shows that a
// kind of channel is one package and one registration, and every command
// then builds, searches, fuses, evaluates and tunes it, one process or
// scattered over shards. Programs never import it; tests do.
//
// The kind "overlap" ranks a window's chunks by how many distinct words of
// the query they hold (words: lower-cased runs of letters and digits).
// Scores are small integers, so ties are everywhere: at every shard's k-th
// place too, which is what exact sharded search must get right. Its
// channels are named "ovl-w100"; it has no whole-document channel and
// needs no corpus statistics.
package testkind

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
)

// Name is the kind's registered name.
const Name = "overlap"

// Kind is the kind, registered when the package is imported.
var Kind channel.Kind = kind{}

func init() { channel.Register(Kind) }

// ErrNone is wrapped by the error for an overlap channel asked of an index
// without one.
var ErrNone = errors.New("no overlap windows")

const prefix = "ovl-"

type kind struct{}

func (kind) Name() string   { return Name }
func (kind) Order() int     { return 20 }
func (kind) WholeDoc() bool { return false }

func (kind) ChannelName(w chunk.Window) string { return prefix + w.Name() }

func (kind) ParseName(s string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), prefix)
	if !ok {
		return "", false
	}
	if rest == "full" {
		return prefix + rest, true
	}
	rest = strings.TrimPrefix(rest, "w")
	if rest == "" || rest[0] == '0' || strings.TrimLeft(rest, "0123456789") != "" || len(rest) > 9 {
		return "", false
	}
	return prefix + "w" + rest, true
}

func (kind) Grouped(chunk.Window) bool { return true }
func (kind) Needs() channel.Needs      { return channel.QueryTexts }
func (kind) Absent() error {
	return fmt.Errorf("it was built without overlap channels: %w", ErrNone)
}
func (kind) In(m *indexfile.Manifest) bool { _, ok := m.Channels[Name]; return ok }

// record is what the manifest's channels section holds of the kind.
type record struct {
	Words string       `json:"words"`
	Files []fileRecord `json:"files"`
}

type fileRecord struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Rows   int    `json:"rows"`
}

// wordsVersion names how texts become words; an index of another is not
// searched with this one.
const wordsVersion = "lower-case letter and digit runs 1"

func (kind) Params(m *indexfile.Manifest) string {
	var r record
	json.Unmarshal(m.Channels[Name], &r)
	return "words " + r.Words
}

func (kind) DecodeStats([]byte) (channel.Stats, error) {
	return nil, errors.New("testkind: the kind has no statistics")
}

// Words returns the distinct words of text, sorted.
func Words(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	slices.Sort(ws)
	return slices.Compact(ws)
}

func (kind) NewBuilder(cfg channel.BuildConfig) (channel.Builder, error) {
	if cfg.Params != nil {
		return nil, fmt.Errorf("testkind: the kind takes no parameters, given %v", cfg.Params)
	}
	return &builder{specs: cfg.Windows, rows: make([][][]string, len(cfg.Windows))}, nil
}

type builder struct {
	specs []chunk.Window
	rows  [][][]string // per window, per row: its words
}

type preparer struct{}

func (preparer) Prepare(text string) any { return Words(text) }

func (*builder) Preparer() channel.Preparer { return preparer{} }
func (b *builder) Add(w int, prep any, _ []float32) error {
	words, _ := prep.([]string)
	b.rows[w] = append(b.rows[w], words)
	return nil
}
func (*builder) AddDoc(any) error { return nil }
func (b *builder) Finish(src *channel.Source) (channel.Shard, error) {
	return &shard{specs: b.specs, rows: b.rows, maps: src.Rows}, nil
}
func (b *builder) Close() error { return nil }

type shard struct {
	specs []chunk.Window
	rows  [][][]string
	maps  []channel.RowMap
}

func (*shard) Stats(*channel.Queries) (channel.Stats, error) { return nil, nil }

// Search scores every row of every window by the query words it holds.
func (sh *shard) Search(ctx context.Context, q *channel.Queries, _ channel.Stats, k int) ([]channel.Hits, error) {
	words := make([][]string, q.Len())
	for i, t := range q.Texts {
		words[i] = Words(t)
	}
	out := make([]channel.Hits, len(sh.rows))
	for wi, rows := range sh.rows {
		h, err := channel.Top(ctx, q.Len(), k, sh.maps[wi], func(qs []int, n int) ([]int32, []float32, error) {
			return search(rows, words, qs, n)
		})
		if err != nil {
			return nil, err
		}
		out[wi] = h
	}
	return out, nil
}

// search scores every row for the queries qs and returns each one's n best,
// ties in row order descending (any order is an engine's right).
func search(rows [][]string, words [][]string, qs []int, n int) ([]int32, []float32, error) {
	outR, outS := make([]int32, 0, len(qs)*n), make([]float32, 0, len(qs)*n)
	order := make([]int32, len(rows))
	score := make([]float32, len(rows))
	for _, q := range qs {
		for r, rw := range rows {
			order[r], score[r] = int32(r), 0
			for _, w := range words[q] {
				if _, ok := slices.BinarySearch(rw, w); ok {
					score[r]++
				}
			}
		}
		slices.SortFunc(order, func(a, b int32) int {
			if score[a] != score[b] {
				if score[a] > score[b] {
					return -1
				}
				return 1
			}
			return int(b - a)
		})
		for j := range n {
			if j < len(order) && score[order[j]] > 0 {
				outR, outS = append(outR, order[j]), append(outS, score[order[j]])
			} else {
				outR, outS = append(outR, -1), append(outS, 0)
			}
		}
	}
	return outR, outS, nil
}

func fileName(w chunk.Window) string { return w.Name() + ".ovl" }

// Write writes a file per window, a JSON line of words per row.
func (sh *shard) Write(dst channel.Dest, man *indexfile.Manifest) error {
	rec := record{Words: wordsVersion}
	for wi, rows := range sh.rows {
		f := fileRecord{File: fileName(sh.specs[wi]), Rows: len(rows)}
		if dst != nil {
			var err error
			f.SHA256, err = dst.Create(f.File, func(w io.Writer) error {
				bw := bufio.NewWriter(w)
				enc := json.NewEncoder(bw)
				for _, r := range rows {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return bw.Flush()
			})
			if err != nil {
				return err
			}
		}
		rec.Files = append(rec.Files, f)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if man.Channels == nil {
		man.Channels = map[string]json.RawMessage{}
	}
	man.Channels[Name] = data
	return nil
}

func (*shard) Close() error { return nil }

// Open reads every window's file, checked against the manifest.
func (kind) Open(src *channel.Source) (channel.Shard, error) {
	var rec record
	if err := json.Unmarshal(src.Manifest.Channels[Name], &rec); err != nil {
		return nil, fmt.Errorf("channels.%s: %w: %w", Name, err, indexfile.ErrMismatch)
	}
	if rec.Words != wordsVersion || len(rec.Files) != len(src.Windows) {
		return nil, fmt.Errorf("channels.%s: words %q and %d files for %d windows: %w", Name, rec.Words, len(rec.Files), len(src.Windows), indexfile.ErrMismatch)
	}
	sh := &shard{specs: src.Windows, maps: src.Rows}
	for wi, f := range rec.Files {
		if f.Rows != src.Rows[wi].Len() {
			return nil, fmt.Errorf("%s: %d rows, the window has %d: %w", f.File, f.Rows, src.Rows[wi].Len(), indexfile.ErrMismatch)
		}
		var rows [][]string
		err := src.Read(f.File, f.SHA256, func(r io.Reader, _ int64) error {
			dec := json.NewDecoder(r)
			for dec.More() {
				var words []string
				if err := dec.Decode(&words); err != nil {
					return err
				}
				rows = append(rows, words)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.File, err)
		}
		if len(rows) != f.Rows {
			return nil, fmt.Errorf("%s holds %d rows, the manifest says %d: %w", f.File, len(rows), f.Rows, indexfile.ErrMismatch)
		}
		sh.rows = append(sh.rows, rows)
	}
	return sh, nil
}
