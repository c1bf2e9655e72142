package fusion_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/testkind"
)

var testWindows = chunk.Sizes(16, 32, 64)

// layoutOf is the layout of an index of the windows with channels of the
// kinds given.
func layoutOf(windows []chunk.Window, kinds ...channel.Kind) channel.Layout {
	return channel.LayoutOf(kinds, windows)
}

func mustFusion(tb testing.TB, s string) fusion.Fusion {
	tb.Helper()
	f, err := fusion.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// TestParse reads every form of the fusion syntax and writes it back
// in its canonical form, which reads back the same.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"rrf", "rrf"},
		{"RRF", "rrf"},
		{"rrf:c=1,base=0", "rrf"},
		{"rrf:base=1,c=60", "rrf:c=60,base=1"},
		{"rrf:cap=3,weights=500:2/100:1/200:0.5", "rrf:cap=3,weights=100:1/200:0.5/500:2"},
		{"rrf=100+200", "rrf:windows=100+200"},
		{"maxp=w100+full", "maxp:windows=100+full"},
		{"docrrf:c=60,base=1", "docrrf:c=60,base=1"},
		{"combsum:norm=minmax", "combsum:norm=minmax"},
		{"combmnz:norm=zscore,adapt=entropy:0.3", "combmnz:norm=zscore,adapt=entropy:0.3"},
		{"linear:score=100:1/full:0.5,rank=200:0.25,votes=100:1", "linear:score=100:1/full:0.5,rank=200:0.25,votes=100:1"},
		{"w=100", "w100"},
		{"w100", "w100"},
		{"full", "full"},
		{"bm25-w100", "bm25-w100"},
		{"BM25-100", "bm25-w100"},
		{"bm25-full", "bm25-full"},
		{"bm25-doc", "bm25-doc"},
		{"rrf:windows=all", "rrf:windows=all"},
		{"maxp:windows=lexical", "maxp:windows=lexical"},
		{"rrf:windows=dense", "rrf:windows=dense"},
		{"rrf:windows=100+bm25-100+bm25-doc,weights=bm25-doc:0.5/100:2", "rrf:windows=100+bm25-w100+bm25-doc,weights=100:2/bm25-doc:0.5"},
		{"linear:score=bm25-w100:1/100:0.5", "linear:score=100:0.5/bm25-w100:1"},
		{"rrf:balance=kinds,windows=all", "rrf:windows=all,balance=kinds"},
		{"combsum:norm=zscore,balance=kinds,weights=100:2,windows=all", "combsum:norm=zscore,windows=all,weights=100:2,balance=kinds"},
		{"combsum:norm=minmax,windows=all,adapt=kind-peak:0.1", "combsum:norm=minmax,windows=all,adapt=kind-peak:0.1"},
		{"rrf:adapt=consensus:2,windows=all", "rrf:windows=all,adapt=consensus:2"},
		{"rrf:weights=lexical:1.5,windows=all", "rrf:windows=all,weights=lexical:1.5"},
		{"rrf:windows=all,weights=lexical:2/bm25-doc:0.5/dense:0.75", "rrf:windows=all,weights=bm25-doc:0.5/dense:0.75/lexical:2"},
		{fusion.DefaultHybrid, fusion.DefaultHybrid},
	} {
		f, err := fusion.Parse(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := f.String(); got != tc.want {
			t.Errorf("%q reads back as %q, want %q", tc.in, got, tc.want)
		}
		if g, err := fusion.Parse(f.String()); err != nil || g.String() != f.String() {
			t.Errorf("%q: the canonical form %q does not read back (%v)", tc.in, f.String(), err)
		}
	}
	if f, _ := fusion.Parse("w100"); f.Method != fuse.MethodMaxP || len(f.Channels) != 1 || f.Channels[0] != "w100" {
		t.Errorf("w100 is %+v", f)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"bogus", `unknown rule "bogus"`},
		{"rrf:c=-1", "must not be negative"},
		{"rrf:x=1", `unknown parameter "x"`},
		{"rrf:c", "want NAME=VALUE"},
		{"maxp:weights=100:2", "maxp takes no weights"},
		{"maxp:adapt=top:0.1", "maxp takes no weights"},
		{"maxp:windows=all,balance=kinds", "maxp takes no weights"},
		{"rrf:balance=windows", "want kinds"},
		{"combsum:cap=2", "cap is a parameter of rrf"},
		{"rrf:norm=minmax", "norm is a parameter of combsum"},
		{"combsum:c=60", "c and base are parameters of rrf and docrrf"},
		{"rrf:score=100:1", "coefficients of linear"},
		{"rrf:weights=100:-1", "must be finite and not negative"},
		{"rrf:weights=100:1/100:2", "window w100 given twice"},
		{"rrf:windows=100+100", "window w100 given twice"},
		{"rrf:windows=abc", "is not a window"},
		{"rrf:windows=bm25-x", "is not a window"},
		{"rrf:windows=all+100", "is not a window"},
		{"rrf:windows=bm25-bm25-100", "is not a window"},
		{"rrf:adapt=bogus:1", "unknown feature"},
		{"rrf:adapt=top:0", "must be a positive number"},
		{"rrf:adapt=kind-bogus:1", "kind-top, kind-peak"},
		{"rrf:adapt=consensus:-2", "must be a positive number"},
		{"maxp:adapt=consensus:2", "maxp takes no weights"},
		{"linear+router", "fusion model file"},
		{"rrf:weights=all:2", "is not a window"},
		{"linear:score=lexical:1", "is not a window"},
		{"rrf:weights=lexical:1/lexical:2", "window lexical given twice"},
		{"rrf:windows=all,weights=lexical:-1", "must be finite and not negative"},
		{"rrf:windows=all,weights=lexical:NaN", "is not a finite number"},
		{"rrf:windows=all,weights=lexical:+Inf", "is not a finite number"},
		{"rrf:windows=all,weights=lexical:", "is not a finite number"},
		{"rrf:windows=all,weights=lexical", "want WINDOW:VALUE"},
		{"rrf:windows=all,weights=bogus:2", "is not a window"},
		{"maxp:windows=all,weights=lexical:2", "maxp takes no weights"},
	} {
		_, err := fusion.Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

func TestSelect(t *testing.T) {
	windows := []chunk.Window{{Size: 100}, {Size: 200}, {Size: 507, Truncate: true}}
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"rrf", []int{0, 1}, ""},
		{"rrf:windows=200+full", []int{1, 2}, ""},
		{"full", []int{2}, ""},
		{"w300", nil, "the index has no window w300"},
		{"rrf:windows=100,weights=200:2", nil, "weight for window w200, which it does not fuse"},
		{"linear:score=full:1", nil, "weight for window full, which it does not fuse"},
		{"rrf:weights=lexical:2", nil, "weight for window lexical, which it does not fuse"},
		{"rrf:weights=dense:2", []int{0, 1}, ""},
	} {
		f, err := fusion.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := f.Select(layoutOf(windows, dense.Kind))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(sel) != len(tc.want) || (len(sel) > 0 && sel[0] != tc.want[0]) {
			t.Errorf("%s: windows %v, %v; want %v", tc.in, sel, err, tc.want)
		}
	}
}

// FuzzParse: whatever Parse accepts writes back in a form that
// reads back to the same rule, and passes validation again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"rrf", "rrf:c=60,base=1", "combsum:norm=minmax", "w100", "full", "rrf=100+200",
		"rrf:weights=100:1/200:0.5", "linear:score=100:1/full:0.5,rank=200:0.25,votes=100:1", "combmnz:norm=zscore,adapt=entropy:0.3", "rrf:cap=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fu, err := fusion.Parse(s)
		if err != nil {
			return
		}
		text := fu.String()
		back, err := fusion.Parse(text)
		if err != nil {
			t.Fatalf("%q: its form %q does not read back: %v", s, text, err)
		}
		if back.String() != text {
			t.Fatalf("%q: %q reads back as %q", s, text, back.String())
		}
		if err := back.Rule.Validate(); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	})
}

// TestDefaultHybridOverOtherKinds: an index of several kinds ranks by
// DefaultHybrid, the parameter-free CombSUM of every channel's z-scores,
// with or without a lexical kind. A hybrid rule that weighs the lexical kind
// by its name (the default before) is used less that weight on an index of
// several kinds without it (Fusion.For), where the rule itself is refused
// for weighing a kind it does not fuse.
func TestDefaultHybridOverOtherKinds(t *testing.T) {
	if fusion.DefaultHybrid != "combsum:norm=zscore,windows=all" {
		t.Errorf("DefaultHybrid = %q, want combsum:norm=zscore,windows=all (the choice of docs/results.md, \"Fusion across kinds\")", fusion.DefaultHybrid)
	}
	with := layoutOf(testWindows, dense.Kind, bm25.Kind, testkind.Kind)
	without := layoutOf(testWindows, dense.Kind, testkind.Kind)
	for _, l := range []channel.Layout{with, without} {
		f := fusion.Default(l)
		if f.String() != fusion.DefaultHybrid {
			t.Errorf("default fusion of %s: %s, want %s", l, f, fusion.DefaultHybrid)
		}
		if sel, err := f.Select(l); err != nil || len(sel) != len(l) {
			t.Errorf("default fusion %s of %s selects %v, %v; want every channel", f, l, sel, err)
		}
	}
	weighed := mustFusion(t, "rrf:windows=all,weights=lexical:1.5,adapt=kind-top:1")
	if got := weighed.For(with); !reflect.DeepEqual(got, weighed) {
		t.Errorf("%s for %s = %s, want it unchanged", weighed, with, got)
	}
	if _, err := weighed.Select(without); err == nil {
		t.Fatalf("%s selects the channels of %s, which has no lexical kind", weighed, without)
	}
	if got, want := weighed.For(without), mustFusion(t, "rrf:windows=all,adapt=kind-top:1"); !reflect.DeepEqual(got, want) {
		t.Errorf("%s for %s = %+v, want %+v", weighed, without, got, want)
	}
	if weighed.Weights["lexical"] != 1.5 {
		t.Errorf("For changed the rule it was given: %s", weighed)
	}
}

// TestHybridReadsBack: the typed default and its text form are one rule:
// Parse of DefaultHybrid gives Hybrid, field for field, and Default of a
// layout of several kinds is Hybrid itself.
func TestHybridReadsBack(t *testing.T) {
	parsed := mustFusion(t, fusion.DefaultHybrid)
	if !reflect.DeepEqual(parsed, fusion.Hybrid()) {
		t.Errorf("Parse(%q) = %+v, Hybrid() = %+v", fusion.DefaultHybrid, parsed, fusion.Hybrid())
	}
	with := layoutOf(testWindows, dense.Kind, bm25.Kind)
	if f := fusion.Default(with); !reflect.DeepEqual(f, parsed) {
		t.Errorf("Default(%s) = %+v, want %+v", with, f, parsed)
	}
}
