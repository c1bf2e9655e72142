package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/mteb"
)

// ForTask points s at dir, the fetched dataset of the MTEB task t
// (hub.FetchDataset of "mteb:TASK"): the task's evaluation split unless
// s.Split names one (a split the task does not evaluate is an error, and so
// is a task of several splits without one), and, in the MTEB result files,
// the task's name, languages and main score unless s.MTEB sets them. The
// task's scoring rules follow from its name (MTEBRules).
func (s *Spec) ForTask(dir string, t mteb.Task) error {
	s.Dataset = dir
	switch {
	case s.Split == "" && len(t.EvalSplits) == 1:
		s.Split = t.EvalSplits[0]
	case s.Split == "":
		return fmt.Errorf("experiment: MTEB task %s evaluates splits %s: name one (--split)", t.Name, strings.Join(t.EvalSplits, ", "))
	case !slices.Contains(t.EvalSplits, s.Split):
		return fmt.Errorf("experiment: MTEB task %s evaluates split %s, not %s", t.Name, strings.Join(t.EvalSplits, ", "), s.Split)
	}
	if s.MTEB.Task == "" {
		s.MTEB.Task = t.Name
	}
	if len(s.MTEB.Languages) == 0 {
		s.MTEB.Languages = slices.Clone(t.Languages)
	}
	if s.MTEB.MainScore == "" {
		s.MTEB.MainScore = t.MainScore
	}
	return nil
}

// MTEBPrompts returns the prompts the pinned mteb puts in front of task t's
// queries and documents for the hub model repo (ORG/NAME), and a line that
// says which source won. ok is false when mteb's model metadata gives the
// model no prompts of its own: MTEB then runs it with its
// sentence-transformers configuration's prompts, which msrag-model.json
// holds. Where it gives some, they replace the configuration's, none for a
// role they do not cover, as mteb's SentenceTransformerEncoderWrapper does.
func MTEBPrompts(repo string, t mteb.Task) (query, document, source string, ok bool) {
	m, ok := mteb.LookupModel(repo)
	if !ok {
		return "", "", fmt.Sprintf("mteb %s's model metadata gives %s no prompts: those of its sentence-transformers configuration apply", mteb.Version, repo), false
	}
	q, qk, _ := m.Prompt(t, mteb.RoleQuery)
	d, dk, _ := m.Prompt(t, mteb.RoleDocument)
	source = fmt.Sprintf("mteb %s's model metadata of %s for %s (keys %q, %q), over its sentence-transformers configuration's", mteb.Version, repo, t.Name, qk, dk)
	return q, d, source, true
}
