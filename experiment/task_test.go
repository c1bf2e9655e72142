package experiment

import (
	"strings"
	"testing"

	"github.com/msrag/msrag/mteb"
)

// TestForTask checks that an MTEB task's split, name, languages and main
// score reach the spec, and that a split the task does not evaluate is
// refused.
func TestForTask(t *testing.T) {
	task, _ := mteb.Get("SciFact")
	var s Spec
	if err := s.ForTask("/data/x", task); err != nil {
		t.Fatal(err)
	}
	if s.Dataset != "/data/x" || s.Split != "test" || s.MTEB.Task != "SciFact" || s.MTEB.MainScore != "ndcg_at_10" || len(s.MTEB.Languages) != 1 {
		t.Errorf("%+v", s)
	}
	s = Spec{Split: "train"}
	if err := s.ForTask("/data/x", task); err == nil || !strings.Contains(err.Error(), "evaluates split test, not train") {
		t.Errorf("error %v", err)
	}
	two := mteb.Task{Name: "T", EvalSplits: []string{"dev", "test"}}
	s = Spec{}
	if err := s.ForTask("/data/x", two); err == nil || !strings.Contains(err.Error(), "--split") {
		t.Errorf("error %v", err)
	}
}

// TestMTEBPrompts checks the prompts the pinned mteb's model metadata gives
// the method's models for a retrieval task (mteb's e5_models.py and
// nomic_models.py), and that a model it gives none is said to keep its
// configuration's.
func TestMTEBPrompts(t *testing.T) {
	task, _ := mteb.Get("SciFact")
	for _, tc := range []struct{ repo, query, doc string }{
		{"intfloat/multilingual-e5-small", "query: ", "passage: "},
		{"nomic-ai/nomic-embed-text-v1", "search_query: ", "search_document: "},
	} {
		q, d, source, ok := MTEBPrompts(tc.repo, task)
		if !ok || q != tc.query || d != tc.doc || !strings.Contains(source, "model metadata of "+tc.repo) {
			t.Errorf("%s: %q %q %q %v", tc.repo, q, d, source, ok)
		}
	}
	if _, _, source, ok := MTEBPrompts("sentence-transformers/all-MiniLM-L6-v2", task); ok || !strings.Contains(source, "sentence-transformers configuration") {
		t.Errorf("all-MiniLM-L6-v2: %v %q", ok, source)
	}
}
