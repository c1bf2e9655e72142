package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Query is one query of a retrieval set.
type Query struct {
	ID   string
	Text string
}

// ReadQueries reads all queries of a file into memory (query sets are
// small). Formats, by magic bytes and then extension:
//
//   - Parquet or Arrow with columns opts.IDColumn and opts.TextColumn
//     (defaults "_id" and "text");
//   - JSONL (.jsonl, .jsonl.gz), one {"_id", "text"} object per line;
//   - TSV (.tsv): id<TAB>text per line; a first line whose id is "_id",
//     "id", "qid" or "query-id" is a header and skipped;
//   - anything else (.txt): one query per line, its id the 1-based line
//     number.
//
// Unlike a corpus, an empty query, an empty line or a repeated id is an
// error naming the file and line (or row). opts.Shard is ignored.
func ReadQueries(path string, opts Options) ([]Query, error) {
	opts.Shard = Shard{}
	opts.DedupeIDs = false
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f, err := detect(path, opts.Format)
	if errors.Is(err, errUndetected) {
		return nil, fmt.Errorf("corpus: queries %s: cannot tell the format from its content or extension (want %s): %w", path, readable(true), ErrFormat)
	}
	if err != nil {
		return nil, err
	}
	if fm := formatOf(f); fm != nil && fm.queries != nil {
		return fm.queries(path)
	}
	r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	asQueries(r)
	var out []Query
	for {
		docs, err := r.Next(context.Background())
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			out = append(out, Query{ID: d.ID, Text: d.Text})
		}
	}
}

// queriesFile is what a record error calls a file of queries, so that a
// bad query is not taken for a bad document.
const queriesFile = "queries file"

// asQueries makes a reader read queries: it fails on empty texts instead of
// skipping them, and its errors name a queries file.
func asQueries(r Reader) {
	if rb, ok := r.(interface{ records() *builder }); ok {
		b := rb.records()
		b.strict, b.input = true, queriesFile
	}
}

// tsvFormat and linesFormat hold queries only: id<TAB>text, and one query
// per line.
var (
	tsvFormat = format{
		name: FormatTSV, exts: []string{".tsv"},
		queries: func(path string) ([]Query, error) { return readQueryLines(path, true) },
	}
	linesFormat = format{
		name: FormatLines, exts: []string{".txt", ".md", ".text"},
		queries: func(path string) ([]Query, error) { return readQueryLines(path, false) },
	}
)

func readQueryLines(path string, tsv bool) ([]Query, error) {
	lr, err := openLines(path, 0)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	b := newBuilder(path, Options{BatchSize: 1, DedupeIDs: false}, func(p pos) string { return "line " + strconv.FormatInt(p.row, 10) })
	b.strict, b.input = true, queriesFile
	var out []Query
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p := pos{row: lr.line}
		if len(strings.TrimSpace(string(line))) == 0 {
			return nil, b.errAt(p, "", fmt.Errorf("empty line: %w", ErrRecord))
		}
		id, text := strconv.FormatInt(lr.line, 10), string(line)
		if tsv {
			var ok bool
			id, text, ok = strings.Cut(text, "\t")
			if !ok {
				return nil, b.errAt(p, "", fmt.Errorf("no tab between id and text: %w", ErrRecord))
			}
			if lr.line == 1 {
				switch strings.ToLower(id) {
				case "_id", "id", "qid", "query-id", "query_id":
					continue
				}
			}
		}
		if err := b.add(p, id, "", text); err != nil {
			return nil, err
		}
		out = append(out, Query{ID: b.out[0].ID, Text: b.out[0].Text})
		b.out = b.out[:0]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("corpus: %s %s: no queries: %w", queriesFile, path, ErrEmpty)
	}
	return out, nil
}
