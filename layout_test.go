package msrag

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
)

func TestLayoutDiff(t *testing.T) {
	have := LayoutOf([]chunk.Window{{Size: 100}, {Size: 200, Stride: 100}, {Size: 512, Truncate: true}}, Dense)
	if have.String() != "w100, w200, full" || have.Index("w200") != 1 || have.Index("w300") != -1 {
		t.Fatalf("names %q, index of w200 %d", have, have.Index("w200"))
	}
	// The full window's size is the model's: a wanted full of size 0 is it.
	same := LayoutOf([]chunk.Window{chunk.Full, {Size: 100}, {Size: 200, Stride: 100}}, Dense)
	if d := have.Diff(same); !d.Same() || !d.Reordered {
		t.Errorf("same channels, another order: %+v", d)
	}
	if d := have.Diff(have[:2]); !d.Covers() || d.Same() || d.Reordered || len(d.Extra) != 1 || d.Extra[0].Name() != "full" {
		t.Errorf("a prefix: %+v", d)
	}
	short := LayoutOf([]chunk.Window{{Size: 100, ShortTail: true}}, Dense)
	if d := have.Diff(short); d.Covers() || d.Missing[0].String() != "w100/100 short tail" {
		t.Errorf("another tail: %+v", d)
	}
	other := LayoutOf([]chunk.Window{{Size: 200}}, Dense)
	if d := have.Diff(other); d.Covers() {
		t.Errorf("another stride: %+v", d)
	}
}

func TestChannelJSON(t *testing.T) {
	l := LayoutOf([]chunk.Window{{Size: 100}, {Size: 200, Stride: 100, ShortTail: true}, {Size: 512, Truncate: true}}, Dense)
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	// The form fusion models have always recorded.
	want := `[{"name":"w100","size":100,"tail":"aligned"},{"name":"w200","size":200,"stride":100,"tail":"short"},{"name":"full","size":512,"truncate":true}]`
	if string(data) != want {
		t.Fatalf("got %s\nwant %s", data, want)
	}
	var back Layout
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if d := back.Diff(l); !d.Same() || d.Reordered || back[2].Window.Size != 512 {
		t.Errorf("round trip: %v", back)
	}
	// No recorded tail is a short tail (files from before tails were recorded).
	if err := json.Unmarshal([]byte(`[{"name":"w16","size":16}]`), &back); err != nil || !back[0].Window.ShortTail {
		t.Errorf("no tail: %v, %+v", err, back)
	}
	for _, tc := range []struct{ in, want string }{
		{`[{"name":"w16","size":32}]`, `name "w16", the window is w32`},
		{`[{"name":"w16","size":16,"kind":"sparse"}]`, `kind "sparse"`},
		{`[{"name":"w-1","size":-1}]`, "size -1"},
		{`[{"name":"w16","size":0}]`, "size 0"},
		{`[{"name":"w16","size":16,"stride":17}]`, "stride 17, want 0 to the size 16"},
		{`[{"name":"w16","size":16,"tail":"long"}]`, `tail "long"`},
	} {
		if err := json.Unmarshal([]byte(tc.in), &back); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
	// Lexical channels, the whole-document one included, read back as they
	// were written (tune writes every channel of an index with them).
	lex := LayoutOf(l.Windows(), Dense, Lexical)
	if data, err = json.Marshal(lex); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("lexical layout %s: %v", data, err)
	}
	if d := back.Diff(lex); !d.Same() || d.Reordered || !back[len(back)-1].WholeDoc() {
		t.Errorf("lexical round trip: %v", back)
	}
	if !strings.Contains(string(data), `{"kind":"lexical","name":"bm25-doc","size":0}`) {
		t.Errorf("bm25-doc written as %s", data)
	}
	// As fusion models recorded it before: with the tail of an aligned window.
	if err := json.Unmarshal([]byte(`[{"kind":"lexical","name":"bm25-doc","size":0,"tail":"aligned"}]`), &back); err != nil || !back[0].WholeDoc() {
		t.Errorf("bm25-doc with a tail: %v, %+v", err, back)
	}
	// The full window's size is the model's; a file may leave it out.
	if err := json.Unmarshal([]byte(`[{"name":"full","truncate":true}]`), &back); err != nil || !back[0].Window.Truncate {
		t.Errorf("full without a size: %v, %+v", err, back)
	}
}
