package embed

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/msrag/msrag/tokenizer"
)

// fake is an embedder that only says its name and origin.
type fake struct {
	name   string
	origin Origin
}

func (f fake) Spec() Spec                                               { return Spec{Name: f.name} }
func (f fake) Tokenizer() *tokenizer.Tokenizer                          { return nil }
func (f fake) Close() error                                             { return nil }
func (f fake) Origin() Origin                                           { return f.origin }
func (f fake) Embed(context.Context, []string, Role) ([]float32, error) { return nil, nil }
func (f fake) EmbedChunks(context.Context, []Chunk, Role) ([]float32, error) {
	return nil, nil
}

// withKinds runs the test with a registry of its own.
func withKinds(t *testing.T, ks ...Kind) {
	kindsMu.Lock()
	saved := kinds
	kinds = map[string]Kind{}
	kindsMu.Unlock()
	t.Cleanup(func() { kindsMu.Lock(); kinds = saved; kindsMu.Unlock() })
	for _, k := range ks {
		Register(k)
	}
}

// kind is a test kind that claims the names with its prefix (none: the
// default) and opens a fake that records the name and the options' extra.
func kind(name, prefix string) Kind {
	k := Kind{Name: name,
		Open: func(_ context.Context, n string, o Options) (Embedder, error) {
			x, _ := ExtraOf[string](o)
			return fake{name: n, origin: Origin{Kind: name, Params: `{"n":"` + n + `"}`, Access: x}}, nil
		},
		Reopen: func(_ context.Context, or Origin, o Options) (Embedder, error) {
			x, _ := ExtraOf[string](o)
			return fake{name: "reopened " + or.Params, origin: Origin{Kind: name, Params: or.Params, Access: x}}, nil
		}}
	if prefix != "" {
		k.Claims = func(n string) bool { return strings.HasPrefix(n, prefix) }
	}
	return k
}

func TestOpenByClaim(t *testing.T) {
	withKinds(t, kind("local", ""), kind("srv", "srv:"))
	ctx := context.Background()
	for name, want := range map[string]string{"srv:http://x": "srv", "e5-small-v2": "local", "./dir": "local"} {
		e, err := Open(ctx, name, Options{Extra: []any{1, "extra"}})
		if err != nil {
			t.Fatal(err)
		}
		o, ok := OriginOf(e)
		if !ok || o.Kind != want || e.Spec().Name != name || o.Access != "extra" {
			t.Errorf("%s: opened %+v by %s, want kind %s with the extra option", name, e, o.Kind, want)
		}
	}
	e, err := Reopen(ctx, Origin{Kind: "srv", Params: `{"n":"a"}`}, Options{})
	if err != nil || e.Spec().Name != `reopened {"n":"a"}` {
		t.Errorf("reopen: %v, %v", e, err)
	}
	if got := Kinds(); strings.Join(got, ",") != "local,srv" {
		t.Errorf("kinds %v", got)
	}
}

func TestUnknownAndAmbiguous(t *testing.T) {
	withKinds(t, kind("a", "x:"), kind("b", "x:y"))
	ctx := context.Background()
	if _, err := Open(ctx, "plain", Options{}); !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), "registered: a, b") {
		t.Errorf("a name no kind claims, without a default: %v", err)
	}
	if _, err := Open(ctx, "x:y", Options{}); err == nil || !strings.Contains(err.Error(), "claimed by kinds a and b") {
		t.Errorf("a name two kinds claim: %v", err)
	}
	if _, err := Reopen(ctx, Origin{Kind: "gone"}, Options{}); !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("an origin of an unregistered kind: %v", err)
	}
}

func TestRegisterRefuses(t *testing.T) {
	withKinds(t, kind("a", ""))
	for name, k := range map[string]Kind{
		"taken name":     kind("a", "p:"),
		"second default": kind("b", ""),
		"no opener":      {Name: "c", Claims: func(string) bool { return false }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			Register(k)
		}()
	}
}
