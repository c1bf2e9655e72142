package msrag

import (
	"context"
	"sync"

	"github.com/msrag/msrag/embed"
)

// QueryCache is an Embedder that remembers the query vectors of another by
// text, so that runs searching the same queries (one per embedding mode,
// say) search them with the same vectors and embed them once. Everything
// but query embedding passes through to the embedder it wraps; give it as
// BatchOptions.Queries, not to a build. Safe for concurrent use.
type QueryCache struct {
	Embedder
	mu   sync.Mutex
	vecs map[string][]float32
}

// NewQueryCache wraps e.
func NewQueryCache(e Embedder) *QueryCache {
	return &QueryCache{Embedder: e, vecs: map[string][]float32{}}
}

// Embed returns the remembered vectors of queries and embeds the others.
// Texts not held are embedded as a plain run would embed them, repeats
// included, so that an int8 model (whose vectors depend slightly on the
// batch) gives the vectors a plain run gives. Other roles pass through.
func (c *QueryCache) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	if role != embed.Query {
		return c.Embedder.Embed(ctx, texts, role)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, t := range texts {
		if _, ok := c.vecs[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		vecs, err := c.Embedder.Embed(ctx, missing, role)
		if err != nil {
			return nil, err
		}
		dims := len(vecs) / len(missing)
		for i, t := range missing {
			c.vecs[t] = vecs[i*dims : (i+1)*dims : (i+1)*dims]
		}
	}
	var out []float32
	for _, t := range texts {
		out = append(out, c.vecs[t]...)
	}
	return out, nil
}

// Len returns the number of queries remembered.
func (c *QueryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}
