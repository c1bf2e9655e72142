package build

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/tokenizer"
)

// keepSpans is the most token spans a worker keeps between documents (16
// MiB): a document of 100 MB has 20 million.
const keepSpans = 1 << 20

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
	preps := b.preparers()
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
			if cap(spans) > keepSpans {
				spans = nil // a document of megabytes: not kept for the next ones
			}
			if preps != nil {
				prepare(preps, bt, di, d)
			}
		}
		b.cut.Add(int64(len(bt.items)))
		b.prepared.Add(1)
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
	var ids []int32 // the chunks' items keep it: one per document
	ids, *spans = tokenizer.AppendContent(tok, text, ids, (*spans)[:0])
	if err := b.chunker.Split(text, *spans, res); err != nil {
		return fmt.Errorf("msrag: document %q: %w", d.ID, err)
	}
	first := len(bt.items)
	for _, c := range res.Chunks {
		bt.items = append(bt.items, item{
			doc: doc, tokStart: int32(c.Tokens.Start), tokEnd: int32(c.Tokens.End),
			byteStart: int64(c.Bytes.Start), byteEnd: int64(c.Bytes.End),
			ids:  ids[c.Tokens.Start:c.Tokens.End:c.Tokens.End],
			text: text[c.Bytes.Start:c.Bytes.End],
		})
	}
	for wi, list := range res.Windows {
		for _, ci := range list {
			bt.items[first+int(ci)].member |= 1 << wi
		}
	}
	if b.late != nil && len(res.Chunks) > 0 {
		b.cutSegments(bt, doc, ids, bt.items[first:])
	}
	return nil
}

// preparers returns a Preparer of every kind that has one (nil where a
// kind has none), or nil when no kind has one: a worker's own.
func (b *Builder) preparers() []channel.Preparer {
	out := make([]channel.Preparer, len(b.builders))
	some := false
	for i, kb := range b.builders {
		out[i] = kb.Preparer()
		some = some || out[i] != nil
	}
	if !some {
		return nil
	}
	return out
}

// prepare gives the chunks of document di of bt (the last ones prepareDoc
// appended) what each kind makes of their texts, and the document what it
// makes of its whole text. A chunk's text is its span's alone.
func prepare(preps []channel.Preparer, bt *docBatch, di int, d corpus.Doc) {
	made := func(text string) []channel.Prepared {
		out := make([]channel.Prepared, len(preps))
		for k, p := range preps {
			if p != nil {
				out[k] = p.Prepare(text)
			}
		}
		return out
	}
	for i := len(bt.items) - 1; i >= 0 && bt.items[i].doc == bt.base+int32(di); i-- {
		bt.items[i].preps = made(bt.items[i].text)
	}
	if bt.docPreps == nil {
		bt.docPreps = make([][]channel.Prepared, len(bt.docs))
	}
	bt.docPreps[di] = made(d.Full())
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
