package build

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/embed"
)

// embed is the fourth stage: EmbedChunks calls, one at a time, or as many
// at once as an embed.Pipelined embedder asks for (a server keeps working
// while a call waits for its last requests). Batches go on to add in the
// order they came, whatever order the calls finish in.
func (b *Builder) embed(ctx context.Context, in <-chan *embedBatch, out chan<- *embedBatch) error {
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
func (b *Builder) startEmbed(ctx context.Context, bt *embedBatch) *embedCall {
	c := &embedCall{bt: bt, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		if len(bt.items) == 0 { // documents without chunks: nothing to embed
			return
		}
		b.busy.Begin()
		defer b.busy.End()
		if b.late != nil {
			c.err = b.embedLate(ctx, bt)
		} else {
			c.err = b.embedChunks(ctx, bt)
		}
	}()
	return c
}

// embedChunks embeds every chunk of bt alone.
func (b *Builder) embedChunks(ctx context.Context, bt *embedBatch) error {
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
func (b *Builder) finishEmbed(ctx context.Context, c *embedCall, out chan<- *embedBatch) error {
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
