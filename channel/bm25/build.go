package bm25

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/lexical"
)

// builder collects the terms of every window's rows and of every document.
type builder struct {
	cfg     Config
	specs   []chunk.Window
	windows []*lexical.Builder
	doc     lexical.Builder
}

// Prepare returns a worker's analysis of texts into their terms, by the
// build's analyzer.
func (b *builder) Prepare() func(string) []string {
	tok := b.cfg.Analyzer.NewTokenizer()
	return func(text string) []string { return tok.Append(nil, text) }
}

// Add adds the chunk's terms as the next row of window w's index.
func (b *builder) Add(w int, terms []string, _ []float32) error {
	lb := b.windows[w]
	if err := lb.Add(lb.Len(), terms); err != nil {
		return fmt.Errorf("msrag: window %s: %w", b.specs[w].Name(), err)
	}
	return nil
}

// AddDoc adds the document's terms as the next row of the whole documents'
// index.
func (b *builder) AddDoc(terms []string) error {
	return b.doc.Add(b.doc.Len(), terms)
}

// Finish builds every index.
func (b *builder) Finish(src *channel.Source) (channel.Shard, error) {
	sh := &shard{where: src.Where, analyzer: b.cfg.Analyzer, bm25: b.cfg.BM25, specs: b.specs, rows: src.Rows, docs: src.Docs}
	for _, w := range b.windows {
		sh.windows = append(sh.windows, w.Build())
	}
	sh.doc = b.doc.Build()
	b.windows = nil
	return sh, nil
}

// Close lets go of the builders; nothing native is held.
func (b *builder) Close() error {
	b.windows = nil
	return nil
}
