package channel

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
)

// Needs says what a kind reads: of the queries when it searches, of the
// chunks when it is built.
type Needs uint8

// What a kind may need.
const (
	// QueryTexts: a search reads the queries' texts.
	QueryTexts Needs = 1 << iota
	// QueryVectors: a search reads the queries' embeddings by the index's
	// model.
	QueryVectors
	// ChunkVectors: a build hands the kind every chunk's vector, so the
	// index needs a model.
	ChunkVectors
	// Statistics: a search scores with the corpus statistics of every
	// shard searched together (Shard.Stats, added up), so a search over
	// shards gathers them before it searches any.
	Statistics
)

// Has reports whether n includes every need of m.
func (n Needs) Has(m Needs) bool { return n&m == m }

// Kind is a kind of channel. Its values are compared with ==: a kind is
// one comparable value (an empty struct, say), registered once.
type Kind interface {
	// Name is the kind's registered name, which files record and
	// windows=NAME fuses as a group: "dense", "lexical".
	Name() string
	// Order places the kind's channels in an index's layout: lower first.
	// The built-in kinds take 0 (dense) and 10 (lexical); a new kind takes
	// more.
	Order() int
	// WholeDoc reports whether the kind has, beside a channel per window,
	// one over the documents' whole texts (the zero window).
	WholeDoc() bool
	// ChannelName names the kind's channel of window w (the zero window:
	// whole documents) in fusion rules, reports and files. Names of
	// different kinds never collide.
	ChannelName(w chunk.Window) string
	// ParseName turns a channel name as a user may write it ("bm25-100")
	// into the channel's name ("bm25-w100"); ok is false when it names no
	// channel of this kind.
	ParseName(s string) (name string, ok bool)
	// Grouped reports whether the kind's group (windows=NAME, and
	// windows=all) fuses its channel of window w.
	Grouped(w chunk.Window) bool
	// Needs says what the kind reads of queries and chunks.
	Needs() Needs
	// Absent is the error for a channel of the kind asked of an index
	// that has none; it says how such an index was built.
	Absent() error
	// In reports whether a manifest records channels of this kind.
	In(m *indexfile.Manifest) bool
	// Settings are the kind's parameters a manifest records, in a form
	// that equal parameters give alike ("analyzer=english 2, k1=0.9,
	// b=0.4"): what shards searched together, and an index reused, must
	// share.
	Settings(m *indexfile.Manifest) Settings
	// Describe returns the Settings a build with params (nil: the kind's
	// defaults) records, as Settings reads them back; it fails on
	// parameters of another type or out of range.
	Describe(params any) (Settings, error)
	// Flags is the table of the kind's build parameters the command line
	// takes (--channel NAME:KEY=VALUE).
	Flags() []Flag
	// ParseParams makes build parameters from settings keyed as Flags
	// (the defaults for those not given); an unknown key or a bad value is
	// an error naming the key ([ParseFlags]).
	ParseParams(s Settings) (any, error)
	// CheckManifest checks the kind's section of a manifest that records
	// the kind (In): its parameters in range, its files one per channel
	// with the rows the channel has. It returns the files the section
	// names, which the caller checks are plain names, each named once.
	CheckManifest(m *indexfile.Manifest) ([]FileRef, error)
	// Default reports whether a build asked for no kind in particular
	// makes the kind's channels: with a model (model true) or without.
	Default(model bool) bool
	// NewBuilder starts the kind's part of one shard's build.
	NewBuilder(cfg BuildConfig) (Builder, error)
	// Open opens the kind's part of a shard, checking every file it
	// reads against the manifest.
	Open(src *Source) (Shard, error)
	// DecodeStats reads statistics as the kind's Stats marshal them to
	// JSON.
	DecodeStats(data []byte) (Stats, error)
}

// BuildConfig is what a kind's builder is made with.
type BuildConfig struct {
	// Windows are the index's windows, in order (the full window with its
	// size resolved).
	Windows []chunk.Window
	// Dims is the length of the chunks' vectors; 0 in a build without a
	// model.
	Dims int
	// Params are the kind's own settings; nil gives its defaults.
	Params any
}

// Builder fills one shard's channels of a kind during a build. A build
// calls Add and AddDoc from one goroutine, in row order.
type Builder interface {
	// Preparer returns what one worker of the build turns texts into
	// Add's input with (each worker has its own); nil when the kind reads
	// no text.
	Preparer() Preparer
	// Add adds a chunk as the next row of window w's channel (the next row
	// of its chunk table): prep is what the Preparer made of its text
	// (nil without one), vec its vector (nil in a build without a model).
	Add(w int, prep any, vec []float32) error
	// AddDoc adds the next document, with what the Preparer made of its
	// whole text.
	AddDoc(prep any) error
	// Finish ends the build and hands what was made to a searchable
	// Shard over src's rows (src.Read is nil).
	Finish(src *Source) (Shard, error)
	// Close frees what the Builder holds unless Finish handed it on; it is
	// safe to call twice.
	Close() error
}

// Preparer turns a text into what a Builder's Add takes. It is used by one
// goroutine.
type Preparer interface {
	Prepare(text string) any
}

// Source is what a kind opens or finishes its part of a shard from.
type Source struct {
	// Where names the shard in messages: its directory, or "the index".
	Where string
	// Manifest is the shard's manifest.
	Manifest *indexfile.Manifest
	// Windows are the index's windows, in manifest order.
	Windows []chunk.Window
	// Rows maps the rows of each window (its chunk table) to documents and
	// byte spans; Docs maps whole documents (row = document).
	Rows []RowMap
	Docs RowMap
	// Read reads the shard's file name, hashing it against sha256 ("":
	// not checked) on its way to fn; nil for a shard just built.
	Read func(name, sha256 string, fn func(r io.Reader, size int64) error) error
}

// RowMap maps the rows of a channel to documents and byte spans.
type RowMap interface {
	Len() int
	// Doc is the row's document, in the order documents rank in among
	// equal scores (their ids' order).
	Doc(row int32) int32
	// Span is the row's byte span in its document's text.
	Span(row int32) (start, end int64)
}

// Dest is where a shard's files are written.
type Dest interface {
	// Create writes file name with fn, atomically with the rest of the
	// index, and returns its sha256.
	Create(name string, fn func(w io.Writer) error) (sha256 string, err error)
}

// Shard is a kind's part of one shard of an index: its channels, in the
// order of Windows(kind, the index's windows).
type Shard interface {
	// Stats returns the shard's statistics for the queries; nil when the
	// kind needs none to rank exactly across shards.
	Stats(q *Queries) (Stats, error)
	// Search returns, for every channel of the kind, each query's k best
	// rows in the canonical order ([Top]). st is the statistics of every
	// shard searched together, added up (nil: this shard's own).
	Search(ctx context.Context, q *Queries, st Stats, k int) ([]Hits, error)
	// Write writes the kind's files into dst and records them, and the
	// kind's parameters, in man. With a nil dst it records the parameters
	// and the files' names only (an index kept in memory).
	Write(dst Dest, man *indexfile.Manifest) error
	// Close frees the shard's resources; it is safe to call twice.
	Close() error
}

// Explainer is a Shard that can say which of a query's terms a row holds
// (the evidence of a lexical hit).
type Explainer interface {
	Explain(q *Queries, query, channel int, rows []int32) ([][]string, error)
}

// Checker is a Shard that may open and yet not be searchable (files made
// by a version of the kind this msrag does not produce); Check says why.
type Checker interface {
	Check() error
}

// Stats is a kind's corpus statistics for a batch of queries, from one
// shard or added over several. It marshals to JSON (the statistics phase
// of a scatter-gather search writes it) and Kind.DecodeStats reads it back.
type Stats interface {
	// Add adds another shard's statistics for the same queries.
	Add(o Stats) error
}

// Windows returns the windows of k's channels in an index of windows ws, in
// layout order: each of ws, then the zero window when k has whole-document
// channels.
func Windows(k Kind, ws []chunk.Window) []chunk.Window {
	out := slices.Clone(ws)
	if k.WholeDoc() {
		out = append(out, chunk.Window{})
	}
	return out
}

// All is the group of every kind's grouped channels (windows=all).
const All = "all"

var (
	regMu sync.RWMutex
	kinds []Kind
)

// Register makes a kind known by its name. It panics when the name is
// empty, "all", taken, or would name a channel of another kind.
func Register(k Kind) {
	regMu.Lock()
	defer regMu.Unlock()
	name := k.Name()
	if name == "" || name == All || strings.ContainsAny(name, " ,:;=+/") {
		panic(fmt.Sprintf("channel: kind name %q", name))
	}
	for _, o := range kinds {
		if o.Name() == name {
			panic(fmt.Sprintf("channel: kind %q registered twice", name))
		}
	}
	kinds = append(kinds, k)
	slices.SortStableFunc(kinds, func(a, b Kind) int { return a.Order() - b.Order() })
}

// Lookup returns the kind registered as name.
func Lookup(name string) (Kind, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	for _, k := range kinds {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

// Kinds returns the registered kinds, in layout order.
func Kinds() []Kind {
	regMu.RLock()
	defer regMu.RUnlock()
	return slices.Clone(kinds)
}

// Names returns the registered kinds' names, in layout order.
func Names() []string {
	ks := Kinds()
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name()
	}
	return out
}

// IsGroup reports whether name is a group windows= may name: "all" or a
// registered kind.
func IsGroup(name string) bool {
	_, ok := Lookup(name)
	return ok || name == All
}

// ParseName turns a channel name as a user may write it into the name of a
// channel of a registered kind.
func ParseName(s string) (string, error) {
	s = strings.TrimSpace(s)
	for _, k := range Kinds() {
		if n, ok := k.ParseName(s); ok {
			return n, nil
		}
	}
	return "", fmt.Errorf("%q is not a window (want a size such as 100 or w100, full, bm25-100, bm25-doc, or a channel of another kind)", s)
}

// KindsOf returns the kinds whose channels the manifest records, in layout
// order; a kind recorded but not registered is an error.
func KindsOf(m *indexfile.Manifest) ([]Kind, error) {
	var out []Kind
	for _, k := range Kinds() {
		if k.In(m) {
			out = append(out, k)
		}
	}
	for name := range m.Channels {
		if _, ok := Lookup(name); !ok {
			return nil, fmt.Errorf("channels of kind %q, which this msrag does not know (known: %s): %w",
				name, strings.Join(Names(), ", "), indexfile.ErrUnknownKind)
		}
	}
	return out, nil
}

// KindOf returns the registered kind one of whose channels is named name
// (as ParseName writes names).
func KindOf(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if n, ok := k.ParseName(name); ok && n == name {
			return k, true
		}
	}
	return nil, false
}
