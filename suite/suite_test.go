package suite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/suite"
)

func TestLoadSeed(t *testing.T) {
	s, err := suite.Load(filepath.Join("..", "suites", "seed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != filepath.Join("..", "suites") || s.Name != "seed" || len(s.Datasets) != 4 || len(s.Models) != 2 {
		t.Fatalf("seed: dir %q, name %q, %d datasets, %d models", s.Dir, s.Name, len(s.Datasets), len(s.Models))
	}
	p, err := suite.PlanOf(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range p.Runs {
		names = append(names, r.Name)
	}
	want := []string{
		"scifact-e5-small-v2-w100-200-500", "scifact-all-minilm-l6-v2-w100-200-254",
		"nfcorpus-e5-small-v2-w100-200-500", "nfcorpus-all-minilm-l6-v2-w100-200-254",
		"qmsum-e5-small-v2-w100-200-500", "qmsum-all-minilm-l6-v2-w100-200-254",
		"qmsum-lembed-e5-small-v2-w100-200-500", "qmsum-lembed-all-minilm-l6-v2-w100-200-254",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("runs %v, want %v", names, want)
	}
	// Paths are relative to the suite file: the data is .cache/data in the
	// repository (make suite-seed links the cache's sets there), the output
	// out/suite-seed.
	r := p.Runs[4]
	if r.Dataset.Dir != filepath.Join("..", ".cache", "data", "qmsum") || r.Dataset.Split != "dev" || r.MTEB.Task != "qmsum" {
		t.Errorf("qmsum run: dir %s, split %s, task %s", r.Dataset.Dir, r.Dataset.Split, r.MTEB.Task)
	}
	if p.Out != filepath.Join("..", "out", "suite-seed") ||
		r.Index != filepath.Join("..", "out", "suite-seed", "indices", "qmsum-e5-small-v2-w100-200-500") {
		t.Errorf("out %s, index %s", p.Out, r.Index)
	}
	if p.Runs[7].MTEB.Task != "LEMBQMSumRetrieval" || len(p.Runs[0].Configs) != 7 {
		t.Errorf("lembed task %s; %d configurations of scifact", p.Runs[7].MTEB.Task, len(p.Runs[0].Configs))
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"unknown field", `{"name": "x", "out": "o", "windows": [1]}`, `unknown field "windows"`},
		{"two values", `{"out": "o"} {}`, "more than one JSON value"},
		{"not json", `out: o`, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := suite.Parse([]byte(tc.json))
			if !errors.Is(err, suite.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "suite: ") {
				t.Errorf("Parse: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestPlanRejects(t *testing.T) {
	base := func() suite.Suite {
		return suite.Suite{Name: "t", Out: "out",
			Datasets: []suite.Dataset{{Dir: "data/a"}, {Dir: "data/b", Split: "dev"}},
			Models:   []suite.Model{{Name: "m", WindowSets: [][]int{{10, 20}}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*suite.Suite)
		want string
	}{
		{"no out", func(s *suite.Suite) { s.Out = "" }, `set "out"`},
		{"no dataset", func(s *suite.Suite) { s.Datasets = nil }, "no dataset"},
		{"no model", func(s *suite.Suite) { s.Models = nil }, "no model"},
		{"negative k", func(s *suite.Suite) { s.K = -1 }, "must not be negative"},
		{"no window set", func(s *suite.Suite) { s.Models[0].WindowSets = nil }, "has no window set"},
		{"empty window set", func(s *suite.Suite) { s.Models[0].WindowSets = [][]int{{}} }, "no window size"},
		{"window repeated", func(s *suite.Suite) { s.Models[0].WindowSets = [][]int{{10, 10}} }, "window 10 is repeated"},
		{"window zero", func(s *suite.Suite) { s.Models[0].WindowSets = [][]int{{0}} }, "not positive"},
		{"set twice", func(s *suite.Suite) { s.Models[0].WindowSets = [][]int{{10}, {10}} }, "given twice"},
		{"model twice", func(s *suite.Suite) { s.Models = append(s.Models, s.Models[0]) }, "listed twice"},
		{"dataset without dir", func(s *suite.Suite) { s.Datasets[1].Dir = "" }, `dataset 2 has no "dir"`},
		{"dataset name twice", func(s *suite.Suite) { s.Datasets[1].Name = "a" }, "name a is used twice"},
		{"two corpora, one name", func(s *suite.Suite) { s.Datasets[1] = suite.Dataset{Name: "a2", Dir: "other/a"} }, "same name a"},
		{"one MTEB task twice", func(s *suite.Suite) {
			s.Datasets[1] = suite.Dataset{Name: "a-dev", Dir: "data/a", Split: "dev"}
		}, `"task" of its own`},
		{"bad configuration", func(s *suite.Suite) { s.Configs = "rrf=10+30" }, "window w30"},
		{"split leaving qrels/", func(s *suite.Suite) { s.Datasets[0].Split = "../../etc/passwd" }, `split "../../etc/passwd"`},
		{"empty split of two", func(s *suite.Suite) { s.Datasets[0].Split = "test+" }, `split "test+"`},
		{"task leaving the MTEB directory", func(s *suite.Suite) { s.Datasets[0].Task = "../x" }, `task "../x"`},
		{"task leaving the MTEB directory, forced", func(s *suite.Suite) {
			s.Datasets[0].Task, s.Datasets[0].ForceTask = "a b", true
		}, "a task name is a name"},
		{"task of no MTEB task", func(s *suite.Suite) { s.Datasets[0].Task = "NoSuchTask" }, `unknown MTEB retrieval task`},
		{"task of another dataset", func(s *suite.Suite) {
			s.Datasets[0] = suite.Dataset{Dir: "data/arguana", Task: "SciFact"}
		}, "disagrees with the dataset"},
		{"revision with a newline", func(s *suite.Suite) { s.Datasets[0].Revision = "a\nb" }, `revision "a\nb"`},
		{"language a path", func(s *suite.Suite) { s.Datasets[0].Languages = []string{"a/b"} }, `language "a/b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.edit(&s)
			_, err := suite.PlanOf(s)
			if !errors.Is(err, suite.ErrInvalid) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "suite: ") {
				t.Errorf("plan: %v, want ErrInvalid with %q", err, tc.want)
			}
		})
	}
	// Two splits of one directory share its index when their tasks differ.
	s := base()
	s.Datasets[1] = suite.Dataset{Name: "a-dev", Dir: "data/a", Split: "dev", Task: "ADev", ForceTask: true}
	p, err := suite.PlanOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Runs[0].Index != p.Runs[1].Index || p.Runs[0].Name == p.Runs[1].Name {
		t.Errorf("runs %s and %s: indices %s and %s", p.Runs[0].Name, p.Runs[1].Name, p.Runs[0].Index, p.Runs[1].Index)
	}
	// A task in another case is mteb's; a forced one is taken.
	s = base()
	s.Datasets[0].Task = "scifact"
	s.Datasets[1] = suite.Dataset{Dir: "data/arguana", Task: "NFCorpus", ForceTask: true}
	if p, err = suite.PlanOf(s); err != nil {
		t.Fatal(err)
	}
	if p.Runs[0].MTEB.Task != "SciFact" || p.Runs[1].MTEB.Task != "NFCorpus" {
		t.Errorf("tasks %s and %s, want SciFact and NFCorpus", p.Runs[0].MTEB.Task, p.Runs[1].MTEB.Task)
	}
	// Several window sets of one model are several MTEB models.
	s = base()
	s.Models[0].WindowSets = [][]int{{10, 20}, {30}}
	if p, err = suite.PlanOf(s); err != nil || len(p.Runs) != 4 || p.Runs[1].MTEB.Model != "m-w30" || p.Runs[0].MTEB.Model != "m-w10-20" {
		t.Errorf("two window sets: %v runs, err %v", p, err)
	}
}

// TestCheckNamesEveryMissingPart checks that a suite whose models are not
// fetched and whose dataset is absent fails before any work, naming each
// model with the command that fetches it, and the dataset.
func TestCheckNamesEveryMissingPart(t *testing.T) {
	t.Setenv(cache.Env, t.TempDir()) // an empty cache: no model is fetched
	t.Setenv("MSRAG_OFFLINE", "1")   // and none is fetched on first use
	out := t.TempDir()
	s := suite.Suite{Name: "t", Out: out,
		Datasets: []suite.Dataset{{Dir: filepath.Join(t.TempDir(), "absent")}},
		Models: []suite.Model{{Name: "e5-small-v2", WindowSets: [][]int{{100}}},
			{Name: "all-minilm-l6-v2-int8", WindowSets: [][]int{{64}}}}}
	_, err := suite.Run(context.Background(), s)
	if !errors.Is(err, suite.ErrModel) || !errors.Is(err, suite.ErrDataset) {
		t.Fatalf("Run: %v; want ErrModel and ErrDataset", err)
	}
	for _, want := range []string{"model e5-small-v2", "msrag model fetch e5-small-v2", "msrag model fetch all-minilm-l6-v2-int8", "dataset absent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if es, _ := os.ReadDir(out); len(es) != 0 {
		t.Errorf("a suite that fails its check wrote %d entries into %s", len(es), out)
	}
}

// writeDataset writes a BEIR dataset of docs documents and queries judged
// queries into dir; bad adds a line that is not JSON at the end of the corpus.
func writeDataset(tb testing.TB, dir string, docs, queries int, bad bool) {
	tb.Helper()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi")
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var c, q, r strings.Builder
	for d := range docs {
		var text []string
		for i := range 3 + (d*5)%40 {
			text = append(text, words[(d+i*i)%len(words)])
		}
		fmt.Fprintf(&c, `{"_id": "d%d", "title": "", "text": %q}`+"\n", d, strings.Join(text, " "))
	}
	if bad {
		c.WriteString("not json\n")
	}
	r.WriteString("query-id\tcorpus-id\tscore\n")
	for i := range queries {
		fmt.Fprintf(&q, `{"_id": "q%d", "text": "%s %s"}`+"\n", i, words[i%len(words)], words[(i*3)%len(words)])
		fmt.Fprintf(&r, "q%d\td%d\t1\n", i, (i*3)%docs)
	}
	for name, s := range map[string]string{"corpus.jsonl": c.String(), "queries.jsonl": q.String(), "qrels/test.tsv": r.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// FuzzParse: a suite file either is refused (ErrInvalid) or plans runs whose
// directories and index directories lie directly under the suite's output
// and index directories, with splits and task names that are plain names.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"seed.json", "quick.json"} {
		data, err := os.ReadFile(filepath.Join("..", "suites", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"out": "o", "datasets": [{"dir": "d", "split": "test+dev", "task": "T"}], "models": [{"name": "m", "window_sets": [[4, 8]]}]}`))
	f.Add([]byte(`{"out": "o", "datasets": [{"dir": "../d", "name": "../../x"}], "models": [{"name": "../m", "window_sets": [[4]]}], "configs": "rrf,maxp"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := suite.Parse(data)
		if err != nil {
			if !errors.Is(err, suite.ErrInvalid) {
				t.Fatalf("Parse: %v does not wrap ErrInvalid", err)
			}
			return
		}
		p, err := suite.PlanOf(s)
		if err != nil {
			if !errors.Is(err, suite.ErrInvalid) {
				t.Fatalf("PlanOf: %v does not wrap ErrInvalid", err)
			}
			return
		}
		for _, r := range p.Runs {
			if r.Name == "" || strings.ContainsAny(r.Name, "/\\") || r.Name == "." || r.Name == ".." {
				t.Fatalf("run name %q is not a plain name", r.Name)
			}
			if filepath.Dir(r.Index) != filepath.Clean(p.Indices) || filepath.Base(r.Index) == ".." {
				t.Fatalf("index %s is not directly under %s", r.Index, p.Indices)
			}
			for _, sp := range strings.Split(r.Dataset.Split, "+") {
				if sp == "" || sp == ".." || strings.ContainsAny(sp, "/\\") {
					t.Fatalf("split %q of %q", sp, r.Dataset.Split)
				}
			}
			if strings.ContainsAny(r.MTEB.Task, "/\\") || r.MTEB.Task == ".." {
				t.Fatalf("MTEB task %q is a path", r.MTEB.Task)
			}
		}
	})
}

// TestPlanFP16 checks that a model entry run in fp16 has runs and indices of
// their own, named with -fp16, beside none of the fp32 ones'.
func TestPlanFP16(t *testing.T) {
	s, err := suite.Parse([]byte(`{"name": "p", "out": "out", "datasets": [{"dir": "data/scifact", "split": "test"}],
		"models": [{"name": "e5-small-v2", "window_sets": [[100]], "fp16": true}, {"name": "all-minilm-l6-v2", "window_sets": [[100]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Models[0].FP16 || s.Models[1].FP16 {
		t.Fatalf("models %+v: want the first in fp16", s.Models)
	}
	p, err := suite.PlanOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Runs[0]; r.Name != "scifact-e5-small-v2-fp16-w100" || filepath.Base(r.Index) != "scifact-e5-small-v2-fp16-w100" || r.Model != "e5-small-v2" {
		t.Errorf("fp16 run %s, index %s, model %s", r.Name, r.Index, r.Model)
	}
	if r := p.Runs[1]; r.Name != "scifact-all-minilm-l6-v2-w100" {
		t.Errorf("fp32 run %s", r.Name)
	}
}
