package msrag

import (
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
)

// ChannelKind is a kind of channel (package channel): what a channel of an
// index searches. A kind is one package and a registration
// (channel.Register); package channels registers the built-in ones.
type ChannelKind = channel.Kind

// Channel is one ranked list an index returns per query: a kind of search
// over a window's chunks (channel.Channel).
type Channel = channel.Channel

// Layout is an index's channels, in index order: the position of a channel
// is the position of its hits in ChunkHits (channel.Layout).
type Layout = channel.Layout

// LayoutDiff is how a layout differs from the one wanted
// (channel.LayoutDiff).
type LayoutDiff = channel.LayoutDiff

// LayoutOf is the layout of an index of the windows with channels of the
// kinds given, in the kinds' order (channel.LayoutOf).
func LayoutOf(windows []chunk.Window, kinds ...ChannelKind) Layout {
	return channel.LayoutOf(kinds, windows)
}

// allOf returns every position of l.
func allOf(l Layout) []int {
	out := make([]int, len(l))
	for i := range l {
		out[i] = i
	}
	return out
}
