package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Dataset is a retrieval set in BEIR layout or in the Parquet layout of MTEB
// datasets on the Hugging Face hub:
//
//	DIR/corpus.{jsonl.gz,jsonl,parquet,arrow}   or DIR/corpus/*.parquet
//	DIR/queries.{jsonl.gz,jsonl,parquet,arrow,tsv} or DIR/queries/*.parquet
//	DIR/qrels/<split>.{tsv,parquet}             or DIR/qrels/<split>-00000-of-00001.parquet ...
//
// Opening one only finds the files; each part is read on demand.
type Dataset struct {
	Dir     string
	Corpus  string              // corpus file, or directory of .parquet files
	Queries string              // queries file, or directory of .parquet files
	Qrels   map[string][]string // split ("test", "dev", ...) -> its files
}

var (
	corpusNames  = []string{"corpus.jsonl.gz", "corpus.jsonl", "corpus.parquet", "corpus.arrow", "corpus"}
	queriesNames = []string{"queries.jsonl.gz", "queries.jsonl", "queries.parquet", "queries.arrow", "queries.tsv", "queries"}
	// shardName matches the hub's "<split>-00000-of-00003.parquet".
	shardName = regexp.MustCompile(`^(.+)-\d+-of-\d+\.parquet$`)
)

// OpenDataset finds the corpus, queries and qrels files of a dataset
// directory. It fails, naming the directory and the names it tried, when
// one of them is missing.
func OpenDataset(dir string) (*Dataset, error) {
	d := &Dataset{Dir: dir, Qrels: map[string][]string{}}
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
	kind := map[string]string{} // split -> extension, so a split is not in two formats
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".tsv" && ext != ".parquet") || strings.HasPrefix(name, ".") {
			continue
		}
		split := strings.TrimSuffix(name, ext)
		if m := shardName.FindStringSubmatch(name); m != nil {
			split = m[1]
		}
		if k, ok := kind[split]; ok && (k != ext || ext == ".tsv") {
			return nil, fmt.Errorf("corpus: dataset %s: split %q has two qrels files, %s and %s: %w",
				dir, split, filepath.Base(d.Qrels[split][0]), name, ErrFormat)
		}
		kind[split] = ext
		d.Qrels[split] = append(d.Qrels[split], filepath.Join(dir, "qrels", name))
	}
	if len(d.Qrels) == 0 {
		return nil, fmt.Errorf("corpus: dataset %s: no qrels/<split>.tsv or .parquet: %w", dir, ErrEmpty)
	}
	return d, nil
}

// findOne returns the first of names present in dir; a name without an
// extension is a directory that must hold .parquet files.
func findOne(dir string, names []string) (string, error) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			return p, nil
		}
		if pq, err := parquetFiles(p); err == nil && len(pq) > 0 && filepath.Ext(n) == "" {
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

// ReadQrels reads the judgements of one split, from all its files; see
// [ReadQrels].
func (d *Dataset) ReadQrels(split string) ([]Qrel, error) {
	paths, ok := d.Qrels[split]
	if !ok {
		return nil, fmt.Errorf("corpus: dataset %s: no split %q (have %s): %w", d.Dir, split, strings.Join(d.Splits(), ", "), os.ErrNotExist)
	}
	var out []Qrel
	for _, p := range paths {
		q, err := ReadQrels(p, Options{})
		if err != nil {
			return nil, err
		}
		out = append(out, q...)
	}
	return out, nil
}

// ReadJudgements reads the judgements of split as query id -> document id
// -> score (the form eval.Qrels has). Several splits joined by "+"
// ("train+dev") are read together; a query judged in two of them is an error
// naming both.
func (d *Dataset) ReadJudgements(split string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	from := map[string]string{} // query id -> the split that judged it
	for _, sp := range strings.Split(split, "+") {
		if sp == "" {
			return nil, fmt.Errorf("corpus: dataset %s: split %q has an empty part", d.Dir, split)
		}
		rows, err := d.ReadQrels(sp)
		if err != nil {
			return nil, err
		}
		for q, docs := range Judgements(rows) {
			if f, ok := from[q]; ok {
				return nil, fmt.Errorf("corpus: dataset %s: query %q is judged in both split %q and split %q: %w", d.Dir, q, f, sp, ErrDuplicateID)
			}
			from[q], out[q] = sp, docs
		}
	}
	return out, nil
}

// JudgedQueries reads the judgements of split (see ReadJudgements) and the
// queries they judge, in the queries file's order. A split without
// judgements, or whose judged queries are not in the queries file, is an
// error.
func (d *Dataset) JudgedQueries(split string) (map[string]map[string]int, []Query, error) {
	j, err := d.ReadJudgements(split)
	if err != nil {
		return nil, nil, err
	}
	if len(j) == 0 {
		return nil, nil, fmt.Errorf("corpus: dataset %s: split %q has no judgements: %w", d.Dir, split, ErrEmpty)
	}
	queries, err := d.ReadQueries(Options{})
	if err != nil {
		return nil, nil, err
	}
	queries = slices.DeleteFunc(queries, func(q Query) bool { return j[q.ID] == nil })
	if len(queries) == 0 {
		return nil, nil, fmt.Errorf("corpus: dataset %s: no query of %s has judgements in split %q: %w", d.Dir, d.Queries, split, ErrEmpty)
	}
	return j, queries, nil
}
