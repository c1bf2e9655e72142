package bm25

import (
	"context"
	"fmt"
	"io"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/lexical"
)

// shard is one shard's lexical windows: a BM25 index per window (its rows
// those of the window's chunk table) and one over whole documents.
type shard struct {
	where    string
	analyzer lexical.Analyzer
	bm25     lexical.BM25
	specs    []chunk.Window
	windows  []*lexical.Index
	doc      *lexical.Index
	rows     []channel.RowMap
	docs     channel.RowMap
	// err says why the shard cannot be searched: its analyzer is not one
	// this msrag produces (another version).
	err error
}

// docFile is the whole-document index's file name.
const docFile = "doc.bm25"

// fileName is the name of window w's index file.
func fileName(w chunk.Window) string { return w.Name() + ".bm25" }

// channels returns the shard's indices and row maps in channel order: the
// windows', then the whole documents'.
func (sh *shard) channels() ([]*lexical.Index, []channel.RowMap) {
	return append(append([]*lexical.Index{}, sh.windows...), sh.doc), append(append([]channel.RowMap{}, sh.rows...), sh.docs)
}

// Check says why the lexical windows cannot be searched, or nil.
func (sh *shard) Check() error { return sh.err }

// terms returns the queries' terms by the shard's analyzer, analysed once
// per batch.
func (sh *shard) terms(q *channel.Queries) ([][]string, error) {
	if sh.err != nil {
		return nil, sh.err
	}
	return channel.PrepareQueries(q, Kind, func(texts []string) ([][]string, error) {
		tok := sh.analyzer.NewTokenizer()
		out := make([][]string, len(texts))
		for i, t := range texts {
			out[i] = tok.Append(nil, t)
		}
		return out, nil
	})
}

// Stats returns the shard's documents, tokens and query terms' document
// frequencies, per channel.
func (sh *shard) Stats(q *channel.Queries) (channel.Stats, error) {
	terms, err := sh.terms(q)
	if err != nil {
		return nil, err
	}
	ixs, _ := sh.channels()
	out := make(stats, len(ixs))
	for i, ix := range ixs {
		out[i] = ix.Stats(terms)
	}
	return out, nil
}

// Search ranks every channel's rows by BM25 with the statistics st (nil:
// this shard's own), each query's k best in the canonical order.
func (sh *shard) Search(ctx context.Context, q *channel.Queries, st channel.Stats, k int) ([]channel.Hits, error) {
	terms, err := sh.terms(q)
	if err != nil {
		return nil, err
	}
	if st == nil {
		if st, err = sh.Stats(q); err != nil {
			return nil, err
		}
	}
	all, ok := st.(stats)
	ixs, maps := sh.channels()
	if !ok || len(all) != len(ixs) {
		return nil, fmt.Errorf("msrag: lexical statistics of %d channels for %d", len(all), len(ixs))
	}
	out := make([]channel.Hits, len(ixs))
	for ci, ix := range ixs {
		cst := &all[ci]
		h, err := channel.Top(ctx, q.Len(), k, maps[ci], func(qs []int, n int) ([]int32, []float32, error) {
			sub := make([][]string, len(qs))
			for i, qi := range qs {
				sub[i] = terms[qi]
			}
			res, err := ix.Search(sub, n, sh.bm25, cst)
			return res.Rows, res.Scores, err
		})
		if err != nil {
			return nil, fmt.Errorf("msrag: channel %s: %w", Kind.Traits().ChannelName(sh.window(ci)), err)
		}
		out[ci] = h
	}
	return out, nil
}

// window is the window of channel ci (the zero window for the documents).
func (sh *shard) window(ci int) chunk.Window {
	if ci < len(sh.specs) {
		return sh.specs[ci]
	}
	return chunk.Window{}
}

// Explain returns, for each row of channel ci, the terms of query qi it
// holds.
func (sh *shard) Explain(q *channel.Queries, qi, ci int, rows []int32) ([][]string, error) {
	terms, err := sh.terms(q)
	if err != nil {
		return nil, err
	}
	ixs, _ := sh.channels()
	r := make([]int, len(rows))
	for i, x := range rows {
		r[i] = int(x)
	}
	return ixs[ci].Holds(terms[qi], r)
}

// Write writes every index file and records the lexical section; with no
// dst, the section without the files' sha256.
func (sh *shard) Write(dst channel.Dest, man *indexfile.Manifest) error {
	info := Config{Analyzer: sh.analyzer, BM25: sh.bm25}.Record()
	write := func(name string, ix *lexical.Index) (indexfile.LexicalFile, error) {
		f := indexfile.LexicalFile{File: name, Rows: int64(ix.Docs()), Terms: int64(ix.NumTerms()), Tokens: ix.Tokens()}
		if dst == nil {
			return f, nil
		}
		var err error
		f.SHA256, err = dst.Create(name, func(w io.Writer) error { _, err := ix.WriteTo(w); return err })
		if err != nil {
			return f, fmt.Errorf("msrag: %s: %w", name, err)
		}
		return f, nil
	}
	for i, ix := range sh.windows {
		f, err := write(fileName(sh.specs[i]), ix)
		if err != nil {
			return err
		}
		info.Windows = append(info.Windows, f)
	}
	var err error
	if info.Doc, err = write(docFile, sh.doc); err != nil {
		return err
	}
	man.Lexical = info
	return nil
}

// Close lets go of the indices.
func (sh *shard) Close() error { return nil }

// Open reads the shard's lexical files, checking each against the
// manifest. An index whose analyzer this msrag does not produce opens, and
// its channels are refused (Check).
func (kind) Open(src *channel.Source) (channel.Shard, error) {
	l := src.Manifest.Lexical
	sh := &shard{where: src.Where, bm25: lexical.BM25{K1: l.K1, B: l.B}, specs: src.Windows, rows: src.Rows, docs: src.Docs}
	a, err := lexical.ParseIdentity(lexical.Identity{Name: l.Analyzer.Name, Version: l.Analyzer.Version})
	if err != nil {
		sh.err = fmt.Errorf("msrag: index %s: its lexical windows were analysed with %s version %q, which this msrag does not produce; rebuild it: %w: %w",
			src.Where, l.Analyzer.Name, l.Analyzer.Version, err, indexfile.ErrMismatch)
	}
	sh.analyzer = a
	for _, f := range l.Windows {
		ix, err := read(src, f)
		if err != nil {
			return nil, err
		}
		sh.windows = append(sh.windows, ix)
	}
	if sh.doc, err = read(src, l.Doc); err != nil {
		return nil, err
	}
	return sh, nil
}

// read reads one lexical file and checks its counts against the manifest.
// Its errors name the file.
func read(src *channel.Source, f indexfile.LexicalFile) (*lexical.Index, error) {
	var ix *lexical.Index
	err := src.Read(f.File, f.SHA256, func(r io.Reader, size int64) (err error) {
		ix, err = lexical.Read(r, size)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.File, err)
	}
	if int64(ix.Docs()) != f.Rows || int64(ix.NumTerms()) != f.Terms || ix.Tokens() != f.Tokens {
		return nil, fmt.Errorf("%s holds %d rows, %d terms, %d tokens, the manifest says %d, %d, %d: %w",
			f.File, ix.Docs(), ix.NumTerms(), ix.Tokens(), f.Rows, f.Terms, f.Tokens, indexfile.ErrMismatch)
	}
	return ix, nil
}

// IndexOf returns the BM25 index of channel ci (the windows' in order, then
// the whole documents') of a lexical part of a shard, nil when p is not
// one: for tests and tools that read the engine itself. It stays p's.
func IndexOf(p channel.Shard, ci int) *lexical.Index {
	sh, ok := p.(*shard)
	if !ok {
		return nil
	}
	ixs, _ := sh.channels()
	if ci < 0 || ci >= len(ixs) {
		return nil
	}
	return ixs[ci]
}
