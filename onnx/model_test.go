package onnx

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinModels(t *testing.T) {
	want := map[string]struct {
		pooling     Pooling
		max         int
		query, pass string
	}{
		"e5-small-v2":            {PoolMean, 512, "query: ", "passage: "},
		"e5-small-v2-int8":       {PoolMean, 512, "query: ", "passage: "},
		"all-minilm-l6-v2":       {PoolMean, 256, "", ""},
		"all-minilm-l6-v2-int8":  {PoolMean, 256, "", ""},
		"bge-small-en-v1.5":      {PoolCLS, 512, "Represent this sentence for searching relevant passages: ", ""},
		"bge-small-en-v1.5-int8": {PoolCLS, 512, "Represent this sentence for searching relevant passages: ", ""},
	}
	ms := BuiltinModels()
	if len(ms) != len(want) {
		t.Fatalf("%d built-in models, want %d", len(ms), len(want))
	}
	for _, m := range ms {
		t.Run(m.Name, func(t *testing.T) {
			w, ok := want[m.Name]
			if !ok {
				t.Fatalf("unexpected model %s", m.Name)
			}
			if m.Pooling != w.pooling || m.MaxTokens != w.max || m.QueryPrefix != w.query || m.PassagePrefix != w.pass {
				t.Errorf("got pooling %s max %d prefixes %q %q, want %+v", m.Pooling, m.MaxTokens, m.QueryPrefix, m.PassagePrefix, w)
			}
			if m.Dims != 384 || !m.Normalize || m.Output != "last_hidden_state" {
				t.Errorf("dims %d normalize %v output %s", m.Dims, m.Normalize, m.Output)
			}
			for _, f := range []string{ModelFile, TokenizerFile} {
				if len(m.SHA256[f]) != 64 {
					t.Errorf("sha256 of %s: %q", f, m.SHA256[f])
				}
			}
			if m.Source == nil || !strings.HasPrefix(m.Source.Maven, "dev.langchain4j:") {
				t.Errorf("source %+v", m.Source)
			}
		})
	}
	if _, ok := Builtin(DefaultModel); !ok {
		t.Fatalf("default model %s is not built in", DefaultModel)
	}
	// Builtin returns a copy.
	m, _ := Builtin(DefaultModel)
	m.SHA256[ModelFile] = "x"
	if m2, _ := Builtin(DefaultModel); m2.SHA256[ModelFile] == "x" {
		t.Fatal("Builtin shares its map with the caller")
	}
}

func TestParseRole(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Role
		err  bool
	}{{"query", Query, false}, {"passage", Passage, false}, {"doc", 0, true}, {"", 0, true}} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRole(tc.in)
			if tc.err {
				if !errors.Is(err, ErrInput) {
					t.Fatalf("ParseRole(%q) error %v, want ErrInput", tc.in, err)
				}
				return
			}
			if err != nil || got != tc.want || got.String() != tc.in {
				t.Fatalf("ParseRole(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func writeModelDir(tb testing.TB, dir string, info ModelInfo, files map[string]string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := WriteModelInfo(dir, info); err != nil {
		tb.Fatal(err)
	}
}

func TestVerifyFiles(t *testing.T) {
	dir := t.TempDir()
	info, _ := Builtin("all-minilm-l6-v2")
	// sha256 of "abc" and of "" (standard test vectors).
	info.SHA256 = map[string]string{
		ModelFile:     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		TokenizerFile: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	}
	writeModelDir(t, dir, info, map[string]string{ModelFile: "abc", TokenizerFile: ""})
	if err := VerifyFiles(dir, info); err != nil {
		t.Fatalf("VerifyFiles: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ModelFile), []byte("abd"), 0o644)
	err := VerifyFiles(dir, info)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), ModelFile) {
		t.Fatalf("changed file: error %v, want ErrChecksum naming %s", err, ModelFile)
	}
	os.WriteFile(filepath.Join(dir, ModelFile), []byte("abc"), 0o644)
	os.Remove(filepath.Join(dir, TokenizerFile))
	if err := VerifyFiles(dir, info); !errors.Is(err, ErrModelFiles) {
		t.Fatalf("missing file: error %v, want ErrModelFiles", err)
	}
}

func TestReadModelInfoErrors(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"not json", "{", "msrag-model.json"},
		{"unknown field", `{"name":"x","dims":3,"max_tokens":8,"pooling":"mean","output":"o","colour":1}`, "colour"},
		{"bad pooling", `{"name":"x","dims":3,"max_tokens":8,"pooling":"weightedmean","output":"o"}`, `pooling "weightedmean"`},
		{"no max tokens", `{"name":"x","dims":3,"pooling":"mean","output":"o"}`, "max_tokens"},
		{"no output", `{"name":"x","dims":3,"max_tokens":8,"pooling":"mean"}`, "output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, InfoFile), []byte(tc.json), 0o644)
			_, err := ReadModelInfo(dir)
			if !errors.Is(err, ErrModelFiles) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrModelFiles mentioning %q", err, tc.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	t.Run("cache from env", func(t *testing.T) {
		t.Setenv(EnvCache, "/x/cache")
		t.Setenv(EnvORTLib, "")
		if got := LibraryPath(); got != "/x/cache/onnxruntime/libonnxruntime.so.1" {
			t.Fatalf("LibraryPath = %s", got)
		}
		if got := ModelsDir(); got != "/x/cache/models" {
			t.Fatalf("ModelsDir = %s", got)
		}
	})
	t.Run("library from env", func(t *testing.T) {
		t.Setenv(EnvORTLib, "/opt/ort/lib.so")
		if got := LibraryPath(); got != "/opt/ort/lib.so" {
			t.Fatalf("LibraryPath = %s", got)
		}
	})
	t.Run("the user's cache by default, from any directory", func(t *testing.T) {
		t.Setenv(EnvCache, "")
		t.Setenv(EnvORTLib, "")
		home := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", home)
		t.Chdir(t.TempDir())
		if got, want := CacheDir(), filepath.Join(home, "msrag"); got != want {
			t.Fatalf("CacheDir = %s, want %s", got, want)
		}
		if got, want := LibraryPath(), filepath.Join(home, "msrag", "onnxruntime", "libonnxruntime.so.1"); got != want {
			t.Fatalf("LibraryPath without the library anywhere = %s, want the cache's %s", got, want)
		}
	})
	t.Run("library installed beside the program", func(t *testing.T) {
		t.Setenv(EnvCache, t.TempDir())
		t.Setenv(EnvORTLib, "")
		exe, err := os.Executable()
		if err != nil {
			t.Skip(err)
		}
		lib := filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "msrag", "libonnxruntime.so.1")
		if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
			t.Skipf("cannot write beside the test binary: %v", err)
		}
		os.WriteFile(lib, []byte("x"), 0o644)
		defer os.RemoveAll(filepath.Dir(lib))
		if got := LibraryPath(); got != lib {
			t.Fatalf("LibraryPath = %s, want %s", got, lib)
		}
	})
	t.Run("beside the program, then the cache, then installed", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv(EnvCache, cache)
		t.Setenv(EnvORTLib, "")
		exe, err := os.Executable()
		if err != nil {
			t.Skip(err)
		}
		beside := filepath.Join(filepath.Dir(exe), "libonnxruntime.so.1")
		inCache := filepath.Join(cache, "onnxruntime", "libonnxruntime.so.1")
		installed := filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib", "msrag", "libonnxruntime.so.1")
		if got := LibraryCandidates(); !slices.Equal(got, []string{beside, inCache, installed}) {
			t.Fatalf("LibraryCandidates = %v", got)
		}
		for _, p := range []string{beside, inCache, installed} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Skipf("cannot write beside the test binary: %v", err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Skipf("cannot write beside the test binary: %v", err)
			}
		}
		defer os.Remove(beside)
		defer os.RemoveAll(filepath.Dir(installed))
		for _, want := range []string{beside, inCache, installed} {
			if got := LibraryPath(); got != want {
				t.Fatalf("LibraryPath = %s, want %s", got, want)
			}
			os.Remove(want)
		}
	})
}

func TestResolveModel(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCache, cache)
	info, _ := Builtin("all-minilm-l6-v2")
	fetched := filepath.Join(cache, "models", "all-minilm-l6-v2")
	writeModelDir(t, fetched, info, nil)
	own := filepath.Join(t.TempDir(), "mine")
	writeModelDir(t, own, info, nil)
	hf := filepath.Join(cache, "models", "hf--org--m")
	writeModelDir(t, hf, info, nil)
	empty := t.TempDir()

	for _, tc := range []struct {
		in, want string
		err      error
		msg      string
	}{
		{"all-minilm-l6-v2", fetched, nil, ""},
		{own, own, nil, ""},
		{"hf:org/m", hf, nil, ""},
		{"e5-small-v2", "", ErrNotFetched, "msrag model fetch e5-small-v2"},
		{"", "", ErrNotFetched, "msrag model fetch e5-small-v2"},
		{"hf:org/other", "", ErrNotFetched, "msrag model fetch hf:org/other"},
		{"no-such-model", "", ErrUnknownModel, "msrag model list"},
		{empty, "", ErrModelFiles, InfoFile},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ResolveModel(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("ResolveModel(%q) error %v, want %v mentioning %q", tc.in, err, tc.err, tc.msg)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ResolveModel(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}
