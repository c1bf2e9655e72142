package experiment_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/provenance"
	"github.com/msrag/msrag/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestMTEBScoreName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"ndcg_cut_10", "ndcg_at_10", true},
		{"map_cut_100", "map_at_100", true},
		{"recall_1000", "recall_at_1000", true},
		{"P_5", "precision_at_5", true},
		{"mrr_10", "mrr_at_10", true},
		{"recip_rank_3", "mrr_at_3", true}, // msrag's synonym of mrr_3
		{"cdr_1", "hit_rate_at_1", true},
		{"cdr_2", "", false},       // MTEB reports no cutoff 2
		{"ndcg_cut_50", "", false}, // nor 50
		{"recip_rank", "", false},  // pytrec_eval's, without a cutoff
		{"bogus_3", "", false},
	} {
		got, ok := experiment.MTEBScoreName(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("MTEBScoreName(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTaskName(t *testing.T) {
	for in, want := range map[string]string{
		"~/.cache/msrag/data/scifact": "SciFact",
		"data/nfcorpus/":              "NFCorpus",
		"qmsum-lembed":                "LEMBQMSumRetrieval",
		"cache/hf--mteb--fiqa@main":   "FiQA2018",
		"hf--mteb--scifact@d56462d0e63a25450459c4f213e49ffdb866f7f9": "SciFact",
		"/srv/data/qmsum":               "qmsum",
		".cache/data/scifact-quick1000": "scifact-quick1000",
	} {
		if got := experiment.TaskName(in); got != want {
			t.Errorf("TaskName(%q) = %q, want %q", in, got, want)
		}
	}
}

var modified = true

// toyEval is a results.json of two configurations over every default metric.
func toyEval() *report.Eval {
	res := func(base float64) eval.Results {
		r := eval.Results{Metrics: eval.DefaultMetrics(), NumQueries: 3, Mean: map[string]float64{}}
		for i, m := range r.Metrics {
			r.Mean[m] = base + float64(i)/1000
		}
		return r
	}
	return &report.Eval{
		MsragVersion: "(devel) 0123abcd (modified)", Created: time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC),
		Build: provenance.Build{Module: "github.com/msrag/msrag", Version: "(devel)", Revision: "0123abcd", Modified: &modified,
			GoVersion: "go1.26.8", ONNXRuntime: "1.30.0", FAISS: "1.7.3", FAISSOptions: "OPTIMIZE AVX2"},
		Index:   report.IndexInfo{Batching: "single"},
		Dataset: "toy", Split: "test", DatasetFingerprint: "sha256:" + string(bytes.Repeat([]byte("ab"), 32)),
		Model:   report.Model{Name: "e5-small-v2", ModelSHA256: string(bytes.Repeat([]byte("0123456789abcdef"), 4)), Dims: 384, MaxTokens: 512},
		Windows: []int{100, 200}, FullWindow: 508, K: 100, ChannelK: 100, Queries: 3, Docs: 10,
		Timings: report.Timings{Total: 12.5},
		Configs: []report.Config{
			{Name: "rrf", Kind: "rrf", Fusion: "rrf", RunFile: "runs/rrf.trec", Results: res(0.1)},
			{Name: "oracle", Kind: report.KindOracle, UpperBound: true, Results: res(0.3)},
		},
		MTEB: &report.MTEBInfo{Task: "SciFact", DatasetRevision: "sha256:abab", Languages: []string{"eng-Latn"}, MainScore: "ndcg_at_10"},
	}
}

func TestMTEBFiles(t *testing.T) {
	e := toyEval()
	files, err := experiment.MTEBFiles(e)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := []string{"results/msrag__e5-small-v2-rrf/0123456789ab/SciFact.json", "results/msrag__e5-small-v2-oracle/0123456789ab/SciFact.json"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths %v, want %v", paths, want)
	}
	for i, f := range files {
		c := e.Configs[i]
		s := f.Result.Scores["test"]
		if len(s) != 1 || len(f.Result.Scores) != 1 {
			t.Fatalf("%s: scores %v, want one subset of split test", c.Name, f.Result.Scores)
		}
		sc := s[0]
		for msrag, mteb := range map[string]string{"ndcg_cut_10": "ndcg_at_10", "P_3": "precision_at_3", "cdr_5": "hit_rate_at_5",
			"mrr_100": "mrr_at_100", "recall_1": "accuracy", "map_cut_20": "map_at_20"} {
			if sc[mteb] != c.Results.Mean[msrag] {
				t.Errorf("%s: %s = %v, want %s's %v", c.Name, mteb, sc[mteb], msrag, c.Results.Mean[msrag])
			}
		}
		if sc["main_score"] != c.Results.Mean["ndcg_cut_10"] || sc["hf_subset"] != "default" {
			t.Errorf("%s: main_score %v, hf_subset %v", c.Name, sc["main_score"], sc["hf_subset"])
		}
		for _, absent := range []string{"ndcg_at_1000", "recall_at_1000", "hit_rate_at_2", "recip_rank"} {
			if _, ok := sc[absent]; ok {
				t.Errorf("%s: %s is written (k is %d)", c.Name, absent, e.K)
			}
		}
		// 5 families at 6 cutoffs <= k, hit rate at 4, accuracy, main score, subset, languages.
		if n := len(sc); n != 5*6+4+4 {
			t.Errorf("%s: %d score entries, want %d", c.Name, n, 5*6+4+4)
		}
		if f.Meta["name"] != f.Model || f.Meta["revision"] != "0123456789ab" {
			t.Errorf("%s: model_meta name %v revision %v", c.Name, f.Meta["name"], f.Meta["revision"])
		}
	}
	if !files[1].Result.Msrag.UpperBound || files[0].Result.Msrag.UpperBound {
		t.Errorf("only the oracle is an upper bound: %v, %v", files[0].Result.Msrag.UpperBound, files[1].Result.Msrag.UpperBound)
	}

	// A main score beyond k is an error, not a silent zero.
	e.MTEB.MainScore = "recall_at_1000"
	if _, err := experiment.MTEBFiles(e); !errors.Is(err, experiment.ErrMainScore) {
		t.Errorf("main score recall_at_1000 with k 100: %v, want ErrMainScore", err)
	}
}

// TestWriteMTEBGolden writes the files and compares the rrf one with
// testdata/mteb-rrf.golden.json (go test -run WriteMTEBGolden -update
// rewrites it).
func TestWriteMTEBGolden(t *testing.T) {
	dir := t.TempDir()
	paths, err := experiment.WriteMTEB(dir, toyEval())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("wrote %v", paths)
	}
	got, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "mteb-rrf.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n%s", paths[0], golden, got)
	}
	var meta map[string]any
	data, err := os.ReadFile(filepath.Join(filepath.Dir(paths[0]), "model_meta.json"))
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil || meta["name"] != "msrag/e5-small-v2-rrf" || meta["framework"] == nil {
		t.Errorf("model_meta.json: %v, %v", meta, err)
	}
}
