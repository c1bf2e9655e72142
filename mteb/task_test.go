package mteb_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/mteb"
)

// TestKnownTasks checks entries of the table against mteb 2.26.24's task
// metadata as mteb itself prints it (TaskMetadata.dataset, eval_splits,
// main_score; AbsTaskRetrieval.ignore_identical_ids).
func TestKnownTasks(t *testing.T) {
	for _, want := range []mteb.Task{
		{Name: "SciFact", Dataset: "mteb/scifact", Revision: "d56462d0e63a25450459c4f213e49ffdb866f7f9", EvalSplits: []string{"test"}},
		{Name: "NFCorpus", Dataset: "mteb/nfcorpus", Revision: "ec0fa4fe99da2ff19ca1214b7966684033a58814", EvalSplits: []string{"test"}},
		{Name: "ArguAna", Dataset: "mteb/arguana", Revision: "c22ab2a51041ffd869aaddef7af8d8215647e41a", EvalSplits: []string{"test"},
			Rules: eval.Rules{IgnoreIdenticalIDs: true}},
		{Name: "FiQA2018", Dataset: "mteb/fiqa", Revision: "27a168819829fe9bcd655c2df245fb19452e8e06", EvalSplits: []string{"test"},
			Rules: eval.Rules{IgnoreIdenticalIDs: true}},
		{Name: "MSMARCO", Dataset: "mteb/msmarco", Revision: "c5a29a104738b98a9e76336939199e264163d4a0", EvalSplits: []string{"dev"},
			Rules: eval.Rules{IgnoreIdenticalIDs: true}},
		{Name: "LEMBQMSumRetrieval", Dataset: "dwzhu/LongEmbed", Revision: "6e346642246bfb4928c560ee08640dc84d074e8c", Config: "qmsum",
			EvalSplits: []string{"test"}},
	} {
		got, ok := mteb.Get(want.Name)
		if !ok {
			t.Errorf("Get(%q): no such task", want.Name)
			continue
		}
		if got.Dataset != want.Dataset || got.Revision != want.Revision || got.Config != want.Config ||
			!slices.Equal(got.EvalSplits, want.EvalSplits) || got.Rules != want.Rules || got.MainScore != "ndcg_at_10" || !got.TextOnly() {
			t.Errorf("Get(%q) = %+v, want %+v", want.Name, got, want)
		}
	}
}

// TestTable checks the table as a whole: mteb 2.26.24 has 1081 retrieval
// tasks, 71 of them with a scoring rule, and no two names that differ only
// in case (which Lookup's case-insensitive mapping relies on).
func TestTable(t *testing.T) {
	all := mteb.Tasks()
	if len(all) != 1081 {
		t.Errorf("%d tasks, want 1081", len(all))
	}
	seen, rules := map[string]string{}, 0
	for _, task := range all {
		l := strings.ToLower(task.Name)
		if prev, ok := seen[l]; ok {
			t.Errorf("%q and %q differ only in case", prev, task.Name)
		}
		seen[l] = task.Name
		if task.Rules != (eval.Rules{}) {
			rules++
		}
		if task.Dataset == "" || task.Revision == "" || len(task.EvalSplits) == 0 {
			t.Errorf("%q: dataset, revision or splits missing: %+v", task.Name, task)
		}
	}
	if rules != 71 {
		t.Errorf("%d tasks with rules, want 71", rules)
	}
	if !slices.IsSortedFunc(all, func(a, b mteb.Task) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("tasks not sorted by name")
	}
}

func TestLookup(t *testing.T) {
	for _, c := range []struct {
		in, want  string
		respelled bool
	}{
		{"ArguAna", "ArguAna", false},
		{"arguana", "ArguAna", true},
		{"SCIFACT", "SciFact", true},
		{"lembqmsumretrieval", "LEMBQMSumRetrieval", true},
	} {
		got, respelled, err := mteb.Lookup(c.in)
		if err != nil || got.Name != c.want || respelled != c.respelled {
			t.Errorf("Lookup(%q) = %q, %v, %v; want %q, %v", c.in, got.Name, respelled, err, c.want, c.respelled)
		}
	}
	for _, bad := range []string{"", "NoSuchTask", "../../escaped-task", "a/b", "Sci Fact", "SciFact\n", " SciFact"} {
		if _, _, err := mteb.Lookup(bad); !errors.Is(err, mteb.ErrUnknownTask) {
			t.Errorf("Lookup(%q): err %v, want ErrUnknownTask", bad, err)
		}
	}
	_, _, err := mteb.Lookup("scifac")
	if err == nil || !strings.Contains(err.Error(), "SciFact") {
		t.Errorf("Lookup(scifac): %v, want a suggestion of SciFact", err)
	}
}

// TestTableIsACopy checks that a caller cannot change the table through a
// returned task.
func TestTableIsACopy(t *testing.T) {
	a, _ := mteb.Get("SciFact")
	a.EvalSplits[0] = "train"
	b, _ := mteb.Get("SciFact")
	if b.EvalSplits[0] != "test" {
		t.Error("changing a returned task's splits changed the table")
	}
}
