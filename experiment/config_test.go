package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/testkind"
	"github.com/msrag/msrag/report"
)

// TestParseConfigsLexical checks the expansion against a layout with and
// without lexical channels: windows adds every single channel but the full
// window's, rules keep their meaning, and a lexical channel is refused
// where the layout has none.
func TestParseConfigsLexical(t *testing.T) {
	ws := chunk.Sizes(100, 200)
	for _, tc := range []struct {
		lexical bool
		in      string
		want    []string
	}{
		{false, "windows,rrf,oracle", []string{"w100", "w200", "rrf", "oracle"}},
		{true, "windows,rrf,oracle", []string{"w100", "w200", "bm25-w100", "bm25-w200", "bm25-doc", "rrf", "oracle", "oracle:dense", "oracle:lexical"}},
		{false, DefaultConfigs, []string{"w100", "w200", "rrf", "maxp", "full", "oracle"}},
		{true, DefaultConfigs, []string{"w100", "w200", "bm25-w100", "bm25-w200", "bm25-doc", "rrf", "rrf:windows=lexical", "rrf:windows=all", fusion.DefaultHybrid, "maxp", "full", "oracle", "oracle:dense", "oracle:lexical"}},
		{true, "oracle:lexical", []string{"w100", "w200", "bm25-w100", "bm25-w200", "bm25-doc", "oracle:lexical"}},
		{true, "rrf:windows=all,rrf:windows=lexical,bm25-full", []string{"rrf:windows=all", "rrf:windows=lexical", "bm25-full"}},
	} {
		cs, err := ParseConfigs(tc.in, EvalLayout(ws, lexicalKinds(tc.lexical)...))
		if err != nil {
			t.Fatalf("%q (lexical %v): %v", tc.in, tc.lexical, err)
		}
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, tc.want) {
			t.Errorf("%q (lexical %v): %v, want %v", tc.in, tc.lexical, names, tc.want)
		}
	}
	for _, in := range []string{"bm25-w100", "rrf:windows=all", "rrf:windows=100+bm25-doc", "oracle:lexical"} {
		if _, err := ParseConfigs(in, EvalLayout(ws)); err == nil || !strings.Contains(err.Error(), "no") {
			t.Errorf("%q without lexical channels: %v", in, err)
		}
	}
}

// TestParseConfigsHybridOfOtherKinds: over a layout of several kinds
// without the lexical kind, hybrid adds the layout's default fusion
// (fusion.Default), and every rule it adds selects channels of the
// layout.
func TestParseConfigsHybridOfOtherKinds(t *testing.T) {
	l := EvalLayout(chunk.Sizes(100, 200), dense.Kind, testkind.Kind)
	cs, err := ParseConfigs("hybrid", l)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
		if _, err := c.Fusion.Select(l); err != nil {
			t.Errorf("%s over %s: %v", c.Name, l, err)
		}
	}
	if want := []string{"rrf:windows=overlap", "rrf:windows=all", "combsum:norm=zscore,windows=all"}; !slices.Equal(names, want) {
		t.Errorf("hybrid over %s: %v, want %v", l, names, want)
	}
}

// TestChannelKinds checks which kinds of channel each configuration is
// reported as ranking from.
func TestChannelKinds(t *testing.T) {
	l := EvalLayout(chunk.Sizes(100, 200), dense.Kind, bm25.Kind)
	cs, err := ParseConfigs("windows,rrf,rrf:windows=lexical,rrf:windows=all,rrf:windows=100+bm25-doc,full,oracle", l)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"w100": report.ChannelsDense, "bm25-w100": report.ChannelsLexical, "bm25-doc": report.ChannelsLexical,
		"rrf": report.ChannelsDense, "rrf:windows=lexical": report.ChannelsLexical, "rrf:windows=all": report.ChannelsHybrid,
		"rrf:windows=100+bm25-doc": report.ChannelsHybrid, "full": report.ChannelsDense, "oracle": report.ChannelsHybrid,
		"oracle:dense": report.ChannelsDense, "oracle:lexical": report.ChannelsLexical}
	for _, c := range cs {
		if w, ok := want[c.Name]; ok {
			if got := channelKinds(c, l); got != w {
				t.Errorf("%s: channels %q, want %q", c.Name, got, w)
			}
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("configurations missing: %v", want)
	}
}

// lexicalKinds are the dense kind and, when lexical is set, the lexical one.
func lexicalKinds(lexical bool) []msrag.ChannelKind {
	if lexical {
		return []msrag.ChannelKind{dense.Kind, bm25.Kind}
	}
	return []msrag.ChannelKind{dense.Kind}
}
