package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
)

// Suite says what to run: every dataset with every model and each of its
// window sets, every configuration from one search. The JSON fields are the
// suite file's schema; the others are set by the program that runs it.
type Suite struct {
	// Name names the suite in its summary.
	Name string `json:"name"`
	// Description is printed under the summary's title.
	Description string `json:"description,omitempty"`
	// Out is the output directory (required).
	Out string `json:"out"`
	// Indices holds one index per dataset corpus, model and window set;
	// default Out/indices. Suites that share it share their indices.
	Indices string `json:"indices,omitempty"`
	// Configs are the configurations as msrag eval --configs takes them;
	// default experiment.DefaultConfigs (windows,rrf,maxp,full,oracle).
	Configs string `json:"configs,omitempty"`
	// K is the number of documents ranked per query (default 100),
	// ChannelK the chunks each channel returns (default 100), Batch the
	// queries embedded at once (default 1024).
	K        int `json:"k,omitempty"`
	ChannelK int `json:"window_k,omitempty"`
	Batch    int `json:"batch,omitempty"`
	// Datasets and Models: each dataset runs with each model and window set.
	Datasets []Dataset `json:"datasets"`
	Models   []Model   `json:"models"`

	// Dir is the directory relative paths of the suite (Out, Indices,
	// Dataset.Dir) are resolved against: Load sets it to the suite file's
	// directory; "" is the working directory.
	Dir string `json:"-"`
	// File is the suite file, recorded in the summary ("" when none).
	File string `json:"-"`
	// Open opens a model by name; default OpenModel with Embedder.
	Open func(name string) (msrag.Embedder, error) `json:"-"`
	// Embedder are the options of the default Open (device, GPUs, threads;
	// a model behind a server's client options in Extra).
	Embedder embed.Options `json:"-"`
	// Rebuild builds every index even when one matches; Wait waits for
	// another build of an index instead of failing; Workers are the
	// tokenizer goroutines of a build (0: all cores).
	Rebuild, Wait bool `json:"-"`
	Workers       int  `json:"-"`
	// Log receives notices: the plan, each run's start and end, why an
	// index is reused or built. Nil discards them.
	Log io.Writer `json:"-"`
	// Progress, when set, is called before each index build that may
	// happen with the run's name; it returns the build's progress callback
	// and a function called when the run ends.
	Progress func(run string) (update func(msrag.Progress), done func()) `json:"-"`
}

// Dataset is one dataset of a suite, in BEIR layout (corpus.OpenDataset).
type Dataset struct {
	// Name names the dataset in the summary and its runs' directories;
	// default the base name of Dir. Names are unique within a suite.
	Name string `json:"name,omitempty"`
	// Dir is the dataset directory.
	Dir string `json:"dir"`
	// Split is the qrels split; several joined by "+" are judged
	// together. Default "test".
	Split string `json:"split,omitempty"`
	// Task is the MTEB task name of its result files, checked as eval's
	// --mteb-task is (experiment.CheckTask: one of the pinned mteb's tasks,
	// respelled to mteb's case, and the dataset's own unless ForceTask);
	// default from Dir (experiment.TaskName: scifact is SciFact).
	// Revision, Languages and MainScore override the rest of
	// experiment.MTEBOptions.
	Task      string   `json:"task,omitempty"`
	ForceTask bool     `json:"force_task,omitempty"`
	Revision  string   `json:"revision,omitempty"`
	Languages []string `json:"languages,omitempty"`
	MainScore string   `json:"main_score,omitempty"`
}

// Model is one model of a suite with its window sets.
type Model struct {
	// Name is the model: a built-in or fetched name (msrag model list), a
	// model directory, or hash-test-embedder (non-semantic, for tests).
	Name string `json:"name"`
	// WindowSets are the sets of window sizes, in content tokens, to index
	// and fuse: each is one index and one run per dataset. They must fit
	// the model (all-MiniLM-L6-v2 takes 254 content tokens).
	WindowSets [][]int `json:"window_sets"`
	// Configs overrides the suite's configurations for this model.
	Configs string `json:"configs,omitempty"`
	// FP16 runs the ONNX model's fp16 file (onnx.Options.FP16, as --fp16
	// does for every model of msrag bench); its runs and indices are named
	// with "-fp16".
	FP16 bool `json:"fp16,omitempty"`
}

// Parse reads a suite from JSON, rejecting unknown fields. Its errors wrap
// ErrInvalid.
func Parse(data []byte) (Suite, error) {
	s, err := parse(data)
	if err != nil {
		return s, invalid{fmt.Errorf("suite: %w", err)}
	}
	return s, nil
}

// maxSuite bounds a suite file's size.
const maxSuite = 16 << 20

// Load reads the suite file at path; its relative paths are relative to the
// file's directory. Its errors wrap ErrInvalid.
func Load(path string) (Suite, error) {
	data, err := safefile.ReadSmall(path, maxSuite)
	if err != nil {
		return Suite{}, invalid{fmt.Errorf("suite: %w", err)}
	}
	s, err := parse(data)
	if err != nil {
		return s, invalid{fmt.Errorf("suite: %s: %w", path, err)}
	}
	s.Dir, s.File = filepath.Dir(path), path
	return s, nil
}

func parse(data []byte) (Suite, error) {
	var s Suite
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, err
	}
	if dec.More() {
		return s, fmt.Errorf("more than one JSON value")
	}
	return s, nil
}

// path resolves a path of the suite file against s.Dir.
func (s *Suite) path(p string) string {
	if p == "" || filepath.IsAbs(p) || s.Dir == "" {
		return p
	}
	return filepath.Join(s.Dir, p)
}
