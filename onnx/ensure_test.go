package onnx

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeMvn puts on PATH an mvn that records each run in a counter file,
// then runs script (a shell fragment; $out is the -DoutputDirectory), and
// returns the counter file.
func fakeMvn(t *testing.T, script string) string {
	t.Helper()
	bin := t.TempDir()
	count := filepath.Join(bin, "runs")
	sh := "#!/bin/sh\necho run >> '" + count + "'\nout=\nfor a in \"$@\"; do case $a in -DoutputDirectory=*) out=${a#-DoutputDirectory=};; esac; done\n" + script + "\n"
	if err := os.WriteFile(filepath.Join(bin, "mvn"), []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	return count
}

// runs returns how many times the fake mvn ran.
func runs(t *testing.T, count string) int {
	data, err := os.ReadFile(count)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "run\n")
}

// writeJar writes a jar holding the files of the fetched model name under the
// entry names its Maven source gives.
func writeJar(t *testing.T, name string) string {
	t.Helper()
	dir := fetchedModel(t, name)
	info, _ := Builtin(name)
	jar := filepath.Join(t.TempDir(), name+".jar")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for entry, file := range map[string]string{info.Source.ModelEntry: ModelFile, info.Source.TokenizerEntry: TokenizerFile} {
		w, err := zw.Create(entry)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jar, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return jar
}

// TestEnsureModelFetchesOnce checks that concurrent first uses of a built-in
// model fetch it once (the others wait on the entry's lock and find it
// present), and that a later use runs no fetch.
func TestEnsureModelFetchesOnce(t *testing.T) {
	const name = "all-minilm-l6-v2-int8"
	jar := writeJar(t, name)
	count := fakeMvn(t, "sleep 1; mkdir -p \"$out\"; cp '"+jar+"' \"$out/\"")
	t.Setenv(EnvOffline, "")
	root := t.TempDir()
	var wg sync.WaitGroup
	dirs, errs := make([]string, 4), make([]error, 4)
	var logs [4]bytes.Buffer
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = EnsureModel(context.Background(), name, FetchOptions{Dir: root, Log: &logs[i]})
		}()
	}
	wg.Wait()
	want := filepath.Join(root, name)
	for i := range dirs {
		if errs[i] != nil || dirs[i] != want {
			t.Fatalf("use %d: %q, %v; want %s", i, dirs[i], errs[i], want)
		}
	}
	if n := runs(t, count); n != 1 {
		t.Fatalf("mvn ran %d times for 4 concurrent first uses, want 1", n)
	}
	info, _ := Builtin(name)
	if !Present(want, info) {
		t.Fatalf("the model is not whole after the fetch")
	}
	fetchLines := 0
	for i := range logs {
		fetchLines += strings.Count(logs[i].String(), "fetching it (first use)")
	}
	if fetchLines != 1 {
		t.Errorf("%d first-use lines in the logs, want 1", fetchLines)
	}
	if _, err := EnsureModel(context.Background(), name, FetchOptions{Dir: root}); err != nil || runs(t, count) != 1 {
		t.Fatalf("a use after the fetch: %v, mvn runs %d", err, runs(t, count))
	}
}

// TestEnsureModelRefusals checks the errors of a model that cannot be had:
// offline (flag or environment), no mvn (PATH without it, and PATH empty with
// no mvn in the standard directories is not tested: this machine may have
// one), mvn failing, an unknown name.
func TestEnsureModelRefusals(t *testing.T) {
	ctx := context.Background()
	t.Setenv(EnvOffline, "")
	for _, tc := range []struct {
		name, model string
		offline     bool
		env, mvn    string // $MSRAG_OFFLINE; the fake mvn's script ("" : no mvn on PATH)
		err         error
		msg         []string
	}{
		{"offline flag", "e5-small-v2", true, "", "exit 0", ErrOffline, []string{"--offline", "msrag model fetch e5-small-v2"}},
		{"offline env", "e5-small-v2", false, "1", "exit 0", ErrOffline, []string{"MSRAG_OFFLINE", "msrag model fetch e5-small-v2"}},
		{"no mvn", "e5-small-v2", false, "", "", ErrFetch, []string{"mvn (Maven) is not on PATH", "apt-get install maven"}},
		{"mvn fails", "e5-small-v2", false, "", "echo '[ERROR] Failed to execute goal: Could not resolve dev.langchain4j -> [Help 1]'; echo '[ERROR] '; echo '[ERROR] To see the full stack trace'; exit 1",
			ErrFetch, []string{"dependency:copy", "Could not resolve dev.langchain4j"}},
		{"unknown", "no-such-model", false, "", "exit 0", ErrUnknownModel, []string{"e5-small-v2", "all-minilm-l6-v2-int8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvOffline, tc.env)
			if tc.mvn != "" {
				fakeMvn(t, tc.mvn)
			} else {
				t.Setenv("PATH", t.TempDir())
			}
			root := t.TempDir()
			_, err := EnsureModel(ctx, tc.model, FetchOptions{Dir: root, Offline: tc.offline})
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
			if strings.Contains(err.Error(), "To see the full stack trace") {
				t.Errorf("error %q carries mvn's help lines", err)
			}
			if entries, _ := os.ReadDir(root); len(entries) > 1 { // the lock file at most
				t.Errorf("a refused fetch left %d entries in the cache", len(entries))
			}
		})
	}
}

// TestFindMvnEmptyPath checks that with PATH empty or unset mvn is looked
// for in the system's standard directories, and run with them as its PATH.
func TestFindMvnEmptyPath(t *testing.T) {
	var want string
	for _, d := range mvnDirs {
		if st, err := os.Stat(filepath.Join(d, "mvn")); err == nil && st.Mode().IsRegular() {
			want = filepath.Join(d, "mvn")
			break
		}
	}
	for _, unset := range []bool{false, true} {
		t.Setenv("PATH", "")
		if unset {
			os.Unsetenv("PATH")
		}
		p, env, err := findMvn()
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), "/usr/bin") {
				t.Fatalf("no mvn in the standard directories: %q, %v; want an error naming them", p, err)
			}
			continue
		}
		if err != nil || p != want || !strings.Contains(strings.Join(env, "\n"), "PATH=/usr/local/sbin:") {
			t.Fatalf("findMvn with PATH unset=%v: %q, %v; want %s and a PATH for it", unset, p, err, want)
		}
	}
}

func TestMvnMessage(t *testing.T) {
	out := "[INFO] x\n[ERROR] Failed to execute goal a: b -> [Help 1]\n[ERROR] \n[ERROR] To see the full stack trace\n[ERROR] [Help 1] http://x\n"
	if got, want := mvnMessage(out), "Failed to execute goal a: b"; got != want {
		t.Errorf("mvnMessage = %q, want %q", got, want)
	}
	if got := mvnMessage("line1\nline2\n"); got != "line1; line2" {
		t.Errorf("mvnMessage without [ERROR] = %q", got)
	}
}

// TestCheckReadable: an absent or readable model directory is fine; a file
// there that cannot be opened (a link loop here, which stops root too) is
// an error wrapping ErrUnreadable that names it.
func TestCheckReadable(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "m")
	if err := CheckReadable(dir); err != nil {
		t.Fatalf("absent: %v", err)
	}
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, InfoFile), []byte("{}"), 0o644)
	if err := CheckReadable(dir); err != nil {
		t.Fatalf("readable: %v", err)
	}
	loop := filepath.Join(dir, ModelFile)
	os.Symlink(ModelFile, loop) // relative: a loop wherever the directory moves
	if err := CheckReadable(dir); !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), loop) {
		t.Fatalf("link loop: %v, want ErrUnreadable naming %s", err, loop)
	}
	os.Rename(dir, filepath.Join(root, "all-minilm-l6-v2-int8"))
	if _, err := EnsureModel(context.Background(), "all-minilm-l6-v2-int8", FetchOptions{Dir: root}); !errors.Is(err, ErrUnreadable) {
		t.Fatalf("EnsureModel of an unreadable cache entry: %v, want ErrUnreadable (and no fetch)", err)
	}
}
