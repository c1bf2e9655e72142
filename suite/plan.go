package suite

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/experiment"
)

// Planned is one evaluation of a suite: a dataset with a model and one of
// its window sets.
type Planned struct {
	// Name is the run's directory under the suite's Out:
	// DATASET-MODEL-wA-B-C.
	Name string
	// Dataset is the dataset entry with its defaults filled in and Dir
	// resolved.
	Dataset Dataset
	Model   string
	Windows []int
	Configs []experiment.Config
	// Index is the index directory: Indices/CORPUS-MODEL-wA-B-C, CORPUS
	// being the base name of the dataset's directory, so that datasets
	// sharing a corpus (two splits of one directory) share the index.
	Index string
	MTEB  experiment.MTEBOptions
}

// Plan is what a suite runs, in the order of its summary: dataset by
// dataset, each with every model and window set in the order of the file.
type Plan struct {
	Out, Indices string
	Runs         []Planned
}

// PlanOf validates s and lays out its runs, reading no file: Check also
// opens every dataset and model.
func PlanOf(s Suite) (*Plan, error) { return s.plan() }

// plan validates s and lays out its runs. It reads no file. Its errors
// wrap ErrInvalid.
func (s *Suite) plan() (*Plan, error) {
	p, err := s.layout()
	if err != nil {
		return nil, invalid{err}
	}
	return p, nil
}

func (s *Suite) layout() (*Plan, error) {
	if err := s.checkFields(); err != nil {
		return nil, err
	}
	p := &Plan{Out: s.path(s.Out), Indices: s.path(s.Indices)}
	if p.Indices == "" {
		p.Indices = filepath.Join(p.Out, "indices")
	}
	datasets, err := s.datasets()
	if err != nil {
		return nil, err
	}
	mtebNames := map[string]string{} // task and MTEB model -> run
	for _, d := range datasets {
		for mi, m := range s.Models {
			for _, ws := range m.WindowSets {
				r, err := s.planRun(d, mi, ws, p.Indices)
				if err != nil {
					return nil, err
				}
				key := r.MTEB.Task + " " + m.Name + " " + r.MTEB.Model
				if other, ok := mtebNames[key]; ok {
					return nil, fmt.Errorf("suite: runs %s and %s would both write MTEB task %s for model %s: "+
						"give one of the datasets a \"task\" of its own", other, r.Name, r.MTEB.Task, m.Name)
				}
				mtebNames[key] = r.Name
				p.Runs = append(p.Runs, r)
			}
		}
	}
	return p, nil
}

// checkFields checks the fields that need no defaults.
func (s *Suite) checkFields() error {
	switch {
	case s.Out == "":
		return errors.New(`suite: no output directory: set "out" (or pass --out)`)
	case len(s.Datasets) == 0:
		return errors.New(`suite: no dataset: list them in "datasets"`)
	case len(s.Models) == 0:
		return errors.New(`suite: no model: list them in "models"`)
	case s.K < 0 || s.ChannelK < 0 || s.Batch < 0:
		return fmt.Errorf("suite: k %d, window_k %d and batch %d must not be negative", s.K, s.ChannelK, s.Batch)
	}
	for i, m := range s.Models {
		if m.Name == "" {
			return fmt.Errorf("suite: model %d has no name", i+1)
		}
		if len(m.WindowSets) == 0 {
			return fmt.Errorf(`suite: model %s has no window set: give "window_sets", such as [[100, 200, 500]]`, m.Name)
		}
		for j, ws := range m.WindowSets {
			if err := checkWindows(ws); err != nil {
				return fmt.Errorf("suite: model %s, window set %d %v: %w", m.Name, j+1, ws, err)
			}
			if slices.ContainsFunc(m.WindowSets[:j], func(o []int) bool { return slices.Equal(o, ws) }) {
				return fmt.Errorf("suite: model %s: window set %v is given twice", m.Name, ws)
			}
		}
		if slices.ContainsFunc(s.Models[:i], func(o Model) bool { return o.Name == m.Name }) {
			return fmt.Errorf("suite: model %s is listed twice: give it several window_sets instead", m.Name)
		}
	}
	return nil
}

func checkWindows(ws []int) error {
	if len(ws) == 0 {
		return errors.New("no window size")
	}
	for i, w := range ws {
		if w <= 0 {
			return fmt.Errorf("window %d is not positive", w)
		}
		if slices.Contains(ws[:i], w) {
			return fmt.Errorf("window %d is repeated", w)
		}
	}
	return nil
}

// datasets returns the datasets with their defaults and resolved
// directories, checking that names are unique and that distinct
// directories do not share a base name (which names their indices).
func (s *Suite) datasets() ([]Dataset, error) {
	var out []Dataset
	corpora := map[string]string{} // base name -> directory
	for i, d := range s.Datasets {
		if d.Dir == "" {
			return nil, fmt.Errorf(`suite: dataset %d has no "dir"`, i+1)
		}
		d.Dir = s.path(d.Dir)
		base := filepath.Base(filepath.Clean(d.Dir))
		if d.Name == "" {
			d.Name = base
		}
		if d.Split == "" {
			d.Split = "test"
		}
		if err := d.checkNames(); err != nil {
			return nil, fmt.Errorf("suite: dataset %d (%s): %w", i+1, d.Name, err)
		}
		if slices.ContainsFunc(out, func(o Dataset) bool { return o.Name == d.Name }) {
			return nil, fmt.Errorf(`suite: dataset name %s is used twice: give each a "name" of its own`, d.Name)
		}
		if other, ok := corpora[base]; ok && filepath.Clean(other) != filepath.Clean(d.Dir) {
			return nil, fmt.Errorf("suite: datasets %s and %s are different directories with the same name %s, "+
				"which names their indices: rename one", other, d.Dir, base)
		}
		corpora[base] = d.Dir
		out = append(out, d)
	}
	return out, nil
}

// checkNames checks the names a dataset's split, task and revision become
// part of (qrels/SPLIT.tsv, the MTEB result files' paths): each a plain
// name, never a path that leaves its directory.
func (d Dataset) checkNames() error {
	for _, sp := range strings.Split(d.Split, "+") {
		if !plainName(sp) {
			return fmt.Errorf("split %q: want names such as test or train+dev, each a plain name", d.Split)
		}
	}
	for _, f := range []struct{ field, v string }{{"task", d.Task}, {"revision", d.Revision}, {"main_score", d.MainScore}} {
		if f.v != "" && !plainName(f.v) {
			return fmt.Errorf("%s %q: want a plain name (no path separator, control character, . or ..)", f.field, f.v)
		}
	}
	for _, l := range d.Languages {
		if !plainName(l) {
			return fmt.Errorf("language %q: want a plain name such as eng-Latn", l)
		}
	}
	return nil
}

// plainName reports a non-empty name that is no path: no separator, no
// control character, not "." or "..".
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) &&
		!strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// planRun lays out dataset d with model mi at window set ws, its index in
// the directory indices.
func (s *Suite) planRun(d Dataset, mi int, ws []int, indices string) (Planned, error) {
	m := s.Models[mi]
	tag := safe(m.Name) + "-w" + joinInts(ws, "-")
	if m.FP16 {
		tag = safe(m.Name) + "-fp16-w" + joinInts(ws, "-")
	}
	r := Planned{Name: safe(d.Name) + "-" + tag, Dataset: d, Model: m.Name, Windows: slices.Clone(ws),
		Index: filepath.Join(indices, safe(filepath.Base(filepath.Clean(d.Dir)))+"-"+tag)}
	configs := m.Configs
	if configs == "" {
		configs = s.Configs
	}
	if configs == "" {
		configs = experiment.DefaultConfigs
	}
	var err error
	if r.Configs, err = experiment.ParseConfigs(configs, experiment.EvalLayout(chunk.Sizes(ws...))); err != nil {
		return r, fmt.Errorf("suite: model %s, windows %v: %w", m.Name, ws, err)
	}
	r.MTEB = experiment.MTEBOptions{Task: d.Task, ForceTask: d.ForceTask, Revision: d.Revision, Languages: d.Languages, MainScore: d.MainScore}
	task, _, err := experiment.CheckTask(d.Task, d.Dir, d.ForceTask)
	if errors.Is(err, experiment.ErrTask) {
		return r, fmt.Errorf(`suite: dataset %s: "task": %w ("force_task": true takes it all the same)`, d.Name, err)
	}
	if err != nil {
		return r, fmt.Errorf(`suite: dataset %s: "task": %w`, d.Name, err)
	}
	r.MTEB.Task = task
	if len(m.WindowSets) > 1 {
		r.MTEB.Model = tag // one MTEB model per window set
	}
	return r, nil
}

// safe keeps letters, digits and .+=,_- of a name for a directory and writes
// anything else as "-".
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".+=,_-", r)) {
			return r
		}
		return '-'
	}, s)
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}
