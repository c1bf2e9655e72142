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
// one comparable value (an empty struct, say), registered once. Its core
// is what it is called, what it reads, how it builds and opens its part of
// a shard; what it is beyond that is data (Traits), and its parameters are
// a value of its own type (Params).
type Kind interface {
	// Name is the kind's registered name, which files record and
	// windows=NAME fuses as a group: "dense", "lexical".
	Name() string
	// Needs says what the kind reads of queries and chunks.
	Needs() Needs
	// Traits says how the kind's channels stand in an index: their place
	// in a layout, their names, the group's channels, which builds make
	// them unasked, and the error of an index without them.
	Traits() Traits
	// Params returns the kind's default build parameters, a value of the
	// kind's own type: its settings, checks, command-line flags and the
	// parameters the flags give (Params.Parse) hang on that type.
	Params() Params
	// NewBuilder starts the kind's part of one shard's build with p, the
	// kind's own parameters (p.Kind() is the kind).
	NewBuilder(p Params, cfg BuildConfig) (Builder, error)
	// Open opens the kind's part of a shard, checking every file it
	// reads against the manifest.
	Open(src *Source) (Shard, error)
	// Recorded reads the kind's section of a manifest: nil when m records
	// no channels of the kind, else the parameters it records as Settings
	// (alike for equal parameters: what shards searched together, and an
	// index reused, must share; what a build with them describes,
	// Params.Settings) and the files it names, which the caller checks
	// are plain names, each named once. A section out of range (a
	// parameter, a file per channel with the channel's rows) is an error
	// naming the field.
	Recorded(m *indexfile.Manifest) (*Record, error)
	// DecodeStats reads statistics as the kind's Stats marshal them to
	// JSON.
	DecodeStats(data []byte) (Stats, error)
}

// Traits are what a kind is beyond its core, as data.
type Traits struct {
	// Order places the kind's channels in an index's layout: lower first.
	// The built-in kinds take 0 (dense) and 10 (lexical); a new kind takes
	// more.
	Order int
	// Prefix starts the name of each of the kind's channels: the prefix
	// and the window's name ("bm25-w100", "bm25-full"), or "doc" for the
	// whole documents ("bm25-doc"). One kind may have none ("w100");
	// another's ends in "-", so that names of different kinds never
	// collide.
	Prefix string
	// WholeDoc says that the kind has, beside a channel per window, one
	// over the documents' whole texts (the zero window).
	WholeDoc bool
	// FullApart says that the kind's group (windows=NAME, and
	// windows=all) leaves its full window's channel out, to be ranked
	// alone (MTEB's way).
	FullApart bool
	// Default says which builds make the kind's channels when asked for
	// no kind in particular.
	Default Builds
	// Absent is the error for a channel of the kind asked of an index
	// that has none; it says how such an index was built.
	Absent error
}

// Builds says which builds make a kind's channels unasked.
type Builds uint8

// Which builds make a kind's channels unasked.
const (
	// BuildsAsked: only a build that asks for the kind.
	BuildsAsked Builds = iota
	// BuildsWithModel: every build with a model.
	BuildsWithModel
	// BuildsWithoutModel: every build without one.
	BuildsWithoutModel
)

// For reports whether a build with a model (model true) or without makes
// the kind's channels unasked.
func (b Builds) For(model bool) bool {
	return b == BuildsWithModel && model || b == BuildsWithoutModel && !model
}

// ChannelName names the kind's channel of window w (the zero window: whole
// documents) in fusion rules, reports and files.
func (t Traits) ChannelName(w chunk.Window) string {
	if w == (chunk.Window{}) {
		return t.Prefix + "doc"
	}
	return t.Prefix + w.Name()
}

// ParseName turns a channel name as a user may write it (the prefix and
// "100", "w100", "w=100", "full", or "doc" for a kind with whole-document
// channels) into the channel's name; ok is false when it names no channel
// of the kind.
func (t Traits) ParseName(s string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), t.Prefix)
	switch {
	case !ok:
		return "", false
	case rest == "full", rest == "doc" && t.WholeDoc:
		return t.Prefix + rest, true
	}
	if r, ok := strings.CutPrefix(rest, "w"); ok {
		rest = strings.TrimPrefix(r, "=")
	}
	if rest == "" || rest[0] == '0' || strings.TrimLeft(rest, "0123456789") != "" || len(rest) > 9 {
		return "", false
	}
	return t.Prefix + "w" + rest, true
}

// Grouped reports whether the kind's group (windows=NAME, and
// windows=all) fuses its channel of window w.
func (t Traits) Grouped(w chunk.Window) bool { return !(t.FullApart && w.Truncate) }

// BuildConfig is what a kind's builder is made with.
type BuildConfig struct {
	// Windows are the index's windows, in order (the full window with its
	// size resolved).
	Windows []chunk.Window
	// Dims is the length of the chunks' vectors; 0 in a build without a
	// model.
	Dims int
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
	if k.Traits().WholeDoc {
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
// empty, "all", taken, or when its channels' names could be another
// kind's: a prefix taken, or one that is neither empty nor ends in "-".
func Register(k Kind) {
	regMu.Lock()
	defer regMu.Unlock()
	name, prefix := k.Name(), k.Traits().Prefix
	if name == "" || name == All || strings.ContainsAny(name, " ,:;=+/") {
		panic(fmt.Sprintf("channel: kind name %q", name))
	}
	if prefix != "" && (!strings.HasSuffix(prefix, "-") || strings.ContainsAny(prefix, " ,:;=+/")) {
		panic(fmt.Sprintf("channel: kind %q: channel prefix %q, want one that ends in \"-\"", name, prefix))
	}
	for _, o := range kinds {
		if o.Name() == name {
			panic(fmt.Sprintf("channel: kind %q registered twice", name))
		}
		if o.Traits().Prefix == prefix {
			panic(fmt.Sprintf("channel: kinds %q and %q name their channels with one prefix %q", o.Name(), name, prefix))
		}
	}
	kinds = append(kinds, k)
	slices.SortStableFunc(kinds, byOrder)
}

// byOrder orders kinds by their place in a layout.
func byOrder(a, b Kind) int { return a.Traits().Order - b.Traits().Order }

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
		if n, ok := k.Traits().ParseName(s); ok {
			return n, nil
		}
	}
	return "", fmt.Errorf("%q is not a window (want a size such as 100 or w100, full, bm25-100, bm25-doc, or a channel of another kind)", s)
}

// KindsOf returns the kinds whose channels the manifest records, in layout
// order; a kind recorded but not registered, or a kind's section it cannot
// read (Kind.Recorded), is an error.
func KindsOf(m *indexfile.Manifest) ([]Kind, error) {
	var out []Kind
	for _, k := range Kinds() {
		r, err := k.Recorded(m)
		if err != nil {
			return nil, fmt.Errorf("%s channels: %w", k.Name(), err)
		}
		if r != nil {
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
		if n, ok := k.Traits().ParseName(name); ok && n == name {
			return k, true
		}
	}
	return nil, false
}
