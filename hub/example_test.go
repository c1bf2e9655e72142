package hub_test

import (
	"errors"
	"fmt"

	"github.com/msrag/msrag/hub"
)

// ExampleParseDatasetName shows pinned and explicit revisions, a task by
// name and a task msrag cannot fetch.
func ExampleParseDatasetName() {
	for _, name := range []string{"hf:mteb/scifact", "hf:mteb/nfcorpus@main", "mteb:ArguAna", "mteb:LEMBQMSumRetrieval"} {
		ref, err := hub.ParseDatasetName(name)
		if errors.Is(err, hub.ErrTask) {
			fmt.Printf("%s: not fetched\n", name)
			continue
		}
		fmt.Printf("%s: %s at %s (pinned %v) into %s\n", name, ref.Repo, ref.Revision, ref.Pinned, ref.DirName())
	}
	// Output:
	// hf:mteb/scifact: dataset mteb/scifact at d56462d0e63a25450459c4f213e49ffdb866f7f9 (pinned true) into hf--mteb--scifact@d56462d0e63a25450459c4f213e49ffdb866f7f9
	// hf:mteb/nfcorpus@main: dataset mteb/nfcorpus at main (pinned false) into hf--mteb--nfcorpus@main
	// mteb:ArguAna: dataset mteb/arguana at c22ab2a51041ffd869aaddef7af8d8215647e41a (pinned true) into hf--mteb--arguana@c22ab2a51041ffd869aaddef7af8d8215647e41a
	// mteb:LEMBQMSumRetrieval: not fetched
}
