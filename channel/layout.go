package channel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
)

// Channel is one ranked list an index returns per query: a kind of search
// over a window's chunks (the zero window: the documents' whole texts).
type Channel struct {
	Kind   Kind
	Window chunk.Window
}

// WholeDoc reports whether c is over the documents' whole texts.
func (c Channel) WholeDoc() bool { return c.Window == chunk.Window{} }

// Name names the channel in fusion rules, reports and files ("w100",
// "full", "bm25-w100", "bm25-doc"): its kind's name for it.
func (c Channel) Name() string { return c.Kind.Traits().ChannelName(c.Window) }

// Grouped reports whether the group g ("all" or a kind's name) fuses c.
func (c Channel) Grouped(g string) bool {
	return c.Kind.Traits().Grouped(c.Window) && (g == All || g == c.Kind.Name())
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
// is the position of its hits in a search's results.
type Layout []Channel

// LayoutOf is the layout of an index of the windows ws with channels of the
// kinds given: each kind's channels (Windows) in turn, in the kinds' order.
func LayoutOf(ks []Kind, ws []chunk.Window) Layout {
	ks = slices.Clone(ks)
	slices.SortStableFunc(ks, byOrder)
	var out Layout
	for _, k := range ks {
		for _, w := range Windows(k, ws) {
			out = append(out, Channel{Kind: k, Window: w})
		}
	}
	return out
}

// Of returns the channels of kind k in l (in order).
func (l Layout) Of(k Kind) Layout {
	return slices.DeleteFunc(slices.Clone(l), func(c Channel) bool { return c.Kind != k })
}

// Kinds returns the kinds of l's channels, each once, in order.
func (l Layout) Kinds() []Kind {
	var out []Kind
	for _, c := range l {
		if !slices.Contains(out, c.Kind) {
			out = append(out, c.Kind)
		}
	}
	return out
}

// Has reports whether l has a channel of kind k.
func (l Layout) Has(k Kind) bool {
	return slices.ContainsFunc(l, func(c Channel) bool { return c.Kind == k })
}

// Needs returns what a search of the channels sel (positions in l) reads
// of the queries.
func (l Layout) Needs(sel []int) Needs {
	var n Needs
	for _, i := range sel {
		n |= l[i].Kind.Needs()
	}
	return n
}

// Windows returns the layout's windows, in order.
func (l Layout) Windows() []chunk.Window {
	out := make([]chunk.Window, len(l))
	for i, c := range l {
		out[i] = c.Window
	}
	return out
}

// Names returns the channels' names, in order.
func (l Layout) Names() []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = c.Name()
	}
	return out
}

// String joins the channels' names: "w100, w200, full". Every list of
// channel names in messages comes from here.
func (l Layout) String() string { return strings.Join(l.Names(), ", ") }

// Index returns the position of the channel named name, or -1.
func (l Layout) Index(name string) int {
	return slices.IndexFunc(l, func(c Channel) bool { return c.Name() == name })
}

// Descriptions returns the channels' String forms, sorted: the form in which
// messages show a layout's windows in full.
func (l Layout) Descriptions() []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = c.String()
	}
	slices.Sort(out)
	return out
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
	key := func(c Channel) string { return c.Kind.Name() + " " + c.String() }
	haveKeys, wantKeys := keys(l, key), keys(want, key)
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

func keys(l Layout, key func(Channel) string) []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = key(c)
	}
	return out
}

// Same reports whether the layouts hold the same channels, in any order.
func (d LayoutDiff) Same() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

// Covers reports whether every channel wanted is there.
func (d LayoutDiff) Covers() bool { return len(d.Missing) == 0 }

// defaultKind is the kind a channel recorded without one has: files written
// before other kinds existed held dense windows only.
const defaultKind = "dense"

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

// MarshalJSON writes the channel as {kind, name, size, stride, truncate,
// tail}.
func (c Channel) MarshalJSON() ([]byte, error) {
	w := c.Window
	j := channelJSON{Name: c.Name(), Size: w.Size, Stride: w.Stride, Truncate: w.Truncate, Tail: indexfile.TailOf(w)}
	if c.WholeDoc() {
		j.Tail = ""
	}
	if c.Kind.Name() != defaultKind {
		j.Kind = c.Kind.Name()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, checked: a registered kind,
// a positive size (the full window's may be 0, the whole documents' is 0
// in a kind that has them), a stride within the size, a known tail and the
// name those give. Its errors name the field, not the channel's place: the
// caller adds it.
func (c *Channel) UnmarshalJSON(data []byte) error {
	var j channelJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	name := j.Kind
	if name == "" {
		name = defaultKind
	}
	k, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("kind %q, want one of %s", j.Kind, strings.Join(Names(), ", "))
	}
	// Files written before the whole-document channel was written with no
	// tail gave it "aligned".
	if k.Traits().WholeDoc && j.Size == 0 && j.Stride == 0 && !j.Truncate && (j.Tail == "" || j.Tail == indexfile.TailAligned) {
		if want := k.Traits().ChannelName(chunk.Window{}); j.Name != want {
			return fmt.Errorf("name %q, the whole documents' channel is %s", j.Name, want)
		}
		*c = Channel{Kind: k}
		return nil
	}
	switch {
	case j.Size < 0 || j.Size == 0 && !j.Truncate:
		return fmt.Errorf("size %d, want a positive number", j.Size)
	case j.Stride < 0 || j.Stride > j.Size:
		return fmt.Errorf("stride %d, want 0 to the size %d", j.Stride, j.Size)
	case j.Tail != "" && j.Tail != indexfile.TailAligned && j.Tail != indexfile.TailShort:
		return fmt.Errorf("tail %q, want %s or %s", j.Tail, indexfile.TailAligned, indexfile.TailShort)
	}
	w := chunk.Window{Size: j.Size, Stride: j.Stride, ShortTail: j.Tail != indexfile.TailAligned}
	if j.Truncate {
		w = chunk.Window{Size: j.Size, Truncate: true}
	}
	ch := Channel{Kind: k, Window: w}
	if ch.Name() != j.Name {
		return fmt.Errorf("name %q, the window is %s", j.Name, ch.Name())
	}
	*c = ch
	return nil
}
