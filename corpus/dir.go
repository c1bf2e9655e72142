package corpus

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirReader reads every .txt and .md file under a directory, in byte
// order of their paths. A file is one document and one unit; its id is its
// path relative to the directory, with "/" separators. Files and
// directories whose name starts with "." are skipped.
type dirReader struct {
	root  string
	files []string // relative paths, slash-separated
	next  int
	b     *builder
	done  error
	read  []Input // the files read so far
}

// records is the builder that turns the reader's records into documents.
func (r *dirReader) records() *builder { return r.b }

// inputs is the files read so far.
func (r *dirReader) inputs() []Input { return r.read }

// dirFormat is a directory of .txt and .md files: any directory that holds
// no other format's layout.
var dirFormat = format{
	name:   FormatDir,
	layout: func(string) (bool, error) { return true, nil },
	open:   func(path string, _ Format, opts Options) (Reader, error) { return reader(openDir(path, opts)) },
	units:  dirUnits,
	queries: func(path string) ([]Query, error) {
		return nil, fmt.Errorf("corpus: %s is a directory, want a queries file: %w", path, ErrFormat)
	},
}

// dirUnits counts the files of a directory corpus.
func dirUnits(path string, opts Options) (int, error) {
	r, err := openDir(path, opts)
	if err != nil {
		return 0, err
	}
	return len(r.files), nil
}

func openDir(root string, opts Options) (*dirReader, error) {
	r := &dirReader{root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".txt", ".md":
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			r.files = append(r.files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus: listing %s: %w", root, err)
	}
	where := func(p pos) string { return "file " + r.files[p.unit] }
	r.b = newBuilder(root, opts, where)
	return r, nil
}

func (r *dirReader) Next(ctx context.Context) ([]Doc, error) {
	if r.done != nil {
		return nil, r.done
	}
	for !r.b.full() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.next >= len(r.files) {
			r.done = r.b.eof()
			break
		}
		u := r.next
		r.next++
		if !r.b.opts.Shard.has(u) {
			continue
		}
		r.b.stats.Units++
		path := filepath.Join(r.root, filepath.FromSlash(r.files[u]))
		data, err := os.ReadFile(path)
		if err != nil {
			r.done = fmt.Errorf("corpus: %w", err)
			return nil, r.done
		}
		r.read = append(r.read, inputOf(path, data))
		if err := r.b.add(pos{unit: u}, r.files[u], "", string(data)); err != nil {
			r.done = err
			return nil, err
		}
	}
	if len(r.b.out) == 0 {
		return nil, r.done
	}
	return r.b.take(), nil
}

func (r *dirReader) Close() error {
	r.done = fmt.Errorf("corpus: %s: %w", r.root, ErrClosed)
	return nil
}

func (r *dirReader) Stats() Stats { return r.b.stats }
