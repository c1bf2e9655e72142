package build

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/lexical"
	"github.com/msrag/msrag/tokenizer"
)

// prepare is one worker of the second stage: it tokenizes each document of
// a batch once, without special tokens or truncation, and cuts every window.
// It checks ctx before each document: a batch of 1,024 long documents
// (meeting transcripts of 10,000 tokens) takes seconds to tokenize.
func (b *Builder) prepare(ctx context.Context, in <-chan *docBatch, out chan<- *docBatch) error {
	var res chunk.Result
	var spans []chunk.Span
	tok := b.cfg.Tokenizer
	if b.cfg.Embedder != nil {
		tok = b.cfg.Embedder.Tokenizer()
	}
	var lex *lexical.Tokenizer
	if b.cfg.Lexical {
		lex = b.cfg.Analyzer.NewTokenizer()
	}
	for {
		bt, ok, err := receive(ctx, in)
		if !ok {
			return err
		}
		for di, d := range bt.docs {
			if err := ctx.Err(); err != nil { // a batch of long documents takes seconds
				return err
			}
			if err := b.prepareDoc(tok, bt, bt.base+int32(di), d, &res, &spans); err != nil {
				return err
			}
			if lex != nil {
				analyse(lex, bt, di, d)
			}
		}
		if err := send(ctx, out, bt); err != nil {
			return err
		}
	}
}

// prepareDoc appends the unique chunks of document d (index doc) to bt.
func (b *Builder) prepareDoc(tok *tokenizer.Tokenizer, bt *docBatch, doc int32, d corpus.Doc, res *chunk.Result, spans *[]chunk.Span) error {
	if b.cfg.PrepareHook != nil {
		if err := b.cfg.PrepareHook(d.ID); err != nil {
			return fmt.Errorf("msrag: document %q: %w", d.ID, err)
		}
	}
	text := d.Full()
	enc := tok.EncodeWith(text, tokenizer.Options{NoSpecial: true, MaxLength: -1})
	*spans = chunk.Spans(*spans, enc.Offsets)
	if err := b.chunker.Split(text, *spans, res); err != nil {
		return fmt.Errorf("msrag: document %q: %w", d.ID, err)
	}
	first := len(bt.items)
	for _, c := range res.Chunks {
		bt.items = append(bt.items, item{
			doc: doc, tokStart: int32(c.Tokens.Start), tokEnd: int32(c.Tokens.End),
			byteStart: int64(c.Bytes.Start), byteEnd: int64(c.Bytes.End),
			ids:  enc.IDs[c.Tokens.Start:c.Tokens.End:c.Tokens.End],
			text: text[c.Bytes.Start:c.Bytes.End],
		})
	}
	for wi, list := range res.Windows {
		for _, ci := range list {
			bt.items[first+int(ci)].member |= 1 << wi
		}
	}
	if b.late != nil && len(res.Chunks) > 0 {
		b.cutSegments(bt, doc, enc.IDs, bt.items[first:])
	}
	return nil
}

// analyse gives the chunks of document di of bt (the last ones prepareDoc
// appended) their terms, and the document its whole text's terms. A
// chunk's terms are those of its text span alone.
func analyse(lex *lexical.Tokenizer, bt *docBatch, di int, d corpus.Doc) {
	for i := len(bt.items) - 1; i >= 0 && bt.items[i].doc == bt.base+int32(di); i-- {
		bt.items[i].terms = lex.Append(nil, bt.items[i].text)
	}
	if bt.docTerms == nil {
		bt.docTerms = make([][]string, len(bt.docs))
	}
	bt.docTerms[di] = lex.Append(nil, d.Full())
}

// cutSegments appends the segments of document doc (content ids) to bt and
// gives each of its items the pieces of its pool.
func (b *Builder) cutSegments(bt *docBatch, doc int32, ids []int32, items []item) {
	base := int32(len(bt.segs))
	spans := late.Segments(nil, len(ids), b.segment, b.overlap)
	for _, sp := range spans {
		bt.segs = append(bt.segs, segment{doc: doc, span: sp, ids: ids[sp.Start:sp.End:sp.End]})
	}
	for i := range items {
		it := &items[i]
		it.pieces = late.Pieces(nil, spans, chunk.Span{Start: int(it.tokStart), End: int(it.tokEnd)})
		b.cfg.LateEdges.Apply(it.pieces)
		for k := range it.pieces {
			it.pieces[k].Seg += base
		}
	}
}
