package msrag

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/chunk"
)

// ChannelKind is what a channel of an index searches: dense vectors of a
// window's chunks, or BM25 over the same chunks' terms (package lexical).
type ChannelKind uint8

// Kinds of channel.
const (
	// Dense is a window's chunks embedded and searched by vector.
	Dense ChannelKind = iota
	// Lexical is a window's chunks searched by BM25 (the zero window: the
	// documents' whole texts).
	Lexical
)

// String names the kind as a layout file records it.
func (k ChannelKind) String() string {
	switch k {
	case Dense:
		return "dense"
	case Lexical:
		return "lexical"
	}
	return fmt.Sprintf("ChannelKind(%d)", uint8(k))
}

// lexicalPrefix starts the name of every lexical channel: "bm25-w100",
// "bm25-full", "bm25-doc".
const lexicalPrefix = "bm25-"

// docLexicalName is the name of the whole-document lexical channel.
const docLexicalName = lexicalPrefix + "doc"

// Channel is one ranked list an index returns per query: a kind of search
// over a window's chunks.
type Channel struct {
	Kind   ChannelKind
	Window chunk.Window
}

// DenseChannel is the dense channel of window w.
func DenseChannel(w chunk.Window) Channel { return Channel{Kind: Dense, Window: w} }

// LexicalChannel is the lexical channel of window w; the zero window is the
// whole-document channel (DocLexicalChannel).
func LexicalChannel(w chunk.Window) Channel { return Channel{Kind: Lexical, Window: w} }

// DocLexicalChannel is the lexical channel over the documents' whole texts.
func DocLexicalChannel() Channel { return Channel{Kind: Lexical} }

// WholeDoc reports whether c is the whole-document lexical channel.
func (c Channel) WholeDoc() bool { return c.Kind == Lexical && c.Window == chunk.Window{} }

// Name names the channel in fusion rules, reports and files: "w100",
// "full", "bm25-w100", "bm25-doc". Every channel name comes from here.
func (c Channel) Name() string {
	switch {
	case c.WholeDoc():
		return docLexicalName
	case c.Kind == Lexical:
		return lexicalPrefix + c.Window.Name()
	}
	return c.Window.Name()
}

// String describes the channel fully: "w100/50 aligned tail", "full" (the
// full window's size is the model's, so it is left out).
func (c Channel) String() string {
	w := c.Window
	if w.Truncate || c.WholeDoc() {
		return c.Name()
	}
	tail := "aligned tail"
	if w.ShortTail {
		tail = "short tail"
	}
	return fmt.Sprintf("%s/%d %s", c.Name(), w.Step(), tail)
}

// Layout is an index's channels, in index order: the position of a channel
// is the position of its hits in ChunkHits.
type Layout []Channel

// LayoutOf is the dense layout of windows.
func LayoutOf(windows []chunk.Window) Layout {
	out := make(Layout, len(windows))
	for i, w := range windows {
		out[i] = DenseChannel(w)
	}
	return out
}

// layoutOf is the dense layout a manifest records: the one conversion
// between the file's WindowInfo and the Layout.
func layoutOf(ws []WindowInfo) Layout {
	out := make(Layout, len(ws))
	for i, w := range ws {
		out[i] = DenseChannel(windowOf(w))
	}
	return out
}

// Layout returns the index's channels, in index order: the dense windows,
// then, when the index has lexical windows, the lexical channel of each
// window in the same order and the whole-document one. An index without
// dense windows (Index.Dense) has the lexical channels only.
func (ix *Index) Layout() Layout {
	l := layoutOf(ix.man.Windows)
	switch {
	case ix.man.Lexical == nil:
		return l
	case !ix.Dense():
		return l.WithLexical()[len(l):]
	}
	return l.WithLexical()
}

// WithLexical returns the layout of an index with lexical windows and the
// dense channels of l: those, then the lexical channel of each in the same
// order, then the whole-document one.
func (l Layout) WithLexical() Layout {
	out := l.Dense()
	for _, c := range l.Dense() {
		out = append(out, LexicalChannel(c.Window))
	}
	return append(out, DocLexicalChannel())
}

// Lexical returns the lexical channels of l (in order): the layout of an
// index without dense windows whose index with them would be l.
func (l Layout) Lexical() Layout {
	return slices.DeleteFunc(slices.Clone(l), func(c Channel) bool { return c.Kind != Lexical })
}

// Dense returns the dense channels of l (in order).
func (l Layout) Dense() Layout {
	return slices.DeleteFunc(slices.Clone(l), func(c Channel) bool { return c.Kind != Dense })
}

// Windows returns the layout's windows, in order.
func (l Layout) Windows() []chunk.Window {
	return mapSlice(l, func(c Channel) chunk.Window { return c.Window })
}

// Names returns the channels' names, in order.
func (l Layout) Names() []string { return mapSlice(l, Channel.Name) }

// String joins the channels' names: "w100, w200, full". Every list of
// window names in messages comes from here.
func (l Layout) String() string { return strings.Join(l.Names(), ", ") }

// Index returns the position of the channel named name, or -1.
func (l Layout) Index(name string) int {
	return slices.IndexFunc(l, func(c Channel) bool { return c.Name() == name })
}

// LayoutDiff is how a layout differs from the one wanted: the channels it
// lacks, those it has beyond them, and whether the common ones are in
// another order. Channels compare by kind and String (a full window's size
// is the model's, which is compared apart).
type LayoutDiff struct {
	Missing, Extra Layout
	Reordered      bool
}

// Diff compares l (what is there) with want.
func (l Layout) Diff(want Layout) LayoutDiff {
	var d LayoutDiff
	key := func(c Channel) string { return c.Kind.String() + " " + c.String() }
	haveKeys, wantKeys := mapSlice(l, key), mapSlice(want, key)
	var common []string
	for i, k := range wantKeys {
		if !slices.Contains(haveKeys, k) {
			d.Missing = append(d.Missing, want[i])
		}
	}
	for i, k := range haveKeys {
		if slices.Contains(wantKeys, k) {
			common = append(common, k)
		} else {
			d.Extra = append(d.Extra, l[i])
		}
	}
	wantCommon := slices.DeleteFunc(slices.Clone(wantKeys), func(k string) bool { return !slices.Contains(common, k) })
	d.Reordered = !slices.Equal(common, wantCommon)
	return d
}

// Same reports whether the layouts hold the same channels, in any order.
func (d LayoutDiff) Same() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

// Covers reports whether every channel wanted is there.
func (d LayoutDiff) Covers() bool { return len(d.Missing) == 0 }

// Descriptions returns the channels' String forms, sorted: the form in which
// messages show a layout's windows in full.
func (l Layout) Descriptions() []string {
	out := mapSlice(l, Channel.String)
	slices.Sort(out)
	return out
}

// channelJSON is a channel as a file records it (a fusion model's windows).
type channelJSON struct {
	Kind     string `json:"kind,omitempty"` // absent: dense
	Name     string `json:"name"`
	Size     int    `json:"size"`
	Stride   int    `json:"stride,omitempty"`
	Truncate bool   `json:"truncate,omitempty"`
	// Tail is as the index manifest records it ("aligned" or "short";
	// absent: "short").
	Tail string `json:"tail,omitempty"`
}

// MarshalJSON writes the channel as {name, size, stride, truncate, tail}.
func (c Channel) MarshalJSON() ([]byte, error) {
	w := c.Window
	j := channelJSON{Name: c.Name(), Size: w.Size, Stride: w.Stride, Truncate: w.Truncate, Tail: tailOf(w)}
	if c.WholeDoc() {
		j.Tail = ""
	}
	if c.Kind != Dense {
		j.Kind = c.Kind.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, checked: a known kind, a
// positive size (the full window's may be 0), a stride within the size, a
// known tail and the name those give. Its errors name the field, not the
// channel's place: the caller adds it.
func (c *Channel) UnmarshalJSON(data []byte) error {
	var j channelJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	kind := Dense
	switch {
	case j.Kind == Lexical.String():
		kind = Lexical
		// Files written before the whole-document channel was written with
		// no tail gave it "aligned".
		if j.Name == docLexicalName && j.Size == 0 && j.Stride == 0 && !j.Truncate && (j.Tail == "" || j.Tail == tailAligned) {
			*c = DocLexicalChannel()
			return nil
		}
	case j.Kind != "" && j.Kind != Dense.String():
		return fmt.Errorf("kind %q, want %s or %s", j.Kind, Dense, Lexical)
	}
	switch {
	case j.Size < 0 || j.Size == 0 && !j.Truncate:
		return fmt.Errorf("size %d, want a positive number", j.Size)
	case j.Stride < 0 || j.Stride > j.Size:
		return fmt.Errorf("stride %d, want 0 to the size %d", j.Stride, j.Size)
	case j.Tail != "" && j.Tail != tailAligned && j.Tail != tailShort:
		return fmt.Errorf("tail %q, want %s or %s", j.Tail, tailAligned, tailShort)
	}
	w := chunk.Window{Size: j.Size, Stride: j.Stride, ShortTail: j.Tail != tailAligned}
	if j.Truncate {
		w = chunk.Window{Size: j.Size, Truncate: true}
	}
	ch := Channel{Kind: kind, Window: w}
	if ch.Name() != j.Name {
		return fmt.Errorf("name %q, the window is %s", j.Name, ch.Name())
	}
	*c = ch
	return nil
}
