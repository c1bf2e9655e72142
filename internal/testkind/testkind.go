// Package testkind is a small kind of channel for tests: it shows that a
// kind of channel is one package and one registration, and every command
// then builds, searches, fuses, evaluates and tunes it, one process or
// scattered over shards, with its own parameters, statistics and manifest
// section. Programs never import it; tests do.
//
// The kind "overlap" ranks a window's chunks by the distinct words of the
// query they hold (words: lower-cased runs of letters and digits): each
// word counts 1, or with weight=rare its rarity, the window's rows over
// the rows holding it, counted over every shard searched together (the
// kind's statistics). Rows holding fewer than min of the query's words
// are no hits. Scores are small numbers, so ties are everywhere: at every
// shard's k-th place too, which is what exact sharded search must get
// right. Its channels are named "ovl-w100"; it has no whole-document
// channel. Its parameters (min, weight) are the command line's
// --channel overlap:min=2,weight=rare.
package testkind

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
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

func (kind) Name() string         { return Name }
func (kind) Needs() channel.Needs { return channel.QueryTexts | channel.Statistics }

// Traits: channels "ovl-w100", after the built-in kinds' in a layout, all
// in the kind's group; no whole-document channel; built only when asked
// for.
func (kind) Traits() channel.Traits {
	return channel.Traits{Order: 20, Prefix: prefix, Absent: fmt.Errorf("it was built without overlap channels: %w", ErrNone)}
}

// Params are the defaults: min 1, weight count.
func (kind) Params() channel.Params { return Params{}.withDefaults() }

// Params are the kind's build parameters.
type Params struct {
	// Min is the fewest query words a row must hold to be a hit; default 1.
	Min int
	// Weight is how a word counts: "count" (1, the default) or "rare" (the
	// rows of the window over the rows holding the word).
	Weight string
}

// Weights a word may count by.
const (
	Count = "count"
	Rare  = "rare"
)

func (p Params) withDefaults() Params {
	if p.Min == 0 {
		p.Min = 1
	}
	if p.Weight == "" {
		p.Weight = Count
	}
	return p
}

func (p Params) check() error {
	switch {
	case p.Min < 1:
		return fmt.Errorf("min %d: want 1 or more", p.Min)
	case p.Weight != Count && p.Weight != Rare:
		return fmt.Errorf("weight %q: want %s or %s", p.Weight, Count, Rare)
	}
	return nil
}

// Kind is the overlap kind.
func (Params) Kind() channel.Kind { return Kind }

// Settings are what a build with p records.
func (p Params) Settings() (channel.Settings, error) {
	p = p.withDefaults()
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("testkind: %w", err)
	}
	return record{Words: wordsVersion, Min: p.Min, Weight: p.Weight}.settings(), nil
}

// record is what the manifest's channels section holds of the kind.
type record struct {
	Words  string       `json:"words"`
	Min    int          `json:"min"`
	Weight string       `json:"weight"`
	Files  []fileRecord `json:"files"`
}

type fileRecord struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Rows   int    `json:"rows"`
}

// wordsVersion names how texts become words; an index of another is not
// searched with this one.
const wordsVersion = "lower-case letter and digit runs 1"

// params are the parameters the record was built with: a record written
// before the kind took parameters (neither min nor weight) was built with
// the defaults.
func (r record) params() Params {
	if r.Min == 0 && r.Weight == "" {
		return Params{}.withDefaults()
	}
	return Params{Min: r.Min, Weight: r.Weight}
}

func (r record) settings() channel.Settings {
	p := r.params()
	return channel.Settings{{Key: "words", Value: r.Words}, {Key: "min", Value: strconv.Itoa(p.Min)}, {Key: "weight", Value: p.Weight}}
}

func (Params) Flags() []channel.Flag {
	return []channel.Flag{
		{Key: "min", Default: "1", Usage: "the fewest query words a hit holds"},
		{Key: "weight", Default: Count, Usage: "how a word counts: count (1) or rare (the window's rows over the rows holding it)"},
	}
}

func (p Params) Parse(s channel.Settings) (channel.Params, error) {
	err := channel.ParseFlags(s, p.Flags(), func(key, v string) error {
		if key == "weight" {
			if v != Count && v != Rare {
				return fmt.Errorf("%q: want %s or %s", v, Count, Rare)
			}
			p.Weight = v
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want a number from 1", v)
		}
		p.Min = n
		return nil
	})
	return p.withDefaults(), err
}

// Recorded reads the kind's section: its words and parameters as
// settings, a file per window with the window's rows.
func (kind) Recorded(m *indexfile.Manifest) (*channel.Record, error) {
	data, ok := m.Channels[Name]
	if !ok {
		return nil, nil
	}
	field := "channels." + Name
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if err := r.params().check(); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if r.Words != wordsVersion {
		return nil, fmt.Errorf("%s: words %q, want %q", field, r.Words, wordsVersion)
	}
	if len(r.Files) != len(m.Windows) {
		return nil, fmt.Errorf("%s: %d files for %d windows", field, len(r.Files), len(m.Windows))
	}
	rec := &channel.Record{Settings: r.settings()}
	for i, f := range r.Files {
		if int64(f.Rows) != m.Windows[i].Vectors {
			return nil, fmt.Errorf("%s.files[%d]: %d rows, the window has %d", field, i, f.Rows, m.Windows[i].Vectors)
		}
		rec.Files = append(rec.Files, channel.FileRef{Field: fmt.Sprintf("%s.files[%d].file", field, i), Name: f.File})
	}
	return rec, nil
}

// stats are, per window, its rows and the rows holding each query word
// (of every query of the batch).
type stats []windowStats

type windowStats struct {
	Rows int            `json:"rows"`
	DF   map[string]int `json:"df"`
}

func (s stats) Add(o channel.Stats) error {
	os, ok := o.(stats)
	if !ok || len(os) != len(s) {
		return fmt.Errorf("testkind: adding statistics of %d windows to %d", len(os), len(s))
	}
	for i := range s {
		s[i].Rows += os[i].Rows
		for w, n := range os[i].DF {
			s[i].DF[w] += n
		}
	}
	return nil
}

func (kind) DecodeStats(data []byte) (channel.Stats, error) {
	var s stats
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("testkind: statistics: %w", err)
	}
	for i := range s {
		if s[i].DF == nil {
			s[i].DF = map[string]int{}
		}
	}
	return s, nil
}

// Words returns the distinct words of text, sorted.
func Words(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	slices.Sort(ws)
	return slices.Compact(ws)
}

func (kind) NewBuilder(params channel.Params, cfg channel.BuildConfig) (channel.Builder, error) {
	p, ok := params.(Params)
	if !ok {
		return nil, fmt.Errorf("testkind: parameters of type %T, want testkind.Params", params)
	}
	if p = p.withDefaults(); p.check() != nil {
		return nil, fmt.Errorf("testkind: %w", p.check())
	}
	return channel.BuilderOf[[]string](&builder{params: p, specs: cfg.Windows, rows: make([][][]string, len(cfg.Windows))}), nil
}

type builder struct {
	params Params
	specs  []chunk.Window
	rows   [][][]string // per window, per row: its words
}

func (*builder) Prepare() func(string) []string { return Words }
func (b *builder) Add(w int, words []string, _ []float32) error {
	b.rows[w] = append(b.rows[w], words)
	return nil
}
func (*builder) AddDoc([]string) error { return nil }
func (b *builder) Finish(src *channel.Source) (channel.Shard, error) {
	return &shard{params: b.params, specs: b.specs, rows: b.rows, maps: src.Rows}, nil
}
func (b *builder) Close() error { return nil }

type shard struct {
	params Params
	specs  []chunk.Window
	rows   [][][]string
	maps   []channel.RowMap
}

// Stats counts, per window, the rows and the rows holding each word of
// the queries.
func (sh *shard) Stats(q *channel.Queries) (channel.Stats, error) {
	var words []string
	for _, t := range q.Texts {
		words = append(words, Words(t)...)
	}
	out := make(stats, len(sh.rows))
	for wi, rows := range sh.rows {
		out[wi] = windowStats{Rows: len(rows), DF: map[string]int{}}
		for _, w := range words {
			if _, done := out[wi].DF[w]; done {
				continue
			}
			n := 0
			for _, r := range rows {
				if _, ok := slices.BinarySearch(r, w); ok {
					n++
				}
			}
			out[wi].DF[w] = n
		}
	}
	return out, nil
}

// Search scores every row of every window by the query words it holds,
// weighed by st (nil: this shard's own statistics).
func (sh *shard) Search(ctx context.Context, q *channel.Queries, st channel.Stats, k int) ([]channel.Hits, error) {
	if st == nil {
		var err error
		if st, err = sh.Stats(q); err != nil {
			return nil, err
		}
	}
	all, ok := st.(stats)
	if !ok || len(all) != len(sh.rows) {
		return nil, fmt.Errorf("testkind: statistics of %T for %d windows", st, len(sh.rows))
	}
	words := make([][]string, q.Len())
	for i, t := range q.Texts {
		words[i] = Words(t)
	}
	out := make([]channel.Hits, len(sh.rows))
	for wi, rows := range sh.rows {
		weigh := sh.weigher(all[wi])
		h, err := channel.Top(ctx, q.Len(), k, sh.maps[wi], func(qs []int, n int) ([]int32, []float32, error) {
			return search(rows, words, qs, n, sh.params.Min, weigh)
		})
		if err != nil {
			return nil, err
		}
		out[wi] = h
	}
	return out, nil
}

// weigher returns how a word counts by the kind's weight.
func (sh *shard) weigher(st windowStats) func(string) float32 {
	if sh.params.Weight != Rare {
		return func(string) float32 { return 1 }
	}
	return func(w string) float32 { return float32(st.Rows) / float32(max(st.DF[w], 1)) }
}

// search scores every row for the queries qs and returns each one's n best,
// ties in row order descending (any order is an engine's right).
func search(rows [][]string, words [][]string, qs []int, n, min int, weigh func(string) float32) ([]int32, []float32, error) {
	outR, outS := make([]int32, 0, len(qs)*n), make([]float32, 0, len(qs)*n)
	order := make([]int32, len(rows))
	score := make([]float32, len(rows))
	for _, q := range qs {
		for r, rw := range rows {
			order[r], score[r] = int32(r), 0
			held := 0
			for _, w := range words[q] {
				if _, ok := slices.BinarySearch(rw, w); ok {
					score[r] += weigh(w)
					held++
				}
			}
			if held < min {
				score[r] = 0
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
	rec := record{Words: wordsVersion, Min: sh.params.Min, Weight: sh.params.Weight}
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
	sh := &shard{params: rec.params(), specs: src.Windows, maps: src.Rows}
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
