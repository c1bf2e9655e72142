package channel

import (
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
)

// fakeKind is a kind of its own traits for the registry's checks; it is
// never registered for good.
type fakeKind struct {
	name   string
	prefix string
}

func (k fakeKind) Name() string              { return k.name }
func (fakeKind) Needs() Needs                { return QueryTexts }
func (k fakeKind) Traits() Traits            { return Traits{Order: 99, Prefix: k.prefix} }
func (fakeKind) Params() Params              { return nil }
func (fakeKind) Open(*Source) (Shard, error) { return nil, nil }
func (fakeKind) NewBuilder(Params, BuildConfig) (Builder, error) {
	return nil, nil
}
func (fakeKind) Recorded(*indexfile.Manifest) (*Record, error) { return nil, nil }
func (fakeKind) DecodeStats([]byte) (Stats, error)             { return nil, nil }

// register registers k for the test alone and returns what Register
// panicked with ("" when it took k).
func register(t *testing.T, k Kind) (panicked string) {
	t.Helper()
	regMu.RLock()
	saved := append([]Kind(nil), kinds...)
	regMu.RUnlock()
	t.Cleanup(func() {
		regMu.Lock()
		kinds = saved
		regMu.Unlock()
	})
	defer func() {
		if r := recover(); r != nil {
			panicked = r.(string)
		}
	}()
	Register(k)
	return ""
}

// TestRegisterRefusesNamesThatCollide: a kind's channels are named by its
// prefix, so a prefix taken, or one that does not end in "-" where
// another kind's names could begin with it, is refused when registered.
func TestRegisterRefusesNamesThatCollide(t *testing.T) {
	if p := register(t, fakeKind{"one", "x-"}); p != "" {
		t.Fatalf("a kind of its own prefix: %s", p)
	}
	for _, tc := range []struct {
		k    fakeKind
		want string
	}{
		{fakeKind{"two", "x-"}, `one prefix "x-"`},
		{fakeKind{"three", "y"}, `channel prefix "y"`},
		{fakeKind{"four", "a,b-"}, `channel prefix "a,b-"`},
		{fakeKind{"one", "z-"}, "registered twice"},
	} {
		if p := register(t, tc.k); !strings.Contains(p, tc.want) {
			t.Errorf("%+v: panicked with %q, want %q", tc.k, p, tc.want)
		}
	}
}

// TestTraitsNames: a kind's channels are its prefix and the window's name,
// "doc" for the whole documents, and every spelling a user may write of
// them reads back to that name, of this kind only.
func TestTraitsNames(t *testing.T) {
	lex := Traits{Prefix: "bm25-", WholeDoc: true}
	dense := Traits{FullApart: true}
	w := chunk.Window{Size: 100}
	full := chunk.Window{Size: 512, Truncate: true}
	if got := [...]string{lex.ChannelName(w), lex.ChannelName(full), lex.ChannelName(chunk.Window{}), dense.ChannelName(w), dense.ChannelName(full)}; got != [...]string{"bm25-w100", "bm25-full", "bm25-doc", "w100", "full"} {
		t.Errorf("names %v", got)
	}
	for _, tc := range []struct {
		t        Traits
		in, want string
	}{
		{lex, "bm25-100", "bm25-w100"}, {lex, " bm25-w100 ", "bm25-w100"}, {lex, "bm25-w=100", "bm25-w100"},
		{lex, "bm25-full", "bm25-full"}, {lex, "bm25-doc", "bm25-doc"},
		{dense, "100", "w100"}, {dense, "w100", "w100"}, {dense, "w=100", "w100"}, {dense, "full", "full"},
		{lex, "100", ""}, {lex, "bm25-", ""}, {lex, "bm25-w0100", ""}, {lex, "bm25-=100", ""}, {dense, "doc", ""},
		{dense, "bm25-100", ""}, {dense, "w", ""}, {dense, "w1234567890", ""}, {dense, "w-1", ""},
	} {
		got, ok := tc.t.ParseName(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%+v ParseName(%q) = %q, %v; want %q", tc.t, tc.in, got, ok, tc.want)
		}
	}
	if dense.Grouped(full) || !dense.Grouped(w) || !lex.Grouped(full) {
		t.Error("a kind's group leaves its full window out exactly when FullApart says so")
	}
}
