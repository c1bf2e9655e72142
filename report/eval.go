package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/internal/provenance"
)

// Kinds of configuration. A fusion over several windows has its rule's name
// as its kind: "rrf", "docrrf", "combsum", "combmnz", "maxp".
const (
	KindWindow = "window" // one window size alone, chunks collapsed to their best per document
	KindFull   = "full"   // each document embedded whole, truncated to the model's maximum
	KindOracle = "oracle" // per query and metric the best single window, chosen with the labels
	// KindLearned is a rule learned on training queries (msrag tune), or
	// cross-validated fitting.
	KindLearned = "learned"
)

// Kinds of channel a configuration ranks from (Config.Channels).
const (
	ChannelsDense   = "dense"   // dense windows only
	ChannelsLexical = "lexical" // lexical channels only
	ChannelsHybrid  = "hybrid"  // both
)

// Baselines of the paired comparisons (Config.Paired).
const (
	PairedBestWindow = "best_window"
	PairedRRF        = "rrf"
	PairedLexicalRRF = "lexical_rrf"
)

// LexicalRRF names the configuration of RRF over the lexical channels.
const LexicalRRF = "rrf:windows=lexical"

// PairedBaselines are the configurations every other one is compared with
// on metric, by baseline name (a configuration the evaluation lacks is
// nil): the best single channel (chosen after the fact, which flatters
// it), rrf, and RRF over the lexical channels.
func (e *Eval) PairedBaselines(metric string) map[string]*Config {
	return map[string]*Config{PairedBestWindow: e.BestWindow(metric), PairedRRF: e.Config("rrf"), PairedLexicalRRF: e.Config(LexicalRRF)}
}

// Eval is the outcome of one evaluation run: the schema of results.json.
type Eval struct {
	// MsragVersion is Build in one line: version, revision, "(modified)".
	MsragVersion string    `json:"msrag_version"`
	GoVersion    string    `json:"go_version"`
	Created      time.Time `json:"created"`
	// Build is the msrag build and native library versions of the run.
	Build provenance.Build `json:"build"`
	// Files are the other files the run wrote into its output directory,
	// with their sha256: results.json is written after them, so that it
	// says which files belong with it (ReadFile checks them).
	Files []OutputFile `json:"files,omitempty"`
	// Dataset is the dataset's name (its directory's base name); DatasetDir
	// the directory as given.
	Dataset    string `json:"dataset"`
	DatasetDir string `json:"dataset_dir"`
	Split      string `json:"split"`
	// DatasetFingerprint is "sha256:" and the sha256 over the sha256 of
	// the corpus, the queries and the split's qrels files: it names the
	// data the run was scored on.
	DatasetFingerprint string `json:"dataset_fingerprint,omitempty"`
	Model              Model  `json:"model"`
	// Windows are the window sizes in content tokens; FullWindow the content
	// tokens of the full-document window (0: none).
	Windows    []int `json:"windows"`
	FullWindow int   `json:"full_window,omitempty"`
	// K is the number of documents ranked per query, ChannelK the number of
	// chunks each channel returns.
	// Embedding is how the index embedded its windows: "independent" or
	// "late"; Late describes a late index's segments.
	Embedding string `json:"embedding,omitempty"`
	Late      *Late  `json:"late,omitempty"`
	K         int    `json:"k"`
	ChannelK  int    `json:"window_k"`
	Docs      int    `json:"docs"`
	// Queries is the number of queries searched: those of the split's qrels
	// found in the queries file.
	Queries int       `json:"queries"`
	Index   IndexInfo `json:"index"`
	Timings Timings   `json:"timings_s"`
	// Configs are the configurations in the order they were asked for.
	Configs []Config `json:"configs"`
	// Oracle says how the oracle configuration was formed; nil without one.
	Oracle *Oracle `json:"oracle,omitempty"`
	// DefaultHybrid names the configuration of msrag's default hybrid rule
	// (fusion.DefaultHybrid) when the run has it.
	DefaultHybrid string `json:"default_hybrid,omitempty"`
	// PairedMetric is the metric of the configurations' paired comparisons.
	PairedMetric string `json:"paired_metric,omitempty"`
	// MTEB says how the run is named in MTEB's result files; nil when
	// none were written.
	MTEB *MTEBInfo `json:"mteb,omitempty"`
	// Scoring says which rules beyond the metrics' definitions scored every
	// configuration's run (MTEB's per-task rules), and why.
	Scoring Scoring `json:"scoring"`
}

// Scoring is the rules the runs were scored with (their run files are the
// runs as scored, the hits the rules drop left out).
type Scoring struct {
	eval.Rules
	// Source is where the rules come from: "mteb VERSION task TASK" (the
	// task's definition in that release of the mteb package, rules or
	// none), or "given, over mteb VERSION task TASK" when the caller forced
	// one either way; "none: NAME is no task of mteb VERSION" for a dataset
	// that is none of mteb's tasks.
	Source string `json:"source"`
	// Dropped counts the hits the rules dropped, over every configuration's
	// run.
	Dropped int `json:"dropped"`
}

// MTEBInfo names a run in the result files of MTEB (the mteb Python
// package's TaskResult JSON).
type MTEBInfo struct {
	// Task is the MTEB task name (SciFact, NFCorpus, LEMBQMSumRetrieval),
	// or the dataset's name when it is no MTEB task.
	Task string `json:"task"`
	// DatasetRevision is the dataset's revision on the hub it was fetched
	// from, else DatasetFingerprint.
	DatasetRevision string `json:"dataset_revision"`
	// Languages are the task's languages as ISO 639-3 code and script
	// (eng-Latn).
	Languages []string `json:"languages"`
	// MainScore is the MTEB name of the task's main metric (ndcg_at_10).
	MainScore string `json:"main_score"`
	// Model is MODEL of the model names msrag/MODEL-CONFIG when it is not
	// the embedder's name.
	Model string `json:"model,omitempty"`
}

// Late describes the segments of a late-chunked index: their content
// tokens, the tokens consecutive ones share, and the edge rows pooled.
type Late struct {
	SegmentTokens int    `json:"segment_tokens"`
	Overlap       int    `json:"overlap"`
	Edges         string `json:"edges"`
}

// Model identifies the embedding model.
type Model struct {
	Name            string `json:"name"`
	ModelSHA256     string `json:"model_sha256,omitempty"`
	TokenizerSHA256 string `json:"tokenizer_sha256,omitempty"`
	Dims            int    `json:"dims"`
	MaxTokens       int    `json:"max_tokens"`
	// Precision is "fp16" for a model run in half precision; absent for
	// fp32.
	Precision string `json:"precision,omitempty"`
}

// IndexInfo says which index was used and whether it was built for this run.
type IndexInfo struct {
	Dir    string `json:"dir"`
	Reused bool   `json:"reused"`
	// Why says why the index was (re)built, or that it matched.
	Why string `json:"why"`
	// CorpusSHA256 is the sha256 of the corpus the index was built from.
	CorpusSHA256 string `json:"corpus_sha256,omitempty"`
	// Batching is how the index's texts went through the model: "padded"
	// or "single" (one text per run, so the vectors do not depend on the
	// batch); the queries were embedded the same way.
	Batching string `json:"batching,omitempty"`
	// Build is the msrag build that wrote the index, as its manifest
	// records (absent for an index from before it was recorded).
	Build *provenance.Build `json:"build,omitempty"`
}

// Timings are wall-clock seconds of the stages. Embed, Search and Fuse add
// up the query batches; Build is 0 when the index was reused.
type Timings struct {
	Build float64 `json:"build"`
	// BuildEmbed is the part of Build the embedder was busy, BuildTokens
	// the tokens it embedded (0 when the index was reused).
	BuildEmbed  float64 `json:"build_embed"`
	BuildTokens int64   `json:"build_tokens"`
	Open        float64 `json:"open"`
	Embed       float64 `json:"embed"`
	Search      float64 `json:"search"`
	Fuse        float64 `json:"fuse"`
	Eval        float64 `json:"eval"`
	Total       float64 `json:"total"`
}

// Config is one configuration and its scores.
type Config struct {
	// Name names the configuration and its run file (runs/NAME.trec):
	// w100, rrf, rrf-100+200, maxp, full, oracle.
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Fusion is the fusion rule in msrag's text form (fusion.Parse
	// reads it); empty for the oracle.
	Fusion string `json:"fusion,omitempty"`
	// Windows are the window sizes it names (none when it fuses every
	// window, and for full and the oracle).
	Windows []int `json:"windows,omitempty"`
	// RunFile is the TREC run file, relative to the output directory; the
	// oracle has none (it is not a ranking).
	RunFile string `json:"run_file,omitempty"`
	// UpperBound marks the oracle: it looks at the labels.
	UpperBound bool `json:"upper_bound,omitempty"`
	// Channels says which kinds of channel it ranks from: ChannelsDense,
	// ChannelsLexical or ChannelsHybrid; empty in runs made before lexical
	// channels existed.
	Channels string       `json:"channels,omitempty"`
	Results  eval.Results `json:"results"`
	// Paired compares it query by query on Eval.PairedMetric with the
	// baselines: "best_window" (the single channel with the best mean,
	// chosen after the fact), "rrf" (over the dense windows) and, when
	// the run has it, "lexical_rrf" (RRF over the lexical channels).
	Paired map[string]eval.Paired `json:"paired,omitempty"`
}

// Oracle describes the oracle configuration.
type Oracle struct {
	// Over names the configurations it picks from (the single windows).
	Over []string `json:"over"`
	// BestCounts maps a metric to how many queries each configuration of
	// Over was the first best for (ties go to the first).
	BestCounts map[string][]int `json:"best_counts"`
	// Ties maps a metric to the number of queries on which every
	// configuration of Over has the same value (each ranks the relevant
	// documents alike, or none finds one); BestCounts counts them for the
	// first.
	Ties map[string]int `json:"ties"`
	// HistogramMetric is the metric of the histogram plot and table.
	HistogramMetric string `json:"histogram_metric"`
	// Best maps query id -> metric -> index into Over of the pick.
	Best map[string]map[string]int `json:"best"`
}

// Picks returns the histogram of the oracle's picks by metric: per
// configuration of Over the queries it is the first best for, those with
// all configurations equal taken out of the first and returned as ties.
func (o *Oracle) Picks(metric string) (counts []int, ties int, err error) {
	bc := o.BestCounts[metric]
	if len(bc) != len(o.Over) || len(bc) == 0 {
		return nil, 0, fmt.Errorf("report: oracle has %d counts of %q for %d configurations", len(bc), metric, len(o.Over))
	}
	counts = append([]int(nil), bc...)
	ties = o.Ties[metric]
	if ties > counts[0] {
		return nil, 0, fmt.Errorf("report: oracle has %d ties of %q but %s is best for only %d queries", ties, metric, o.Over[0], counts[0])
	}
	counts[0] -= ties
	return counts, ties, nil
}

// Config returns the configuration called name, or nil.
func (e *Eval) Config(name string) *Config {
	for i := range e.Configs {
		if e.Configs[i].Name == name {
			return &e.Configs[i]
		}
	}
	return nil
}

// ReadFile reads results.json and checks the files it lists that lie
// beside it (see Eval.Files): one that differs is an error wrapping
// [ErrOtherRun]. A results.json copied alone is read without them.
func ReadFile(path string) (*Eval, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var e Eval
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("report: reading %s: %w", path, err)
	}
	if err := checkFiles(path, e.Files); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &e, nil
}
