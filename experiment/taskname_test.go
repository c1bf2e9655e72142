package experiment_test

import (
	"errors"
	"testing"

	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/mteb"
)

// TestCheckTask checks which task names name an evaluation's MTEB files:
// mteb's tasks in mteb's spelling, the dataset's own unless forced, never a
// path. Before, any string was taken as it was and became a file name.
func TestCheckTask(t *testing.T) {
	for _, tc := range []struct {
		given, dir string
		force      bool
		want       string
		respelled  bool
		err        error
	}{
		{"", "data/scifact", false, "SciFact", false, nil},
		{"", "data/hf--mteb--arguana@c22ab2a5", false, "ArguAna", false, nil},
		{"", "data/my data\n", false, "my-data-", false, nil},
		{"my-data-", "data/my data\n", false, "my-data-", false, nil}, // the default, given again
		{"", "data/.hidden", false, "-hidden", false, nil},
		{"SciFact", "data/scifact", false, "SciFact", false, nil},
		{"arguana", "data/arguana", false, "ArguAna", true, nil},
		{"ARGUANA", "data/sub", false, "ArguAna", true, nil},
		{"SciFact", "data/sf50", false, "SciFact", false, nil}, // a dataset of its own may be named as a task
		{"SciFact", "data/arguana", false, "", false, experiment.ErrTask},
		{"SciFact", "data/arguana", true, "SciFact", false, nil},
		{"scifact", "data/arguana", true, "SciFact", true, nil},
		{"NoSuchTask", "data/d", false, "", false, mteb.ErrUnknownTask},
		{"NoSuchTask", "data/d", true, "NoSuchTask", false, nil},
		{"ABOI2VRetrieval", "data/d", false, "", false, experiment.ErrTask}, // images and video
		{"ABOI2VRetrieval", "data/d", true, "ABOI2VRetrieval", false, nil},
		{"../../../../escaped-task", "data/d", false, "", false, experiment.ErrTaskName},
		{"../../../../escaped-task", "data/d", true, "", false, experiment.ErrTaskName},
		{"a/b", "data/d", true, "", false, experiment.ErrTaskName},
		{`a\b`, "data/d", true, "", false, experiment.ErrTaskName},
		{"Sci Fact", "data/d", true, "", false, experiment.ErrTaskName},
		{"SciFact\n", "data/d", true, "", false, experiment.ErrTaskName},
		{"..", "data/d", true, "", false, experiment.ErrTaskName},
		{".x", "data/d", true, "", false, experiment.ErrTaskName},
	} {
		got, respelled, err := experiment.CheckTask(tc.given, tc.dir, tc.force)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("CheckTask(%q, %q, %v): %v, want %v", tc.given, tc.dir, tc.force, err, tc.err)
		case tc.err == nil && (err != nil || got != tc.want || respelled != tc.respelled):
			t.Errorf("CheckTask(%q, %q, %v) = %q, %v, %v; want %q, %v", tc.given, tc.dir, tc.force, got, respelled, err, tc.want, tc.respelled)
		}
	}
}

// TestMTEBFilesRefusePaths checks that results whose task is no file name
// (a results.json written by hand) give no MTEB file outside its place.
func TestMTEBFilesRefusePaths(t *testing.T) {
	e := toyEval()
	e.MTEB.Task = "../../x"
	if _, err := experiment.MTEBFiles(e); !errors.Is(err, experiment.ErrTaskName) {
		t.Errorf("task ../../x: %v, want ErrTaskName", err)
	}
}
