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
	"strings"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
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

func (kind) Name() string   { return Name }
func (kind) Order() int     { return 10 }
func (kind) WholeDoc() bool { return true }

// ChannelName is "bm25-" and the window's name, "bm25-doc" for the whole
// documents.
func (kind) ChannelName(w chunk.Window) string {
	if w == (chunk.Window{}) {
		return prefix + "doc"
	}
	return prefix + w.Name()
}

// ParseName reads "bm25-doc" and "bm25-" with a window as the dense kind
// writes it ("bm25-100", "bm25-w100", "bm25-full").
func (kind) ParseName(s string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), prefix)
	if !ok {
		return "", false
	}
	if rest == "doc" || rest == "full" {
		return prefix + rest, true
	}
	if n, ok := sizeName(rest); ok {
		return prefix + n, true
	}
	return "", false
}

// sizeName reads "100", "w100" or "w=100" as "w100".
func sizeName(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "w"), "=")
	if s == "" || s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" || len(s) > 9 {
		return "", false
	}
	return "w" + s, true
}

// Grouped: windows=lexical fuses every lexical channel.
func (kind) Grouped(chunk.Window) bool { return true }

func (kind) Needs() channel.Needs { return channel.QueryTexts | channel.Statistics }

func (kind) Absent() error {
	return fmt.Errorf("it was built before they existed or with --no-lexical: %w", ErrNone)
}

func (kind) In(m *indexfile.Manifest) bool { return m.Lexical != nil }

// Settings are the analyzer (name and version) and the BM25 parameters.
func (kind) Settings(m *indexfile.Manifest) channel.Settings { return settingsOf(m.Lexical) }

func settingsOf(l *indexfile.LexicalInfo) channel.Settings {
	return channel.Settings{
		{Key: "analyzer", Value: l.Analyzer.Name + " " + l.Analyzer.Version},
		{Key: "k1", Value: fmt.Sprint(l.K1)},
		{Key: "b", Value: fmt.Sprint(l.B)},
	}
}

// Describe is what a build with params records.
func (kind) Describe(params any) (channel.Settings, error) {
	c, err := configOf(params)
	if err != nil {
		return nil, err
	}
	return settingsOf(c.Record()), nil
}

// configOf returns a build's configuration (nil: DefaultConfig), checked.
func configOf(params any) (Config, error) {
	c := DefaultConfig()
	if params != nil {
		p, ok := params.(Config)
		if !ok {
			return Config{}, fmt.Errorf("bm25: parameters of type %T, want bm25.Config", params)
		}
		c = p
	}
	if err := c.Check(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Flags: the analyzer, k1 and b (the command line's --lexical-analyzer,
// --bm25-k1 and --bm25-b).
func (kind) Flags() []channel.Flag {
	return []channel.Flag{
		{Key: "analyzer", Default: "english", Alias: "lexical-analyzer",
			Usage: "analyzer of the lexical windows: english (stop words, Snowball stemming) or none (lower case only)"},
		{Key: "k1", Default: fmt.Sprint(lexical.DefaultBM25.K1), Alias: "bm25-k1", Usage: fmt.Sprintf("BM25 k1 of the lexical windows (0 to %d)", lexical.MaxK1)},
		{Key: "b", Default: fmt.Sprint(lexical.DefaultBM25.B), Alias: "bm25-b", Usage: "BM25 b of the lexical windows (0 to 1)"},
	}
}

// ParseParams reads analyzer, k1 and b, each in range (the bounds of
// lexical.BM25.Validate, said key by key).
func (k kind) ParseParams(s channel.Settings) (any, error) {
	c := DefaultConfig()
	err := channel.ParseFlags(s, k.Flags(), func(key, v string) error {
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

// CheckManifest checks the lexical section: a file per window with as
// many rows as the window has vectors, the document file with a row per
// document, parameters in range.
func (kind) CheckManifest(m *indexfile.Manifest) ([]channel.FileRef, error) {
	l := m.Lexical
	switch {
	case l.Analyzer.Name == "":
		return nil, errors.New("lexical.analyzer: no name")
	case !(l.K1 >= 0) || !(l.B >= 0 && l.B <= 1):
		return nil, fmt.Errorf("lexical: k1 %v, b %v: want k1 >= 0 and b from 0 to 1", l.K1, l.B)
	case len(l.Windows) != len(m.Windows):
		return nil, fmt.Errorf("lexical.windows: %d files for %d windows", len(l.Windows), len(m.Windows))
	case l.Doc.Rows != m.Docs:
		return nil, fmt.Errorf("lexical.doc: %d rows for %d documents", l.Doc.Rows, m.Docs)
	}
	var files []channel.FileRef
	for i, f := range l.Windows {
		field := fmt.Sprintf("lexical.windows[%d]", i)
		if f.Rows != m.Windows[i].Vectors {
			return nil, fmt.Errorf("%s: %d rows, the window has %d vectors", field, f.Rows, m.Windows[i].Vectors)
		}
		files = append(files, channel.FileRef{Field: field + ".file", Name: f.File})
	}
	return append(files, channel.FileRef{Field: "lexical.doc.file", Name: l.Doc.File}), nil
}

// Default: a build without a model makes lexical windows unless asked for
// other kinds; one with a model, only when asked.
func (kind) Default(model bool) bool { return !model }

// Channel is the configuration of a build's lexical windows with c.
func (c Config) Channel() channel.Config { return channel.Config{Kind: Kind, Params: c} }

// NewBuilder starts a BM25 index per window and one over whole documents.
func (kind) NewBuilder(cfg channel.BuildConfig) (channel.Builder, error) {
	c, err := configOf(cfg.Params)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	b := &builder{cfg: c, windows: make([]*lexical.Builder, len(cfg.Windows)), specs: cfg.Windows}
	for i := range b.windows {
		b.windows[i] = &lexical.Builder{}
	}
	return b, nil
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
