package mteb

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/eval"
)

// Task is one MTEB retrieval task, as the pinned mteb release defines it.
type Task struct {
	// Name is the task's name in mteb's spelling (e.g. "SciFact").
	Name string
	// Dataset is the hub repository of the task's data (e.g. "mteb/scifact").
	Dataset string
	// Revision is the commit of Dataset that MTEB evaluates on.
	Revision string
	// Config is the dataset's configuration (the subset of a repository that
	// holds several data sets, e.g. "qmsum" of "dwzhu/LongEmbed"); empty when
	// the repository holds one.
	Config string
	// EvalSplits are the splits MTEB reports (e.g. ["test"]).
	EvalSplits []string
	// MainScore is the metric MTEB ranks by (e.g. "ndcg_at_10").
	MainScore string
	// Type is the task's type (e.g. "Retrieval", "Reranking"), which
	// MTEB's choice of a model's prompt reads (see [Model.Prompt]).
	Type string
	// Languages are the task's languages (ISO 639-3 and script), over all
	// its subsets.
	Languages []string
	// Subsets are the task's language subsets, for tasks that have several;
	// empty otherwise.
	Subsets []string
	// Modalities are what the task's queries and documents are made of
	// ("text", "image", "audio", "video").
	Modalities []string
	// Rules are the scoring rules MTEB applies to the task's runs before
	// scoring them (ArguAna drops a query's own document).
	Rules eval.Rules
}

// TextOnly reports whether the task's queries and documents are text only,
// the tasks msrag can run.
func (t Task) TextOnly() bool {
	return len(t.Modalities) == 1 && t.Modalities[0] == "text"
}

// ErrUnknownTask reports a task name that is none of the pinned mteb's
// retrieval tasks.
var ErrUnknownTask = errors.New("unknown MTEB retrieval task")

// Get returns the task spelled exactly name, and whether there is one.
func Get(name string) (Task, bool) {
	i, ok := slices.BinarySearchFunc(tasks, name, func(t Task, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return Task{}, false
	}
	return clone(tasks[i]), true
}

// Lookup returns the task named name in mteb's spelling or in a spelling
// that differs only in case; respelled reports the latter (t.Name is
// mteb's spelling). Any other name is an error wrapping [ErrUnknownTask]
// that names up to three close task names.
func Lookup(name string) (t Task, respelled bool, err error) {
	if t, ok := Get(name); ok {
		return t, false, nil
	}
	for _, c := range tasks {
		if strings.EqualFold(c.Name, name) {
			return clone(c), true, nil
		}
	}
	msg := fmt.Sprintf("mteb: %q: %v of mteb %s", name, ErrUnknownTask, Version)
	if close := closeNames(name, 3); len(close) > 0 {
		msg += " (did you mean " + strings.Join(close, ", ") + "?)"
	}
	return Task{}, false, fmt.Errorf("%s: %w", msg, ErrUnknownTask)
}

// Tasks returns every task, sorted by name.
func Tasks() []Task {
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		out[i] = clone(t)
	}
	return out
}

// clone copies t's slices, so that callers cannot change the table.
func clone(t Task) Task {
	t.EvalSplits = slices.Clone(t.EvalSplits)
	t.Languages = slices.Clone(t.Languages)
	t.Subsets = slices.Clone(t.Subsets)
	t.Modalities = slices.Clone(t.Modalities)
	return t
}

// closeNames returns up to n task names that contain name or that name
// contains, case-insensitively, shortest first; for names of fewer than
// three characters, none.
func closeNames(name string, n int) []string {
	q := strings.ToLower(strings.TrimSpace(name))
	if len(q) < 3 {
		return nil
	}
	var out []string
	for _, t := range tasks {
		l := strings.ToLower(t.Name)
		if strings.Contains(l, q) || strings.Contains(q, l) {
			out = append(out, t.Name)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
