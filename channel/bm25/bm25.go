// Package bm25 is the kind of channel "lexical": BM25 (package lexical)
// over the same chunks as every window, with the same rows and byte spans,
// and over the documents' whole texts (the channel bm25-doc), with a
// recorded analyzer.
//
// An index records its lexical windows in the manifest's lexical section
// (analyzer name and version, k1, b, and each file NAME.bm25 and doc.bm25
// with its sha256, rows, terms and tokens). Its channels are named
// "bm25-" and the window's name ("bm25-w100", "bm25-full"), and "bm25-doc";
// its group (windows=lexical) fuses all of them.
//
// BM25 over shards needs the whole corpus's statistics: the documents,
// their total length and the document frequencies of the query terms. A
// shard gives its own (Stats), which add up over shards; each shard then
// scores with the sum, so that a sharded index ranks as one.
package bm25

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/lexical"
)

// Kind is the lexical kind of channel, registered as "lexical".
var Kind channel.Kind = kind{}

// Name is the kind's registered name.
const Name = "lexical"

// prefix starts every channel's name.
const prefix = "bm25-"

func init() { channel.Register(Kind) }

// ErrNone is wrapped by the error for a lexical channel asked of an index
// built without lexical windows.
var ErrNone = errors.New("no lexical windows")

// Config says how a build makes its lexical windows: the analyzer that
// turns texts into terms and the BM25 parameters they score with.
type Config struct {
	// Analyzer turns texts into terms (lexical.English, lexical.None).
	Analyzer lexical.Analyzer
	// BM25 holds the parameters the lexical windows score with.
	BM25 lexical.BM25
}

// DefaultConfig is the English analyzer with k1 = 0.9 and b = 0.4
// (lexical.DefaultBM25).
func DefaultConfig() Config {
	return Config{Analyzer: lexical.English, BM25: lexical.DefaultBM25}
}

// Check refuses parameters an index should not be built with
// (lexical.BM25.Validate: k1 not finite or outside 0 to lexical.MaxK1, b
// outside 0 to 1) and an analyzer this msrag does not produce.
func (c Config) Check() error {
	if err := c.BM25.Validate(); err != nil {
		return err
	}
	if _, err := lexical.ParseAnalyzer(c.Analyzer.Name()); err != nil {
		return err
	}
	return nil
}

// Record is what a manifest records of lexical windows made with c,
// without their files.
func (c Config) Record() *indexfile.LexicalInfo {
	id := c.Analyzer.Identity()
	l := &indexfile.LexicalInfo{K1: c.BM25.K1, B: c.BM25.B}
	l.Analyzer.Name, l.Analyzer.Version = id.Name, id.Version
	return l
}

type kind struct{}

func (kind) Name() string         { return Name }
func (kind) Needs() channel.Needs { return channel.QueryTexts | channel.Statistics }

// absent is the error for a lexical channel asked of an index without one.
var absent = fmt.Errorf("it was built before they existed or with --no-lexical: %w", ErrNone)

// Traits: the channels are "bm25-" and the window's name ("bm25-w100",
// "bm25-full"), and "bm25-doc" over whole documents, after the dense ones
// in a layout; windows=lexical fuses all of them; a build without a model
// makes them unless asked for other kinds, one with a model only when
// asked.
func (kind) Traits() channel.Traits {
	return channel.Traits{Order: 10, Prefix: prefix, WholeDoc: true, Default: channel.BuildsWithoutModel, Absent: absent}
}

// Params are DefaultConfig.
func (kind) Params() channel.Params { return DefaultConfig() }

// Recorded reads the lexical section: the analyzer (name and version) and
// the BM25 parameters as settings, a file per window with as many rows as
// the window has vectors and the document file with a row per document,
// parameters in range.
func (kind) Recorded(m *indexfile.Manifest) (*channel.Record, error) {
	l := m.Lexical
	switch {
	case l == nil:
		return nil, nil
	case l.Analyzer.Name == "":
		return nil, errors.New("lexical.analyzer: no name")
	case !(l.K1 >= 0) || !(l.B >= 0 && l.B <= 1):
		return nil, fmt.Errorf("lexical: k1 %v, b %v: want k1 >= 0 and b from 0 to 1", l.K1, l.B)
	case len(l.Windows) != len(m.Windows):
		return nil, fmt.Errorf("lexical.windows: %d files for %d windows", len(l.Windows), len(m.Windows))
	case l.Doc.Rows != m.Docs:
		return nil, fmt.Errorf("lexical.doc: %d rows for %d documents", l.Doc.Rows, m.Docs)
	}
	r := &channel.Record{Settings: settingsOf(l)}
	for i, f := range l.Windows {
		field := fmt.Sprintf("lexical.windows[%d]", i)
		if f.Rows != m.Windows[i].Vectors {
			return nil, fmt.Errorf("%s: %d rows, the window has %d vectors", field, f.Rows, m.Windows[i].Vectors)
		}
		r.Files = append(r.Files, channel.FileRef{Field: field + ".file", Name: f.File})
	}
	r.Files = append(r.Files, channel.FileRef{Field: "lexical.doc.file", Name: l.Doc.File})
	return r, nil
}

func settingsOf(l *indexfile.LexicalInfo) channel.Settings {
	return channel.Settings{
		{Key: "analyzer", Value: l.Analyzer.Name + " " + l.Analyzer.Version},
		{Key: "k1", Value: fmt.Sprint(l.K1)},
		{Key: "b", Value: fmt.Sprint(l.B)},
	}
}

// Kind is the lexical kind.
func (Config) Kind() channel.Kind { return Kind }

// Settings is what a build with c records.
func (c Config) Settings() (channel.Settings, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	return settingsOf(c.Record()), nil
}

// Flags: the analyzer, k1 and b (the command line's --lexical-analyzer,
// --bm25-k1 and --bm25-b).
func (Config) Flags() []channel.Flag {
	return []channel.Flag{
		{Key: "analyzer", Default: "english", Alias: "lexical-analyzer",
			Usage: "analyzer of the lexical windows: english (stop words, Snowball stemming) or none (lower case only)"},
		{Key: "k1", Default: fmt.Sprint(lexical.DefaultBM25.K1), Alias: "bm25-k1", Usage: fmt.Sprintf("BM25 k1 of the lexical windows (0 to %d)", lexical.MaxK1)},
		{Key: "b", Default: fmt.Sprint(lexical.DefaultBM25.B), Alias: "bm25-b", Usage: "BM25 b of the lexical windows (0 to 1)"},
	}
}

// Parse reads analyzer, k1 and b, each in range (the bounds of
// lexical.BM25.Validate, said key by key).
func (c Config) Parse(s channel.Settings) (channel.Params, error) {
	err := channel.ParseFlags(s, c.Flags(), func(key, v string) error {
		if key == "analyzer" {
			a, err := lexical.ParseAnalyzer(v)
			c.Analyzer = a
			return err
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q: want a number", v)
		}
		if key == "k1" {
			c.BM25.K1 = x
			if !(x >= 0 && x <= lexical.MaxK1) {
				return fmt.Errorf("%v: want a number from 0 to %d (Lucene's and bm25s's range in practice; far beyond it every score rounds to 0)", x, lexical.MaxK1)
			}
			return nil
		}
		c.BM25.B = x
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("%v: want a number from 0 to 1", x)
		}
		return nil
	})
	return c, err
}

// NewBuilder starts a BM25 index per window and one over whole documents.
func (kind) NewBuilder(params channel.Params, cfg channel.BuildConfig) (channel.Builder, error) {
	c, ok := params.(Config)
	if !ok {
		return nil, fmt.Errorf("msrag: bm25: parameters of type %T, want bm25.Config", params)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	b := &builder{cfg: c, windows: make([]*lexical.Builder, len(cfg.Windows)), specs: cfg.Windows}
	for i := range b.windows {
		b.windows[i] = &lexical.Builder{}
	}
	return channel.BuilderOf[[]string](b), nil
}

// stats is a shard's statistics for a batch of queries, one per channel
// (in the kind's channel order).
type stats []lexical.Stats

// Add adds another shard's statistics, channel by channel.
func (s stats) Add(o channel.Stats) error {
	os, ok := o.(stats)
	if !ok || len(os) != len(s) {
		return fmt.Errorf("bm25: adding statistics of %d channels to %d", len(os), len(s))
	}
	for i := range s {
		s[i].Add(os[i])
	}
	return nil
}

func (kind) DecodeStats(data []byte) (channel.Stats, error) {
	var s stats
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("bm25: statistics: %w", err)
	}
	for i, c := range s {
		if c.Docs < 0 || c.Tokens < 0 {
			return nil, fmt.Errorf("bm25: statistics of channel %d: %d documents, %d tokens", i, c.Docs, c.Tokens)
		}
	}
	return s, nil
}
