package corpus_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
)

// TestBadIDsAreRefused: an id that would split or shift a TREC line is
// refused by every reader, naming the file and the line or row.
func TestBadIDsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file, data, want string
		read                   func(t testing.TB, path string) error
	}{
		{"document id with a newline", "c.jsonl", `{"_id":"a\nb","text":"x"}` + "\n", `c.jsonl line 1: id "a\nb" holds U+000A`, readDocs},
		{"document id with a tab", "c.jsonl", `{"_id":"a","text":"x"}` + "\n" + `{"_id":"b\tc","text":"y"}` + "\n", `c.jsonl line 2: id "b\tc" holds U+0009`, readDocs},
		{"document id with a space", "c.jsonl", `{"_id":"a b","text":"x"}` + "\n", `id "a b" holds U+0020`, readDocs},
		{"document id with NUL", "c.jsonl", `{"_id":"a\u0000","text":"x"}` + "\n", `holds U+0000`, readDocs},
		{"document id with a line separator", "c.jsonl", `{"_id":"a\u2028","text":"x"}` + "\n", `holds U+2028`, readDocs},
		{"numeric id", "c.jsonl", `{"_id":12,"text":"x"}` + "\n", "", readDocs},
		{"query id with a space", "q.tsv", "q 1\tsome text\n", `q.tsv line 1: id "q 1" holds U+0020`, readQueries},
		{"query id with CR", "q.jsonl", `{"_id":"q\r","text":"t"}` + "\n", `holds U+000D`, readQueries},
		{"qrels id with a control character", "qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td\x01\t1\n", `qrels.tsv line 2: id "d\x01" holds U+0001`, readQrels},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			writeFile(t, path, []byte(tc.data))
			err := tc.read(t, path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, corpus.ErrBadID) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrBadID with %q", err, tc.want)
			}
		})
	}
}

func readDocs(t testing.TB, path string) error {
	_, _, err := readAll(t, path, corpus.Options{})
	return err
}

func readQueries(_ testing.TB, path string) error {
	_, err := corpus.ReadQueries(path, corpus.Options{})
	return err
}

func readQrels(_ testing.TB, path string) error {
	_, err := corpus.ReadQrels(path, corpus.Options{})
	return err
}

// TestLineWithoutEnd: a line longer than the limit (a gzip bomb without line
// breaks) is refused, naming the file and the line, instead of being read
// into memory whole.
func TestLineWithoutEnd(t *testing.T) {
	defer corpus.SetMaxLineBytes(4 << 20)()
	path := filepath.Join(t.TempDir(), "bomb.jsonl")
	long := `{"_id":"a","text":"` + strings.Repeat("x", 5<<20) + `"}` + "\n"
	writeFile(t, path, []byte(`{"_id":"z","text":"short"}`+"\n"+long))
	_, _, err := readAll(t, path, corpus.Options{})
	if !errors.Is(err, corpus.ErrRecord) || !strings.Contains(err.Error(), "bomb.jsonl line 2: longer than 4194304 bytes") {
		t.Fatalf("got %v", err)
	}
	_, err = corpus.ReadQueries(path, corpus.Options{})
	if !errors.Is(err, corpus.ErrRecord) || !strings.Contains(err.Error(), "line 2: longer than") {
		t.Fatalf("queries: got %v", err)
	}
}
