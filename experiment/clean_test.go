package experiment_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/report"
)

// filesUnder lists the files under dir, relative to it, but the index.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == "index" {
			return filepath.SkipDir
		}
		if !d.IsDir() && !strings.HasPrefix(filepath.Base(p), ".index") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestOutHoldsOneRun: a second evaluation into the same directory, with
// other configurations and another k, leaves only its own files there (the
// first run's runs, plots and MTEB files are gone), keeps a file no run
// wrote and one changed since the first run wrote it, and names both.
func TestOutHoldsOneRun(t *testing.T) {
	emb := hash(t)
	data, out := filepath.Join(t.TempDir(), "sf50"), t.TempDir()
	if err := hashembed.WriteDataset(data, 60); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "test", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)}, K: 10, ChannelK: 20}
	first, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Files.Runs) < 5 {
		t.Fatalf("first run wrote %d runs", len(first.Files.Runs))
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	changed := first.Files.Runs[len(first.Files.Runs)-1]
	os.WriteFile(changed, []byte("q1 Q0 d1 1 1 mine\n"), 0o644)

	var log bytes.Buffer
	spec.Configs, err = experiment.ParseConfigs("rrf", spec.Layout())
	if err != nil {
		t.Fatal(err)
	}
	spec.K, spec.Log = 20, &log
	second, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	e, err := report.ReadFile(second.Files.Results)
	if err != nil {
		t.Fatal(err)
	}
	changedRel, _ := filepath.Rel(out, changed)
	want := []string{"notes.txt", "results.json", filepath.ToSlash(changedRel)}
	for _, f := range e.Files {
		want = append(want, f.Path)
	}
	slices.Sort(want)
	if got := filesUnder(t, out); !slices.Equal(got, slices.Compact(want)) {
		t.Errorf("after the second run %s holds\n%v\nwant its files and the two left alone\n%v", out, got, want)
	}
	if n := len(second.Files.MTEB); n != 1 {
		t.Errorf("second run: %d MTEB files, want 1", n)
	}
	if !strings.Contains(log.String(), "notes.txt") || !strings.Contains(log.String(), filepath.ToSlash(changedRel)) {
		t.Errorf("the files left alone are not named:\n%s", log.String())
	}
}

// TestRunFilesNamesAndTags: run files have names a shell takes as they are,
// each TREC run's tag is its configuration, the MTEB files name a task only
// for an MTEB task, and the check command's paths are absolute files that
// exist; and the command runs as printed from another directory with a
// Python that has pytrec_eval (testfiles.PytrecEvalPython).
func TestRunFilesNamesAndTags(t *testing.T) {
	emb := hash(t)
	data, out := filepath.Join(t.TempDir(), "sf50"), t.TempDir()
	if err := hashembed.WriteDataset(data, 60); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "test", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)}, K: 10, ChannelK: 20}
	var err error
	if spec.Configs, err = experiment.ParseConfigs("rrf:c=60;base=1,rrf=8+16,windows,oracle", spec.Layout()); err != nil {
		t.Fatal(err)
	}
	res, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	safe := regexp.MustCompile(`^[A-Za-z0-9._+-]+\.trec$`)
	tags := map[string]bool{}
	for _, c := range res.Report.Configs {
		if c.UpperBound {
			continue
		}
		if !safe.MatchString(filepath.Base(c.RunFile)) {
			t.Errorf("configuration %s: run file %s is not shell-safe", c.Name, c.RunFile)
		}
		b, err := os.ReadFile(filepath.Join(out, c.RunFile))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		if len(line) != 6 || line[5] != c.Name {
			t.Errorf("configuration %s: run's first line %q, want the tag %s", c.Name, line, c.Name)
		}
		tags[c.Name] = true
	}
	if !tags["rrf:c=60,base=1"] || !tags["rrf:windows=8+16"] {
		t.Errorf("runs %v", tags)
	}
	if p := res.Report.Config("rrf:windows=8+16").Paired[report.PairedBestWindow]; p.PTHolm == nil || *p.PTHolm < p.PT || p.PRandomizationHolm == nil {
		t.Errorf("rrf:windows=8+16 against the best window: no Holm-adjusted p-values over the configurations it meets: %+v", p)
	}
	if src := res.Report.Scoring.Source; !strings.HasPrefix(src, "none: sf50 is no task of mteb") {
		t.Errorf("scoring source of a dataset that is no MTEB task: %q", src)
	}

	cmd := res.Files.CheckCommand()
	fields := strings.Fields(cmd)
	if fields[0] != "python3" {
		t.Fatalf("check command %q", cmd)
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "--") {
			continue
		}
		if st, err := os.Stat(f); !filepath.IsAbs(f) || err != nil || st.IsDir() {
			t.Errorf("check command argument %s: not an absolute path of a file (%v)", f, err)
		}
	}
	t.Run("check command", func(t *testing.T) {
		python := testfiles.PytrecEvalPython(t)
		run := exec.Command("sh", "-c", cmd)
		run.Dir = t.TempDir()
		run.Env = append(os.Environ(), "PATH="+filepath.Dir(python)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if b, err := run.CombinedOutput(); err != nil {
			t.Errorf("%s (from %s): %v\n%s", cmd, run.Dir, err, b)
		}
	})
}
