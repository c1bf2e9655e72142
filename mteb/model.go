package mteb

import (
	"slices"
	"strings"
)

// Model is a model that the pinned mteb runs with prompts of its own
// (its ModelMeta's loader_kwargs model_prompts): MTEB puts them in front of
// a task's queries and documents instead of those the model's
// sentence-transformers configuration gives.
type Model struct {
	// Name is the model's hub repository (e.g. "intfloat/multilingual-e5-small").
	Name string
	// Revision is the commit of the repository MTEB pins.
	Revision string
	// Loader is the class of mteb that runs it (e.g.
	// "SentenceTransformerEncoderWrapper").
	Loader string
	// Prompts are the prompts by key: a task name, a task type, "query" or
	// "document", or one of the first two joined to one of the last two by
	// "-" (see [Model.Prompt]).
	Prompts map[string]string
}

// Prompt roles: MTEB's PromptType values.
const (
	RoleQuery    = "query"
	RoleDocument = "document"
)

// LookupModel returns the model named name (ORG/NAME), and whether mteb
// runs it with prompts of its own.
func LookupModel(name string) (Model, bool) {
	i, ok := slices.BinarySearchFunc(models, name, func(m Model, n string) int { return strings.Compare(m.Name, n) })
	if !ok {
		return Model{}, false
	}
	m := models[i]
	m.Prompts = clonePrompts(m.Prompts)
	return m, true
}

// Prompt returns the prompt MTEB gives texts of role (RoleQuery or
// RoleDocument) of task, and the key it was found under, in the order of
// mteb's get_prompt_name: TASK-ROLE, TASK, TYPE-ROLE, TYPE, ROLE. ok is
// false when no key matches (MTEB then gives none).
func (m Model) Prompt(t Task, role string) (prompt, key string, ok bool) {
	for _, k := range []string{t.Name + "-" + role, t.Name, t.Type + "-" + role, t.Type, role} {
		if p, found := m.Prompts[k]; found && !strings.HasPrefix(k, "-") && k != "" {
			return p, k, true
		}
	}
	return "", "", false
}

func clonePrompts(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}
