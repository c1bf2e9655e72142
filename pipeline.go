package msrag

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/tokenizer"
)

// docBatch is a batch of documents on its way from read to order, with the
// chunks prepare cut from them.
type docBatch struct {
	seq   int   // place in input order
	base  int32 // document index of docs[0]
	docs  []corpus.Doc
	items []item
	segs  []segment // a Late build's segments, in document order
}

// segment is one span of a document a Late build encodes in one pass.
type segment struct {
	doc  int32
	span chunk.Span // content tokens of the document
	ids  []int32    // their ids
}

// item is one unique chunk on its way to the embedder.
type item struct {
	doc                int32
	tokStart, tokEnd   int32
	byteStart, byteEnd int64
	member             uint64  // bit i: the chunk is a window of builder.windows[i]
	ids                []int32 // content token ids (a slice of the document's)
	text               string  // the chunk's text (a substring of the document's)
	// pieces say, in a Late build, which segments' rows the chunk pools;
	// their Seg indexes the segments of the batch that holds the item.
	pieces []late.Piece
}

// embedBatch is a batch of chunks for the embedder, and then their vectors.
type embedBatch struct {
	items  []item
	segs   []segment
	tokens int64
	vecs   []float32
}

// testHookPrepare, when set by a test, is called for every document before
// it is tokenized; an error fails the build as a failing document would.
var testHookPrepare func(id string) error

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
// The slots bound the batches between read and order to 2*Workers+2: when a
// worker is slow the reader waits, instead of the reorder buffer growing.
func (b *builder) run(ctx context.Context, src corpus.Reader) error {
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
	g.Go(func() error { return closeOnSuccess(toAdd, b.embed(ctx, toEmbed, toAdd)) })
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
func (b *builder) read(ctx context.Context, src corpus.Reader, slots *semaphore.Weighted, out chan<- *docBatch) error {
	var next int32
	for seq := 0; ; seq++ {
		if err := slots.Acquire(ctx, 1); err != nil {
			return err
		}
		docs, err := src.Next(ctx)
		st := src.Stats()
		b.skipped.Store(st.Empty + st.Duplicates)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		bt := &docBatch{seq: seq, base: next, docs: docs}
		next += int32(len(docs))
		b.docs.Add(int64(len(docs)))
		b.units.Store(int64(st.Units))
		b.report()
		if err := send(ctx, out, bt); err != nil {
			return err
		}
	}
}

// prepare is one worker of the second stage: it tokenizes each document of
// a batch once, without special tokens or truncation, and cuts every window.
func (b *builder) prepare(ctx context.Context, in <-chan *docBatch, out chan<- *docBatch) error {
	var res chunk.Result
	var spans []chunk.Span
	tok := b.cfg.Embedder.Tokenizer()
	for {
		bt, ok, err := receive(ctx, in)
		if !ok {
			return err
		}
		for di, d := range bt.docs {
			if err := b.prepareDoc(tok, bt, bt.base+int32(di), d, &res, &spans); err != nil {
				return err
			}
		}
		if err := send(ctx, out, bt); err != nil {
			return err
		}
	}
}

// prepareDoc appends the unique chunks of document d (index doc) to bt.
func (b *builder) prepareDoc(tok *tokenizer.Tokenizer, bt *docBatch, doc int32, d corpus.Doc, res *chunk.Result, spans *[]chunk.Span) error {
	if testHookPrepare != nil {
		if err := testHookPrepare(d.ID); err != nil {
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

// cutSegments appends the segments of document doc (content ids) to bt and
// gives each of its items the pieces of its pool.
func (b *builder) cutSegments(bt *docBatch, doc int32, ids []int32, items []item) {
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

// order is the third stage: it puts batches back in input order, records
// their documents and cuts their chunks into embedder batches of about
// Config.BatchTokens tokens.
func (b *builder) order(ctx context.Context, in <-chan *docBatch, slots *semaphore.Weighted, out chan<- *embedBatch) error {
	pending := map[int]*docBatch{}
	want := 0
	cur := &embedBatch{}
	for {
		bt, ok, err := receive(ctx, in)
		if err != nil {
			return err
		}
		if !ok {
			if len(cur.items) == 0 {
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
func (b *builder) emit(ctx context.Context, bt *docBatch, cur *embedBatch, out chan<- *embedBatch) (*embedBatch, error) {
	for _, d := range bt.docs {
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
func (b *builder) emitLate(ctx context.Context, bt *docBatch, cur *embedBatch, out chan<- *embedBatch) (*embedBatch, error) {
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

// embed is the fourth stage: EmbedChunks calls, one at a time, or as many
// at once as an embed.Pipelined embedder asks for (a server keeps working
// while a call waits for its last requests). Batches go on to add in the
// order they came, whatever order the calls finish in.
func (b *builder) embed(ctx context.Context, in <-chan *embedBatch, out chan<- *embedBatch) error {
	calls := 1
	if p, ok := b.cfg.Embedder.(embed.Pipelined); ok {
		calls = max(p.Calls(), 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	var queue []*embedCall
	defer func() { // after a failure, let the calls in flight see it and end
		cancel()
		for _, c := range queue {
			<-c.done
		}
	}()
	for {
		bt, ok, err := receive(ctx, in)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		queue = append(queue, b.startEmbed(ctx, bt))
		if len(queue) < calls {
			continue
		}
		if err := b.finishEmbed(ctx, queue[0], out); err != nil {
			return err
		}
		queue = queue[1:]
	}
	for len(queue) > 0 {
		if err := b.finishEmbed(ctx, queue[0], out); err != nil {
			return err
		}
		queue = queue[1:]
	}
	return nil
}

// embedCall is one EmbedChunks call in flight; done is closed when err and
// the batch's vectors are set.
type embedCall struct {
	bt   *embedBatch
	err  error
	done chan struct{}
}

// startEmbed starts embedding bt's chunks on a goroutine of its own.
func (b *builder) startEmbed(ctx context.Context, bt *embedBatch) *embedCall {
	c := &embedCall{bt: bt, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		b.busy.begin()
		defer b.busy.end()
		if b.late != nil {
			c.err = b.embedLate(ctx, bt)
		} else {
			c.err = b.embedChunks(ctx, bt)
		}
	}()
	return c
}

// embedChunks embeds every chunk of bt alone.
func (b *builder) embedChunks(ctx context.Context, bt *embedBatch) error {
	chunks := make([]embed.Chunk, len(bt.items))
	for i, it := range bt.items {
		chunks[i] = embed.Chunk{IDs: it.ids, Text: it.text}
	}
	var err error
	bt.vecs, err = b.cfg.Embedder.EmbedChunks(ctx, chunks, embed.Passage)
	if err == nil && len(bt.vecs) != len(chunks)*b.spec.Dims {
		err = fmt.Errorf("msrag: embedder %s returned %d floats for %d chunks of %d dims", b.spec.Name, len(bt.vecs), len(chunks), b.spec.Dims)
	}
	return err
}

// finishEmbed waits for call c, counts it and hands its batch to add.
func (b *builder) finishEmbed(ctx context.Context, c *embedCall, out chan<- *embedBatch) error {
	<-c.done
	if c.err != nil {
		its := c.bt.items
		return fmt.Errorf("msrag: embedding %d chunks of documents %d to %d (counted from 0 in corpus order): %w",
			len(its), its[0].doc, its[len(its)-1].doc, c.err)
	}
	b.chunks.Add(int64(len(c.bt.items)))
	b.tokens.Add(c.bt.tokens)
	b.report()
	return send(ctx, out, c.bt)
}

// busyClock measures the wall time during which at least one embedder call
// is in flight, so that overlapping calls are not counted twice.
type busyClock struct {
	mu       sync.Mutex
	inflight int
	since    time.Time
	total    time.Duration
}

func (c *busyClock) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == 0 {
		c.since = time.Now()
	}
	c.inflight++
}

func (c *busyClock) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	if c.inflight == 0 {
		c.total += time.Since(c.since)
	}
}

// busy returns the time so far.
func (c *busyClock) busy() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight > 0 {
		return c.total + time.Since(c.since)
	}
	return c.total
}

// add is the last stage: every vector goes to the index of each window that
// lists its chunk; at the end the windows' queued vectors are flushed.
func (b *builder) add(ctx context.Context, in <-chan *embedBatch) error {
	dims := b.spec.Dims
	for {
		bt, ok, err := receive(ctx, in)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		for i, it := range bt.items {
			v := bt.vecs[i*dims : (i+1)*dims]
			for wi, w := range b.windows {
				if it.member&(1<<wi) == 0 {
					continue
				}
				w.chunks.Add(it.doc, it.tokStart, it.tokEnd, it.byteStart, it.byteEnd)
				if err := w.push(v, b.cfg.TrainSize); err != nil {
					return err
				}
			}
		}
		b.unique += int64(len(bt.items))
	}
	for _, w := range b.windows {
		if err := w.flush(true); err != nil {
			return err
		}
	}
	return nil
}
