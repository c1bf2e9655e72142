package build

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/corpus"
)

// run builds the windows from src in five stages connected by channels, all
// under one errgroup.WithContext: the first error, or the end of ctx, cancels
// every stage, and each stage checks the context between batches.
//
//	read     batches of documents in input order, each taking a slot
//	prepare  Workers goroutines: tokenize each document once, cut every window
//	order    batches back in input order (their slots released), documents
//	         recorded, chunks cut into embedder batches by token count
//	embed    one batch at a time (the embedder uses every core itself)
//	add      each vector to the index of every window that lists its chunk
//
// A build without an embedder has no embed stage: order hands its batches
// to add, which adds the chunks' rows and terms only.
//
// The slots bound the batches between read and order to 2*Workers+2: when a
// worker is slow the reader waits, instead of the reorder buffer growing.
func (b *Builder) run(ctx context.Context, src corpus.Reader) error {
	g, ctx := errgroup.WithContext(ctx)
	slots := semaphore.NewWeighted(int64(2*b.cfg.Workers + 2))
	read := make(chan *docBatch, b.cfg.Workers)
	prepped := make(chan *docBatch, b.cfg.Workers)
	toEmbed := make(chan *embedBatch, 1)
	toAdd := make(chan *embedBatch, 1)
	g.Go(func() error { return closeOnSuccess(read, b.read(ctx, src, slots, read)) })
	var workers sync.WaitGroup
	var failed atomic.Bool
	for range b.cfg.Workers {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			err := b.prepare(ctx, read, prepped)
			if err != nil {
				failed.Store(true)
			}
			return err
		})
	}
	g.Go(func() error {
		workers.Wait()
		if !failed.Load() {
			close(prepped)
		}
		return nil
	})
	g.Go(func() error { return closeOnSuccess(toEmbed, b.order(ctx, prepped, slots, toEmbed)) })
	if b.cfg.Embedder == nil { // no model: nothing to embed
		toAdd = toEmbed
	} else {
		g.Go(func() error { return closeOnSuccess(toAdd, b.embed(ctx, toEmbed, toAdd)) })
	}
	g.Go(func() error { return b.add(ctx, toAdd) })
	return g.Wait()
}

// closeOnSuccess closes a stage's output when the stage ended without error,
// so the next stage sees the end of the input only after a complete one
// (after an error it sees the context's end instead), and returns err.
func closeOnSuccess[T any](out chan T, err error) error {
	if err == nil {
		close(out)
	}
	return err
}

// send hands v to out unless ctx ends first.
func send[T any](ctx context.Context, out chan<- T, v T) error {
	select {
	case out <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// receive takes the next value of in; ok is false when in is closed.
func receive[T any](ctx context.Context, in <-chan T) (v T, ok bool, err error) {
	select {
	case v, ok = <-in:
		return v, ok, nil
	case <-ctx.Done():
		return v, false, ctx.Err()
	}
}

// read is the first stage: batches of documents, numbered in input order.
func (b *Builder) read(ctx context.Context, src corpus.Reader, slots *semaphore.Weighted, out chan<- *docBatch) error {
	var next int32
	for seq := 0; ; seq++ {
		if err := slots.Acquire(ctx, 1); err != nil {
			return err
		}
		docs, err := src.Next(ctx)
		st := src.Stats()
		b.skipped.Store(st.Empty + st.Duplicates)
		if err == io.EOF {
			b.readBatches.Store(int64(seq))
			b.readAll.Store(true)
			return nil
		}
		if err != nil {
			return err
		}
		bt := &docBatch{seq: seq, base: next, docs: docs}
		next += int32(len(docs))
		b.docs.Add(int64(len(docs)))
		b.units.Store(int64(st.Units))
		b.bytes.Store(st.InputBytes)
		b.bytesTotal.Store(st.InputSize)
		b.report()
		if err := send(ctx, out, bt); err != nil {
			return err
		}
	}
}

// order is the third stage: it puts batches back in input order, records
// their documents and cuts their chunks into embedder batches of about
// Config.BatchTokens tokens.
func (b *Builder) order(ctx context.Context, in <-chan *docBatch, slots *semaphore.Weighted, out chan<- *embedBatch) error {
	pending := map[int]*docBatch{}
	want := 0
	cur := &embedBatch{}
	for {
		bt, ok, err := receive(ctx, in)
		if err != nil {
			return err
		}
		if !ok {
			if len(cur.items) == 0 && len(cur.docPreps) == 0 {
				return nil
			}
			return send(ctx, out, cur)
		}
		pending[bt.seq] = bt
		for next := pending[want]; next != nil; next = pending[want] {
			delete(pending, want)
			want++
			slots.Release(1)
			if cur, err = b.emit(ctx, next, cur, out); err != nil {
				return err
			}
		}
	}
}

// emit records the documents of bt and adds its chunks to cur, sending cur
// on whenever it is full; it returns the batch being filled.
func (b *Builder) emit(ctx context.Context, bt *docBatch, cur *embedBatch, out chan<- *embedBatch) (*embedBatch, error) {
	for di, d := range bt.docs {
		var prep []channel.Prepared
		if bt.docPreps != nil {
			prep = bt.docPreps[di]
		}
		cur.docPreps, cur.docIDs = append(cur.docPreps, prep), append(cur.docIDs, d.ID)
		b.ids = append(b.ids, d.ID)
		b.titles = append(b.titles, d.Title)
	}
	if b.late != nil {
		return b.emitLate(ctx, bt, cur, out)
	}
	for _, it := range bt.items {
		cur.items = append(cur.items, it)
		cur.tokens += int64(len(it.ids))
		if cur.tokens >= int64(b.cfg.BatchTokens) {
			if err := send(ctx, out, cur); err != nil {
				return nil, err
			}
			cur = &embedBatch{}
		}
	}
	return cur, nil
}

// emitLate adds the segments and chunks of bt to cur a document at a time,
// so that a document's segments and the chunks pooled from them travel in
// one batch, and sends cur on whenever its segments' tokens fill it.
func (b *Builder) emitLate(ctx context.Context, bt *docBatch, cur *embedBatch, out chan<- *embedBatch) (*embedBatch, error) {
	ii, si := 0, 0
	for di := range bt.docs {
		doc := bt.base + int32(di)
		rebase := int32(len(cur.segs) - si) // from bt.segs to cur.segs
		for ; si < len(bt.segs) && bt.segs[si].doc == doc; si++ {
			cur.segs = append(cur.segs, bt.segs[si])
			cur.tokens += int64(bt.segs[si].span.Len())
		}
		for ; ii < len(bt.items) && bt.items[ii].doc == doc; ii++ {
			it := bt.items[ii]
			for k := range it.pieces {
				it.pieces[k].Seg += rebase
			}
			cur.items = append(cur.items, it)
		}
		if cur.tokens >= int64(b.cfg.BatchTokens) {
			if err := send(ctx, out, cur); err != nil {
				return nil, err
			}
			cur = &embedBatch{}
		}
	}
	return cur, nil
}

// add is the last stage: every chunk (and its vector) goes to each kind's
// channel of every window that lists it, every document to each kind; at
// the end each kind has its whole shard.
func (b *Builder) add(ctx context.Context, in <-chan *embedBatch) error {
	dims := b.spec.Dims
	for {
		bt, ok, err := receive(ctx, in)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if err := b.addDocs(bt.docIDs, bt.docPreps); err != nil {
			return err
		}
		for i, it := range bt.items {
			var v []float32
			if bt.vecs != nil {
				v = bt.vecs[i*dims : (i+1)*dims]
			}
			if err := b.addItem(it, v); err != nil {
				return err
			}
		}
		b.unique += int64(len(bt.items))
		if b.cfg.Embedder == nil { // nothing embedded them: count them here
			b.chunks.Add(int64(len(bt.items)))
			b.tokens.Add(bt.tokens)
			b.report()
		}
	}
}

// addDocs hands the next documents to every kind.
func (b *Builder) addDocs(ids []string, preps [][]channel.Prepared) error {
	for d, prep := range preps {
		for k, kb := range b.builders {
			var p channel.Prepared
			if prep != nil {
				p = prep[k]
			}
			if err := kb.AddDoc(p); err != nil {
				return fmt.Errorf("msrag: document %q: %w", ids[d], err)
			}
		}
	}
	return nil
}

// addItem adds a chunk to the chunk table and every kind's channel of each
// window that lists it.
func (b *Builder) addItem(it item, v []float32) error {
	for wi := range b.windows {
		if it.member&(1<<wi) == 0 {
			continue
		}
		b.tables[wi].Add(it.doc, it.tokStart, it.tokEnd, it.byteStart, it.byteEnd)
		for k, kb := range b.builders {
			var p channel.Prepared
			if it.preps != nil {
				p = it.preps[k]
			}
			if err := kb.Add(wi, p, v); err != nil {
				return err
			}
		}
	}
	return nil
}
