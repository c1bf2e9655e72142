package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dataset is a retrieval set in BEIR/MTEB layout:
//
//	DIR/corpus.{jsonl.gz,jsonl,parquet,arrow}
//	DIR/queries.{jsonl.gz,jsonl,parquet,arrow,tsv}
//	DIR/qrels/<split>.{tsv,parquet}
//
// Opening one only finds the files; each part is read on demand.
type Dataset struct {
	Dir     string
	Corpus  string            // path of the corpus file
	Queries string            // path of the queries file
	Qrels   map[string]string // split ("test", "dev", ...) -> path
}

var (
	corpusNames  = []string{"corpus.jsonl.gz", "corpus.jsonl", "corpus.parquet", "corpus.arrow"}
	queriesNames = []string{"queries.jsonl.gz", "queries.jsonl", "queries.parquet", "queries.arrow", "queries.tsv"}
)

// OpenDataset finds the corpus, queries and qrels files of a dataset
// directory. It fails, naming the directory and the names it tried, when
// one of them is missing.
func OpenDataset(dir string) (*Dataset, error) {
	d := &Dataset{Dir: dir, Qrels: map[string]string{}}
	var err error
	if d.Corpus, err = findOne(dir, corpusNames); err != nil {
		return nil, err
	}
	if d.Queries, err = findOne(dir, queriesNames); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, "qrels"))
	if err != nil {
		return nil, fmt.Errorf("corpus: dataset %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".tsv" && ext != ".parquet") || strings.HasPrefix(name, ".") {
			continue
		}
		split := strings.TrimSuffix(name, ext)
		if prev, dup := d.Qrels[split]; dup {
			return nil, fmt.Errorf("corpus: dataset %s: split %q has two qrels files, %s and %s: %w", dir, split, prev, name, ErrFormat)
		}
		d.Qrels[split] = filepath.Join(dir, "qrels", name)
	}
	if len(d.Qrels) == 0 {
		return nil, fmt.Errorf("corpus: dataset %s: no qrels/<split>.tsv or .parquet: %w", dir, ErrEmpty)
	}
	return d, nil
}

func findOne(dir string, names []string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("corpus: dataset %s: none of %s: %w", dir, strings.Join(names, ", "), os.ErrNotExist)
}

// Splits returns the qrels splits, sorted.
func (d *Dataset) Splits() []string {
	out := make([]string, 0, len(d.Qrels))
	for s := range d.Qrels {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// OpenCorpus opens the corpus; see [Open].
func (d *Dataset) OpenCorpus(opts Options) (Reader, error) { return Open(d.Corpus, opts) }

// ReadQueries reads all queries; see [ReadQueries].
func (d *Dataset) ReadQueries(opts Options) ([]Query, error) { return ReadQueries(d.Queries, opts) }

// ReadQrels reads the judgements of one split; see [ReadQrels].
func (d *Dataset) ReadQrels(split string) ([]Qrel, error) {
	p, ok := d.Qrels[split]
	if !ok {
		return nil, fmt.Errorf("corpus: dataset %s: no split %q (have %s): %w", d.Dir, split, strings.Join(d.Splits(), ", "), os.ErrNotExist)
	}
	return ReadQrels(p, Options{})
}
