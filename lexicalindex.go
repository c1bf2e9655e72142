package msrag

import (
	"errors"
	"fmt"
	"io"

	"github.com/msrag/msrag/internal/build"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/lexical"
)

// LexicalConfig says how a build makes its lexical windows: a BM25 index
// (package lexical) beside every window, over the same chunk rows and byte
// spans, and one over the documents' whole texts.
type LexicalConfig struct {
	// Analyzer turns texts into terms (lexical.English, lexical.None).
	Analyzer lexical.Analyzer
	// BM25 holds the parameters the lexical windows score with.
	BM25 lexical.BM25
}

// DefaultLexical is the English analyzer with k1 = 0.9 and b = 0.4
// (lexical.DefaultBM25).
func DefaultLexical() *LexicalConfig {
	return &LexicalConfig{Analyzer: lexical.English, BM25: lexical.DefaultBM25}
}

// check refuses parameters BM25 cannot score with.
func (c *LexicalConfig) check() error {
	if err := c.BM25.Validate(); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	if _, err := lexical.ParseAnalyzer(c.Analyzer.Name()); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	return nil
}

// ErrNoLexical is wrapped by the error for a lexical channel asked of an
// index built without lexical windows.
var ErrNoLexical = errors.New("no lexical windows")

// docLexicalFile is the whole-document lexical index's file name.
const docLexicalFile = "doc.bm25"

// lexicalFile is the name of window name's lexical index file.
func lexicalFile(name string) string { return name + ".bm25" }

// lexicalState is what an index knows of its lexical windows: the
// analyzer and parameters, or why they cannot be searched.
type lexicalState struct {
	analyzer lexical.Analyzer
	bm25     lexical.BM25
	// err is set when the index's analyzer is not one this build produces
	// (another version): the index opens, its lexical channels are refused.
	err error
}

// lexicalOf is the state a manifest records; nil for an index without
// lexical windows.
func lexicalOf(man *Manifest, dir string) *lexicalState {
	l := man.Lexical
	if l == nil {
		return nil
	}
	st := &lexicalState{bm25: lexical.BM25{K1: l.K1, B: l.B}}
	a, err := lexical.ParseIdentity(lexical.Identity{Name: l.Analyzer.Name, Version: l.Analyzer.Version})
	if err != nil {
		st.err = fmt.Errorf("msrag: index %s: its lexical windows were analysed with %s version %q, which this msrag does not produce; rebuild it: %w: %w",
			dir, l.Analyzer.Name, l.Analyzer.Version, err, ErrIndexMismatch)
	}
	st.analyzer = a
	return st
}

// lexicalInfo is the manifest's lexical section of a build's result (nil
// without lexical windows); the files' hashes are filled in as they are
// written.
func lexicalInfo(cfg *LexicalConfig, res *build.Result) *store.LexicalInfo {
	if cfg == nil {
		return nil
	}
	id := cfg.Analyzer.Identity()
	info := &store.LexicalInfo{K1: cfg.BM25.K1, B: cfg.BM25.B}
	info.Analyzer.Name, info.Analyzer.Version = id.Name, id.Version
	for _, w := range res.Windows {
		info.Windows = append(info.Windows, lexicalFileInfo(lexicalFile(w.Spec.Name()), w.Lexical))
	}
	info.Doc = lexicalFileInfo(docLexicalFile, res.DocLexical)
	return info
}

func lexicalFileInfo(name string, ix *lexical.Index) store.LexicalFile {
	return store.LexicalFile{File: name, Rows: int64(ix.Docs()), Terms: int64(ix.NumTerms()), Tokens: ix.Tokens()}
}

// publishLexical writes the shard's lexical files into the stage and
// records their hashes.
func publishLexical(st *store.Stage, info *store.LexicalInfo, sh *shard) error {
	write := func(f *store.LexicalFile, ix *lexical.Index) error {
		var err error
		f.SHA256, err = st.Create(f.File, func(w io.Writer) error { _, err := ix.WriteTo(w); return err })
		if err != nil {
			return fmt.Errorf("msrag: %s: %w", f.File, err)
		}
		return nil
	}
	for i, w := range sh.windows {
		if err := write(&info.Windows[i], w.lex); err != nil {
			return err
		}
	}
	return write(&info.Doc, sh.docLex)
}

// readLexical reads a shard's lexical files, checking each against the
// manifest.
func readLexical(dir string, man *Manifest, sh *shard, sum func(string) string) error {
	read := func(f store.LexicalFile) (*lexical.Index, error) {
		var ix *lexical.Index
		err := store.ReadFile(dir, f.File, sum(f.SHA256), func(r io.Reader, size int64) (err error) {
			ix, err = lexical.Read(r, size)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("msrag: index %s: %w", dir, err)
		}
		if int64(ix.Docs()) != f.Rows || int64(ix.NumTerms()) != f.Terms || ix.Tokens() != f.Tokens {
			return nil, fmt.Errorf("msrag: index %s: %s holds %d rows, %d terms, %d tokens, the manifest says %d, %d, %d: %w",
				dir, f.File, ix.Docs(), ix.NumTerms(), ix.Tokens(), f.Rows, f.Terms, f.Tokens, ErrIndexMismatch)
		}
		return ix, nil
	}
	for i, w := range sh.windows {
		ix, err := read(man.Lexical.Windows[i])
		if err != nil {
			return err
		}
		w.lex = ix
	}
	var err error
	sh.docLex, err = read(man.Lexical.Doc)
	return err
}

// sameLexical fails unless two shards' lexical windows can be searched as
// one: both have them or neither, made with the same analyzer and
// parameters.
func sameLexical(a, b *Manifest, da, db string) error {
	la, lb := a.Lexical, b.Lexical
	switch {
	case la == nil && lb == nil:
		return nil
	case la == nil || lb == nil:
		return fmt.Errorf("msrag: shards %s and %s differ: one has lexical windows, the other not (built with --no-lexical or before they existed): %w", da, db, ErrIndexMismatch)
	case la.Analyzer != lb.Analyzer || la.K1 != lb.K1 || la.B != lb.B:
		return fmt.Errorf("msrag: shards %s and %s have lexical windows of different analyzers or BM25 parameters (%s %s k1 %v b %v; %s %s k1 %v b %v): %w",
			da, db, la.Analyzer.Name, la.Analyzer.Version, la.K1, la.B, lb.Analyzer.Name, lb.Analyzer.Version, lb.K1, lb.B, ErrIndexMismatch)
	}
	return nil
}
