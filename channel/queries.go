package channel

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Queries is a batch of queries as the kinds search them: their texts and,
// when some kind needs them, their vectors by the index's model. What a
// kind makes of the texts (its analysis) is made once per batch and shared
// by every shard searched (PrepareQueries).
type Queries struct {
	Texts []string
	// Vectors are the queries' embeddings, len(Texts) rows of Dims; nil
	// when they were not embedded.
	Vectors []float32
	Dims    int

	mu       sync.Mutex
	prepared map[Kind]any
}

// Len returns the number of queries: of texts, or of vectors when there
// are no texts (queries known by their vectors alone).
func (q *Queries) Len() int {
	if q.Texts == nil && q.Dims > 0 {
		return len(q.Vectors) / q.Dims
	}
	return len(q.Texts)
}

// Vector returns query i's vector.
func (q *Queries) Vector(i int) []float32 { return q.Vectors[i*q.Dims : (i+1)*q.Dims] }

// CheckVectors fails unless the queries have vectors of dims dimensions.
func (q *Queries) CheckVectors(dims int) error {
	switch {
	case q.Vectors == nil:
		return fmt.Errorf("channel: the queries were not embedded")
	case q.Dims != dims || len(q.Vectors) != q.Len()*dims:
		return fmt.Errorf("channel: %d query floats of %d dims for %d queries, want %d dims", len(q.Vectors), q.Dims, q.Len(), dims)
	}
	return nil
}

// PrepareQueries returns what kind k makes of the queries' texts with
// prepare (T: their terms, say), made on first use and kept for the batch,
// which every shard searched shares.
func PrepareQueries[T any](q *Queries, k Kind, prepare func(texts []string) (T, error)) (T, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if v, ok := q.prepared[k].(T); ok {
		return v, nil
	}
	v, err := prepare(q.Texts)
	if err != nil {
		return v, err
	}
	if q.prepared == nil {
		q.prepared = map[Kind]any{}
	}
	q.prepared[k] = v
	return v, nil
}

// StatsSet is the statistics of every kind that needs some, by kind name.
type StatsSet map[string]Stats

// Add adds o (another shard's statistics for the same queries) to s.
func (s StatsSet) Add(o StatsSet) error {
	for name, st := range o {
		if have, ok := s[name]; ok {
			if err := have.Add(st); err != nil {
				return fmt.Errorf("channel: statistics of kind %s: %w", name, err)
			}
		} else {
			s[name] = st
		}
	}
	return nil
}

// MarshalJSON writes each kind's statistics as the kind marshals them.
func (s StatsSet) MarshalJSON() ([]byte, error) {
	m := make(map[string]Stats, len(s))
	for k, v := range s {
		m[k] = v
	}
	return json.Marshal(m)
}

// DecodeStatsSet reads what StatsSet's MarshalJSON writes, each kind's part
// by its registered kind.
func DecodeStatsSet(data []byte) (StatsSet, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := StatsSet{}
	for name, r := range raw {
		k, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("statistics of kind %q, which this msrag does not know", name)
		}
		st, err := k.DecodeStats(r)
		if err != nil {
			return nil, fmt.Errorf("statistics of kind %s: %w", name, err)
		}
		out[name] = st
	}
	return out, nil
}
