package msrag

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/channel"
)

// errExplain is what failingExplainer's Explain fails with.
var errExplain = errors.New("postings unreadable")

// failingExplainer is a lexical part of a shard whose Explain fails, as a
// kind's would on a damaged file.
type failingExplainer struct{ channel.Shard }

func (failingExplainer) Explain(*channel.Queries, int, int, []int32) ([][]string, error) {
	return nil, errExplain
}

// TestExplainErrorFailsSearch checks that a channel that fails to explain
// its chunks fails the search with its error, naming the channel, instead
// of leaving the evidence without terms; a search that asks for no terms
// does not explain and succeeds.
func TestExplainErrorFailsSearch(t *testing.T) {
	docs := scifactDocs(t, 40)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	k := slices.Index(ix.kinds, Lexical)
	part := ix.shards[0].parts[k]
	ix.shards[0].parts[k] = failingExplainer{part}
	defer func() { ix.shards[0].parts[k] = part }()

	queries := lexicalQueries(docs, 5)
	opts := SearchOptions{Fusion: mustFusion(t, "rrf:windows=all"), K: 10, ChannelK: 20}
	_, err := ix.Search(context.Background(), queries, opts)
	if !errors.Is(err, errExplain) || !strings.Contains(err.Error(), "bm25-") {
		t.Fatalf("search with a failing Explain: %v, want %v naming the lexical channel", err, errExplain)
	}
	opts.SkipTerms = true
	if _, err := ix.Search(context.Background(), queries, opts); err != nil {
		t.Fatalf("search without terms: %v", err)
	}
}

// TestScatterExplainError checks that ShardSearcher.Explain, which a scatter task
// keeping evidence calls for every list it writes, returns the error of a
// channel's Explain rather than rows without their terms.
func TestScatterExplainError(t *testing.T) {
	docs := scifactDocs(t, 40)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	kind := slices.Index(ix.kinds, Lexical)
	q := &channel.Queries{Texts: lexicalQueries(docs, 3)}
	sh := &ShardSearcher{ix: ix, kinds: []channel.Kind{Lexical}}
	st, err := sh.Stats(q)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := sh.Search(context.Background(), q, st, 10)
	if err != nil {
		t.Fatal(err)
	}
	ci := ix.first[kind]
	if held, err := sh.Explain(q, 0, ci, lists[ci]); err != nil || len(held) == 0 {
		t.Fatalf("a channel that explains: %d rows' terms, %v", len(held), err)
	}
	ix.shards[0].parts[kind] = failingExplainer{ix.shards[0].parts[kind]}
	if _, err := sh.Explain(q, 0, ci, lists[ci]); !errors.Is(err, errExplain) {
		t.Fatalf("a failing Explain: %v, want %v", err, errExplain)
	}
}
