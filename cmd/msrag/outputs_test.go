package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readFIFO makes a FIFO at path and returns what a reader of it gets, once
// a writer has closed it.
func readFIFO(t *testing.T, path string) <-chan string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		data, _ := io.ReadAll(f)
		f.Close() // before the test goes on: a reader still there would let a writer in
		got <- string(data)
	}()
	return got
}

// fifoGot is what readFIFO's reader got, or a note that it got nothing
// within 10 s of the writer's end (the FIFO was replaced: its reader waits
// for a writer that never comes, and is left waiting).
func fifoGot(got <-chan string) string {
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		return "(nothing: the reader still waits for a writer)"
	}
}

func typeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Type()
}

// TestOutputsAreNeverReplaced checks how search, embed and tune write
// --out: a FIFO is written to its reader, a character device as it is, a
// symbolic link through to what it names (also /proc/self/fd/1: standard
// output), each left what it was; a regular file replaced. Before, every
// one of them was renamed over: the FIFO's reader got nothing, the device
// became a regular file, the link a file beside its untouched target.
func TestOutputsAreNeverReplaced(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	queries := filepath.Join(dir, "queries.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\nq2\tanaemia from iron deficiency\n"), 0o644)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	search := []string{"search", "--index", idx, "--queries", queries, "--quiet"}
	code, want, stderr := runCLI(t, "", search...)
	if code != exitOK || want == "" {
		t.Fatalf("search to standard output: exit %d: %s", code, stderr)
	}

	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "run.fifo")
		got := readFIFO(t, fifo)
		if code, _, stderr := runCLI(t, "", append(search, "--out", fifo)...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if s := fifoGot(got); s != want {
			t.Errorf("the FIFO's reader got %q, want the run", s)
		}
		if typeOf(t, fifo) != fs.ModeNamedPipe {
			t.Errorf("the FIFO is now %v", typeOf(t, fifo))
		}
	})

	t.Run("link to a file elsewhere", func(t *testing.T) {
		d := t.TempDir()
		target := filepath.Join(d, "elsewhere", "run.trec")
		os.MkdirAll(filepath.Dir(target), 0o755)
		os.WriteFile(target, []byte("old"), 0o644)
		link := filepath.Join(d, "run")
		os.Symlink(target, link)
		if code, _, stderr := runCLI(t, "", append(search, "--out", link)...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if data, _ := os.ReadFile(target); string(data) != want || typeOf(t, link) != fs.ModeSymlink {
			t.Errorf("target holds %q, link is %v: want the run through the link", data, typeOf(t, link))
		}
	})

	t.Run("link to standard output", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "stdout")
		os.Symlink("/proc/self/fd/1", link)
		cmd := exec.Command(os.Args[0], append(search, "--out", link)...)
		cmd.Env = append(os.Environ(), "MSRAG_TEST_MAIN=1")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %s", err, errb.String())
		}
		if out.String() != want || typeOf(t, link) != fs.ModeSymlink {
			t.Errorf("standard output got %q, link is %v: want the run through the link", out.String(), typeOf(t, link))
		}
	})

	t.Run("character device", func(t *testing.T) {
		d := t.TempDir()
		devs := []string{filepath.Join(d, "null-link")}
		os.Symlink("/dev/null", devs[0])
		own := filepath.Join(d, "null")
		if err := syscall.Mknod(own, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			devs = append(devs, own)
		} else {
			t.Logf("mknod not permitted here (%v): only /dev/null through a link is tried", err)
		}
		for _, dev := range devs {
			before := typeOf(t, dev)
			if code, _, stderr := runCLI(t, "", append(search, "--out", dev)...); code != exitOK {
				t.Fatalf("%s: exit %d: %s", dev, code, stderr)
			}
			if after := typeOf(t, dev); after != before {
				t.Errorf("%s was %v, is now %v", dev, before, after)
			}
		}
		if typeOf(t, "/dev/null") != fs.ModeDevice|fs.ModeCharDevice {
			t.Fatal("/dev/null is no longer a character device")
		}
	})

	t.Run("refused before any work", func(t *testing.T) {
		d := t.TempDir()
		for _, out := range []string{d, filepath.Join(d, "missing", "run.trec")} {
			code, _, stderr := runCLI(t, "", append(search, "--out", out)...)
			if code != exitUsage || !strings.Contains(stderr, "--out") {
				t.Errorf("--out %s: exit %d, %s", out, code, stderr)
			}
		}
	})
}

// TestEmbedAndTuneOutputs checks embed's and tune's --out as search's: an
// npy output into a FIFO (held whole, then written), a fusion model through
// a link; and tune --out transfer, which --fusion-model would read as the
// built-in model, refused before any work.
func TestEmbedAndTuneOutputs(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data, evalOut := filepath.Join(dir, "tiny"), filepath.Join(dir, "eval")
	writeTinyDataset(t, data)
	if code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32",
		"--out", evalOut, "--k", "20", "--window-k", "20", "--quiet"); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	tune := []string{"tune", "--dataset", data, "--split", "test", "--index", filepath.Join(evalOut, "index"), "--folds", "2", "--quiet"}
	target := filepath.Join(dir, "models", "fusion.json")
	os.Mkdir(filepath.Dir(target), 0o755)
	link := filepath.Join(dir, "fusion-link.json")
	os.Symlink(target, link)
	if code, _, stderr := runCLI(t, "", append(tune, "--out", link)...); code != exitOK {
		t.Fatalf("tune --out LINK: exit %d: %s", code, stderr)
	}
	if typeOf(t, link) != fs.ModeSymlink || typeOf(t, target) != 0 {
		t.Errorf("tune --out LINK: the link is %v, its target %v", typeOf(t, link), typeOf(t, target))
	}
	for _, name := range []string{"transfer", "TRANSFER", "transfer:windows=64"} {
		wd, _ := os.Getwd()
		os.Chdir(dir)
		code, _, stderr := runCLI(t, "", append(tune, "--out", name)...)
		os.Chdir(wd)
		if code != exitUsage || !strings.Contains(stderr, "built-in fusion model") {
			t.Errorf("tune --out %s: exit %d, %s", name, code, stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("tune --out %s wrote ./%s", name, name)
		}
	}

	t.Run("embed", func(t *testing.T) {
		model := testModel(t)
		stdin := "\"first text\"\n\"a second text\"\n"
		code, want, stderr := runCLI(t, stdin, "embed", "--model", model, "--format", "npy", "--quiet")
		if code != exitOK {
			t.Fatalf("embed: exit %d: %s", code, stderr)
		}
		fifo := filepath.Join(t.TempDir(), "vectors.fifo")
		got := readFIFO(t, fifo)
		if code, _, stderr := runCLI(t, stdin, "embed", "--model", model, "--format", "npy", "--quiet", "--out", fifo); code != exitOK {
			t.Fatalf("embed --out FIFO: exit %d: %s", code, stderr)
		}
		if s := fifoGot(got); s != want || typeOf(t, fifo) != fs.ModeNamedPipe {
			t.Errorf("the FIFO's reader got %d bytes (want %d), the FIFO is %v", len(s), len(want), typeOf(t, fifo))
		}
	})
}
