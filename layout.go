package msrag

import (
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
)

// ChannelKind is a kind of channel (package channel): what a channel of an
// index searches. The built-in kinds are Dense and Lexical; a kind is one
// package and a registration (channel.Register).
type ChannelKind = channel.Kind

// The built-in kinds of channel.
var (
	// Dense is a window's chunks embedded and searched by vector (package
	// channel/dense).
	Dense = dense.Kind
	// Lexical is a window's chunks searched by BM25, and the documents'
	// whole texts (the zero window; package channel/bm25).
	Lexical = bm25.Kind
)

// Channel is one ranked list an index returns per query: a kind of search
// over a window's chunks (channel.Channel).
type Channel = channel.Channel

// Layout is an index's channels, in index order: the position of a channel
// is the position of its hits in ChunkHits (channel.Layout).
type Layout = channel.Layout

// LayoutDiff is how a layout differs from the one wanted
// (channel.LayoutDiff).
type LayoutDiff = channel.LayoutDiff

// DenseChannel is the dense channel of window w.
func DenseChannel(w chunk.Window) Channel { return Channel{Kind: Dense, Window: w} }

// LexicalChannel is the lexical channel of window w; the zero window is the
// whole-document channel (DocLexicalChannel).
func LexicalChannel(w chunk.Window) Channel { return Channel{Kind: Lexical, Window: w} }

// DocLexicalChannel is the lexical channel over the documents' whole texts.
func DocLexicalChannel() Channel { return Channel{Kind: Lexical} }

// LayoutOf is the layout of an index of the windows with channels of the
// kinds given, in the kinds' order (channel.LayoutOf); with no kind, the
// dense windows alone.
func LayoutOf(windows []chunk.Window, kinds ...ChannelKind) Layout {
	if len(kinds) == 0 {
		kinds = []ChannelKind{Dense}
	}
	return channel.LayoutOf(kinds, windows)
}

// containsKind reports whether ks holds k.
func containsKind(ks []channel.Kind, k channel.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// kindIndex returns the position of k in ks, or -1.
func kindIndex(ks []channel.Kind, k channel.Kind) int {
	for i, x := range ks {
		if x == k {
			return i
		}
	}
	return -1
}

// allOf returns every position of l.
func allOf(l Layout) []int {
	out := make([]int, len(l))
	for i := range l {
		out[i] = i
	}
	return out
}
