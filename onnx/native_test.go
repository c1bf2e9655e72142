package onnx

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTensorsArePinned: ort.NewTensor hands the Go buffer it is given to ONNX
// Runtime, which keeps the pointer until the tensor is destroyed; cgo allows
// that of pinned memory only, and no run-time check sees it (the pointer is
// stored by C code). So every tensor of the package is made by newTensor,
// which pins its buffer: no other function may call ort.NewTensor, nor
// ort.NewEmptyTensor (whose buffer, made inside it, is never pinned).
func TestTensorsArePinned(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "ort" {
					return true
				}
				switch sel.Sel.Name {
				case "NewTensor":
					if fn.Name.Name == "newTensor" && fn.Recv == nil {
						calls++
						return true
					}
				case "NewEmptyTensor":
				default:
					return true
				}
				t.Errorf("%s: %s calls ort.%s: make tensors with newTensor, which pins their buffers", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name)
				return true
			})
		}
	}
	if calls != 1 {
		t.Errorf("newTensor calls ort.NewTensor %d times, want once", calls)
	}
}

// TestDroppedEmbedderIsClosed: an Embedder that becomes unreachable without
// Close has its ONNX Runtime sessions destroyed once it is collected.
func TestDroppedEmbedderIsClosed(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	ss := openAndDrop(t, dir)
	deadline := time.Now().Add(10 * time.Second)
	for !allClosed(ss) {
		if time.Now().After(deadline) {
			t.Fatal("the sessions of an Embedder dropped without Close are still open after 10 s of collections")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// openAndDrop opens the model in dir, embeds a text, and returns the
// Embedder's sessions but not the Embedder, which no one refers to then.
func openAndDrop(t *testing.T, dir string) []*session {
	e, err := Open(dir, Options{Sessions: 2, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(t.Context(), []string{"a text"}, Passage); err != nil {
		t.Fatal(err)
	}
	return e.sessions
}

// allClosed reports whether every session of ss is closed.
func allClosed(ss []*session) bool {
	for _, s := range ss {
		s.mu.Lock()
		open := s.ort != nil
		s.mu.Unlock()
		if open {
			return false
		}
	}
	return true
}
