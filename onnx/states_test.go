package onnx

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/tokenizer"
)

// The mean of the token states EmbedTokenStates hands back, normalised, is
// the vector EmbedTokens makes of the same sequences in the same batches (bit
// for bit: the same rows added in the same order), on one session and on a
// pool of two; the lead rows are [CLS] and the role's prefix.
func TestEmbedTokenStatesPoolToTheVector(t *testing.T) {
	for _, tc := range []struct {
		model string
		lead  [2]int // by Role: Passage, Query
	}{{"e5-small-v2", [2]int{1 + 2, 1 + 2}}, {"all-minilm-l6-v2", [2]int{1, 1}}} {
		t.Run(tc.model, func(t *testing.T) {
			opts := Options{TokenBudget: 700, Threads: 1}
			one := openModel(t, tc.model, opts)
			pool, err := NewPool(openModel(t, tc.model, opts), openModel(t, tc.model, opts))
			if err != nil {
				t.Fatal(err)
			}
			var seqs [][]int32
			for _, s := range sampleTexts(t, 12) {
				ids := one.Tokenizer().EncodeWith(s, tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
				seqs = append(seqs, ids[:min(len(ids), one.MaxContentTokens(Passage))])
			}
			for _, role := range []Role{Passage, Query} {
				if got := one.PrefixTokens(role) + 1; got != tc.lead[role] {
					t.Fatalf("%s: %d lead rows, want %d", role, got, tc.lead[role])
				}
				want, err := one.EmbedTokens(context.Background(), seqs, role)
				if err != nil {
					t.Fatal(err)
				}
				for name, e := range map[string]embed.TokenEmbedder{"one session": one, "pool": pool} {
					got := pooledStates(t, e, seqs, role, tc.lead[role])
					if !slices.Equal(got, want) {
						t.Errorf("%s %s: pooled token states differ from EmbedTokens", name, role)
					}
				}
			}
		})
	}
}

// pooledStates pools and normalises every sequence's states, checking their
// shape: lead rows, one row per content id, one [SEP] row.
func pooledStates(t *testing.T, e embed.TokenEmbedder, seqs [][]int32, role Role, lead int) []float32 {
	t.Helper()
	dims := e.Spec().Dims
	out := make([]float32, len(seqs)*dims)
	var mu sync.Mutex
	busy := false
	err := e.EmbedTokenStates(context.Background(), seqs, role, func(i int, s embed.TokenStates) error {
		mu.Lock()
		if busy {
			t.Error("fn called while another call runs")
		}
		busy = true
		mu.Unlock()
		defer func() { mu.Lock(); busy = false; mu.Unlock() }()
		if s.Lead != lead || s.Content != len(seqs[i]) || s.Len(dims) != lead+len(seqs[i])+1 {
			t.Errorf("sequence %d of %d ids: %d rows, lead %d, content %d", i, len(seqs[i]), s.Len(dims), s.Lead, s.Content)
		}
		mask := make([]int64, s.Len(dims))
		for j := range mask {
			mask[j] = 1
		}
		dst := out[i*dims : (i+1)*dims]
		pool(dst, s.Rows, mask, PoolMean)
		embed.Normalize(dst)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEmbedTokenStatesErrors(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2", Options{})
	stop := errors.New("stop")
	calls := 0
	err := e.EmbedTokenStates(context.Background(), [][]int32{{100, 200}, {300}}, Passage, func(int, embed.TokenStates) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("an error from fn: %v after %d calls, want it back after 1", err, calls)
	}
	long := make([]int32, e.MaxContentTokens(Passage)+1)
	if err := e.EmbedTokenStates(context.Background(), [][]int32{long}, Passage, func(int, embed.TokenStates) error { return nil }); !errors.Is(err, ErrInput) {
		t.Errorf("a sequence too long: %v, want ErrInput", err)
	}
}
