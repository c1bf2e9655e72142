package hashembed

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// words make the documents of WriteDataset.
var words = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega")

// WriteDataset writes a BEIR dataset into dir for tests: docs documents of
// 20 to 120 words (ids d0, d1, ...), and per split ("train", "test") one
// query per document of a quarter of the documents, whose text is the
// document's words 8 to 15, judged relevant to that document. With the Hash
// embedder a query's own document is found by its short windows first.
func WriteDataset(dir string, docs int) error {
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		return err
	}
	var corpus, queries strings.Builder
	qrels := map[string]*strings.Builder{"train": {}, "test": {}}
	for _, b := range qrels {
		b.WriteString("query-id\tcorpus-id\tscore\n")
	}
	for d := range docs {
		var ws []string
		for i := range 20 + (d*37)%100 {
			ws = append(ws, words[(d*5+i*i+i*d)%len(words)])
		}
		fmt.Fprintf(&corpus, `{"_id": "d%d", "title": "", "text": %q}`+"\n", d, strings.Join(ws, " "))
		if d%4 != 0 {
			continue
		}
		split := "train"
		if d%8 == 0 {
			split = "test"
		}
		fmt.Fprintf(&queries, `{"_id": "q%d", "text": %q}`+"\n", d, strings.Join(ws[8:16], " "))
		fmt.Fprintf(qrels[split], "q%d\td%d\t1\n", d, d)
	}
	files := map[string]string{"corpus.jsonl": corpus.String(), "queries.jsonl": queries.String(),
		"qrels/train.tsv": qrels["train"].String(), "qrels/test.tsv": qrels["test"].String()}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}
