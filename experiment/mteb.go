package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/provenance"
	"github.com/msrag/msrag/mteb"
	"github.com/msrag/msrag/report"
)

// MTEBVersion is the release of the mteb Python package whose result format,
// metric definitions and task table (package mteb) the MTEB files follow: its
// TaskResult loads them, and msrag's metrics agree with its retrieval
// evaluator (scripts/check_metrics.py --mteb). It is written as the files'
// mteb_version, which MTEB needs to be a version it can parse; MTEB did not
// run.
const MTEBVersion = mteb.Version

// ErrMainScore reports MTEB result files that cannot be written because
// the main score is not one of the scores: it is not a metric MTEB reports,
// or its cutoff is beyond the documents ranked per query (Spec.K).
var ErrMainScore = errors.New("no main score")

// MTEBOptions name a run in MTEB's result files. The zero value derives
// every field.
type MTEBOptions struct {
	// Task is the MTEB task name, checked and respelled by CheckTask
	// before any work; default TaskName(the dataset directory).
	Task string
	// ForceTask takes a Task that CheckTask refuses without it: another
	// task than the dataset's, or a name of no MTEB task (still a plain
	// name).
	ForceTask bool
	// Revision is the dataset_revision; default the commit of a dataset
	// fetched from a hub (hub.Fetched), else the dataset's fingerprint
	// (report.Eval.DatasetFingerprint).
	Revision string
	// Languages default to eng-Latn.
	Languages []string
	// MainScore is the MTEB name of the main metric; default ndcg_at_10.
	MainScore string
	// Model is MODEL in the model name msrag/MODEL-CONFIG; default the
	// embedder's name. A suite that runs one model with several window
	// sets names each set here.
	Model string
	// IgnoreIdenticalIDs and SkipFirstResult, when set, force the MTEB
	// scoring rules of those names (eval.Rules) either way; nil takes the
	// task's (MTEBRules of Task).
	IgnoreIdenticalIDs, SkipFirstResult *bool
}

// MTEBRules returns the scoring rules MTEB applies to the runs of task (an
// MTEB task name in mteb's spelling: ArguAna drops a query's own document),
// as package mteb's table has them; none for a task MTEB does not know.
func MTEBRules(task string) eval.Rules {
	t, _ := mteb.Get(task)
	return t.Rules
}

// scoring returns the rules the runs of task are scored with: the task's,
// with the rules o forces. The source names the task only when it is one of
// the pinned mteb's; a dataset that is no MTEB task is scored by no rule
// unless o forces one.
func (o MTEBOptions) scoring(task string) report.Scoring {
	s := report.Scoring{Rules: MTEBRules(task), Source: fmt.Sprintf("mteb %s task %s", MTEBVersion, task)}
	if _, ok := mteb.Get(task); !ok {
		s.Source = fmt.Sprintf("none: %s is no task of mteb %s", task, MTEBVersion)
	}
	if o.IgnoreIdenticalIDs != nil || o.SkipFirstResult != nil {
		s.Source = "given, over " + s.Source
	}
	if o.IgnoreIdenticalIDs != nil {
		s.IgnoreIdenticalIDs = *o.IgnoreIdenticalIDs
	}
	if o.SkipFirstResult != nil {
		s.SkipFirstResult = *o.SkipFirstResult
	}
	return s
}

// mtebTasks maps BEIR/MTEB dataset names (directory names, and the NAME of
// hub datasets mteb/NAME) to the names of MTEB's tasks over them.
var mtebTasks = map[string]string{
	"arguana": "ArguAna", "climate-fever": "ClimateFEVER", "dbpedia": "DBPedia", "dbpedia-entity": "DBPedia",
	"fever": "FEVER", "fiqa": "FiQA2018", "hotpotqa": "HotpotQA", "msmarco": "MSMARCO", "nfcorpus": "NFCorpus",
	"nq": "NQ", "quora": "QuoraRetrieval", "scidocs": "SCIDOCS", "scifact": "SciFact", "trec-covid": "TRECCOVID",
	"touche2020": "Touche2020", "webis-touche2020": "Touche2020", "qmsum-lembed": "LEMBQMSumRetrieval",
}

// hubDir matches the directory hub.FetchDataset makes: hf--mteb--NAME@REV.
var hubDir = regexp.MustCompile(`^hf--mteb--(.+)@[^@]+$`)

// TaskName returns the MTEB task of the dataset in directory dir, known by
// its base name (scifact -> SciFact, nfcorpus -> NFCorpus, qmsum-lembed ->
// LEMBQMSumRetrieval, hf--mteb--fiqa@REV -> FiQA2018), or the base name
// itself when it is none of MTEB's.
func TaskName(dir string) string {
	base := filepath.Base(filepath.Clean(dir))
	if base == "." || base == ".." {
		if abs, err := filepath.Abs(dir); err == nil {
			base = filepath.Base(abs) // the directory ".." stands for
		}
	}
	name := base
	if m := hubDir.FindStringSubmatch(base); m != nil {
		name = m[1]
	}
	if t, ok := mtebTasks[strings.ToLower(name)]; ok {
		return t
	}
	return base
}

// resolve fills in the defaults for the dataset ds with fingerprint fp.
func (o MTEBOptions) resolve(ds *corpus.Dataset, fp string) *report.MTEBInfo {
	info := &report.MTEBInfo{Task: o.Task, DatasetRevision: o.Revision, Languages: slices.Clone(o.Languages),
		MainScore: o.MainScore, Model: o.Model}
	if info.Task == "" {
		info.Task = TaskName(ds.Dir)
	}
	if info.DatasetRevision == "" {
		info.DatasetRevision = fp
		if _, _, commit, ok := hub.Fetched(ds.Dir); ok {
			info.DatasetRevision = commit
		}
	}
	if len(info.Languages) == 0 {
		info.Languages = []string{"eng-Latn"}
	}
	if info.MainScore == "" {
		info.MainScore = "ndcg_at_10"
	}
	return info
}

// fingerprint is "sha256:" and the sha256 over the sha256 of the corpus
// (corpusSHA, computed when empty), the queries and the split's qrels files.
func fingerprint(ds *corpus.Dataset, split, corpusSHA string) (string, error) {
	h := sha256.New()
	if corpusSHA == "" {
		src := sourceOf(ds.Corpus)
		if err := src.checksum(); err != nil {
			return "", err
		}
		corpusSHA = src.SHA256
	}
	fmt.Fprintf(h, "corpus %s\n", corpusSHA)
	parts := []struct{ name, path string }{{"queries", ds.Queries}}
	for _, sp := range strings.Split(split, "+") {
		for _, f := range ds.Qrels[sp] {
			parts = append(parts, struct{ name, path string }{"qrels " + sp, f})
		}
	}
	for _, p := range parts {
		src := sourceOf(p.path)
		if err := src.checksum(); err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", p.name, src.SHA256)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// MTEBScoreName returns MTEB's name for the msrag metric m ("ndcg_cut_10" ->
// "ndcg_at_10", "P_5" -> "precision_at_5", "cdr_1" -> "hit_rate_at_1"), and
// false for a metric MTEB does not report: recip_rank, and any cutoff that
// is not one of eval.MTEBCutoffs.
func MTEBScoreName(m string) (string, bool) {
	pm, err := eval.ParseMetric(m)
	if err != nil || !slices.Contains(eval.MTEBCutoffs, pm.K) {
		return "", false
	}
	prefix := pm.Family.MTEBName()
	if prefix == "" {
		return "", false
	}
	return fmt.Sprintf("%s%d", prefix, pm.K), true
}

// mtebScores turns one configuration's means into MTEB's scores of one
// subset: every metric MTEB reports whose cutoff is at most k (a query
// ranks k documents, so a metric at a larger cutoff would not mean what
// MTEB's does), accuracy (MTEB's name for recall@1 in retrieval), the main
// score, hf_subset "default" and the languages.
func mtebScores(r eval.Results, k int, info *report.MTEBInfo) (map[string]any, error) {
	s := map[string]any{}
	for _, m := range r.Metrics {
		name, ok := MTEBScoreName(m)
		pm, _ := eval.ParseMetric(m)
		if !ok || pm.K > k {
			continue
		}
		s[name] = r.Mean[m]
	}
	if v, ok := s["recall_at_1"]; ok {
		s["accuracy"] = v
	}
	main, ok := s[info.MainScore]
	if !ok {
		return nil, fmt.Errorf("experiment: main score %s is not among the scores (each query ranks %d documents): %w", info.MainScore, k, ErrMainScore)
	}
	s["main_score"] = main
	s["hf_subset"] = "default"
	s["languages"] = slices.Clone(info.Languages)
	return s, nil
}

// TaskResult is one MTEB result file, with the fields of mteb's TaskResult
// (mteb/results/task_result.py) and what msrag adds.
type TaskResult struct {
	DatasetRevision string `json:"dataset_revision"`
	TaskName        string `json:"task_name"`
	MTEBVersion     string `json:"mteb_version"`
	// Scores maps the split to one entry per subset: the metric values,
	// main_score, hf_subset and languages.
	Scores map[string][]map[string]any `json:"scores"`
	// EvaluationTime is the run's wall time in seconds, index build
	// included (MTEB's includes encoding the corpus).
	EvaluationTime float64 `json:"evaluation_time"`
	// KgCO2Emissions is not measured: always null.
	KgCO2Emissions *float64 `json:"kg_co2_emissions"`
	// Date is the run's start in Unix seconds.
	Date float64 `json:"date"`
	// Msrag says what produced the scores; MTEB ignores the field.
	Msrag MTEBProvenance `json:"msrag"`
}

// MTEBProvenance is what an MTEB result file records of the msrag run.
type MTEBProvenance struct {
	// Version is Build in one line (report.Eval.MsragVersion).
	Version string `json:"version"`
	// Build is the msrag build and native library versions of the run.
	Build provenance.Build `json:"build"`
	// Batching is how the index's texts and the queries went through the
	// model (report.IndexInfo.Batching).
	Batching           string `json:"batching,omitempty"`
	Model              string `json:"model"`
	Configuration      string `json:"configuration"`
	Kind               string `json:"kind"`
	Fusion             string `json:"fusion,omitempty"`
	UpperBound         bool   `json:"upper_bound,omitempty"`
	Dataset            string `json:"dataset"`
	Split              string `json:"split"`
	DatasetFingerprint string `json:"dataset_fingerprint,omitempty"`
	Windows            []int  `json:"windows"`
	FullWindow         int    `json:"full_window,omitempty"`
	K                  int    `json:"k"`
	ChannelK           int    `json:"window_k"`
	// Scoring is the rules beyond the metrics the run was scored with
	// (results.json's scoring).
	Scoring report.Scoring `json:"scoring"`
}

// MTEBFile is one configuration's result in MTEB's layout.
type MTEBFile struct {
	// Model is the model name MTEB sees: msrag/MODEL-CONFIG (see MTEBFiles).
	Model string
	// Revision is the model revision: the first 12 hex digits of the ONNX
	// model's sha256, or no_revision_available.
	Revision string
	// Path is results/MODEL_DIR/REVISION/TASK.json, slash-separated, where
	// MODEL_DIR is Model with "/" written "__", as mteb does.
	Path   string
	Result TaskResult
	// Meta is model_meta.json, in the same directory.
	Meta map[string]any
}

// MTEBFiles returns the MTEB result of every configuration of e (the
// oracle included, named as such and marked upper_bound). e.MTEB must be
// set. The model MTEB sees is msrag/MODEL-CONFIG, MODEL being e.MTEB.Model
// or else e.Model.Name, and CONFIG the name of the configuration's run file
// (w100, rrf, rrf-100+200) or "oracle"; characters other than letters,
// digits and ._+=,-_ are written "-".
func MTEBFiles(e *report.Eval) ([]MTEBFile, error) {
	if e.MTEB == nil {
		return nil, fmt.Errorf("experiment: results of %s have no MTEB names", e.Dataset)
	}
	rev := modelRevision(e.Model.ModelSHA256)
	var out []MTEBFile
	for _, c := range e.Configs {
		scores, err := mtebScores(c.Results, e.K, e.MTEB)
		if err != nil {
			return nil, fmt.Errorf("experiment: configuration %s: %w", c.Name, err)
		}
		model := e.MTEB.Model
		if model == "" {
			model = e.Model.Name
		}
		if !isFileName(e.MTEB.Task) {
			return nil, fmt.Errorf("experiment: MTEB task %q of %s is no file name: %w", e.MTEB.Task, e.Dataset, ErrTaskName)
		}
		name := "msrag/" + pathSafe(model) + "-" + configFileName(c)
		f := MTEBFile{Model: name, Revision: rev,
			Path: "results/" + strings.ReplaceAll(name, "/", "__") + "/" + rev + "/" + e.MTEB.Task + ".json",
			Result: TaskResult{
				DatasetRevision: e.MTEB.DatasetRevision, TaskName: e.MTEB.Task, MTEBVersion: MTEBVersion,
				Scores:         map[string][]map[string]any{e.Split: {scores}},
				EvaluationTime: e.Timings.Total, Date: float64(e.Created.UnixMilli()) / 1000,
				Msrag: MTEBProvenance{Version: e.MsragVersion, Build: e.Build, Batching: e.Index.Batching, Model: e.Model.Name, Configuration: c.Name, Kind: c.Kind,
					Fusion: c.Fusion, UpperBound: c.UpperBound, Dataset: e.Dataset, Split: e.Split,
					DatasetFingerprint: e.DatasetFingerprint, Windows: e.Windows, FullWindow: e.FullWindow, K: e.K, ChannelK: e.ChannelK,
					Scoring: e.Scoring},
			},
			Meta: modelMeta(name, rev, e.Model),
		}
		out = append(out, f)
	}
	return out, nil
}

// WriteMTEB writes the MTEB result of every configuration of e under dir
// (results/MODEL_DIR/REVISION/TASK.json and model_meta.json beside each), so
// that mteb.ResultCache(cache_path=dir).load_results() reads them, and
// returns the result files written.
func WriteMTEB(dir string, e *report.Eval) ([]string, error) {
	files, err := MTEBFiles(e)
	if err != nil {
		return nil, err
	}
	return writeMTEBFiles(dir, files)
}

// writeMTEBFiles writes files under dir and returns the result files' paths.
func writeMTEBFiles(dir string, files []MTEBFile) ([]string, error) {
	var paths []string
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return paths, fmt.Errorf("experiment: %w", err)
		}
		if err := writeJSON(path, f.Result); err != nil {
			return paths, err
		}
		if err := writeJSON(filepath.Join(filepath.Dir(path), "model_meta.json"), f.Meta); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// modelMeta is model_meta.json: mteb's ModelMeta fields, unknown ones null.
// mteb reads name and revision from it; the rest validates as a ModelMeta.
func modelMeta(name, rev string, m report.Model) map[string]any {
	meta := map[string]any{"name": name, "revision": rev, "adapted_from": m.Name,
		"framework": []string{"ONNX"}, "modalities": []string{"text"}, "model_type": []string{"dense"}}
	if m.Dims > 0 {
		meta["embed_dim"] = m.Dims
	}
	if m.MaxTokens > 0 {
		meta["max_tokens"] = m.MaxTokens
	}
	for _, k := range []string{"loader", "release_date", "languages", "n_parameters", "memory_usage_mb", "max_tokens",
		"embed_dim", "license", "open_weights", "public_training_code", "public_training_data", "reference",
		"similarity_fn_name", "use_instructions", "training_datasets"} {
		if _, ok := meta[k]; !ok {
			meta[k] = nil
		}
	}
	return meta
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// modelRevision is the revision directory of a model with this sha256.
func modelRevision(sha string) string {
	if hex64.MatchString(sha) {
		return sha[:12]
	}
	return "no_revision_available"
}

// configFileName is the configuration's name as in its run file (rrf,
// rrf-100+200, rrf_c=60,base=1), or its name for the oracle.
func configFileName(c report.Config) string {
	if c.RunFile != "" {
		return strings.TrimSuffix(filepath.Base(c.RunFile), filepath.Ext(c.RunFile))
	}
	return pathSafe(c.Name)
}

// pathSafe keeps letters, digits and ._+=,-_ and writes anything else as "-".
func pathSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+=,-_", r)) {
			return r
		}
		return '-'
	}, s)
}
