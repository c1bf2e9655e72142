package msrag

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/lexical"
)

// SearchLexical fills the lexical channels of ch (from SearchVectors, for
// the same queries, in order) with each one's top windowK chunks for the
// query texts: each query is analysed once with the index's analyzer, every
// lexical channel is searched with the statistics summed over the shards,
// and the shards' lists are merged in the dense windows' canonical order
// (score descending, document, byte start), so that a sharded index ranks
// exactly as one index. An index without lexical windows has nothing to
// fill; one whose analyzer this msrag does not produce is an error.
func (ix *Index) SearchLexical(ctx context.Context, queries []string, ch *ChunkHits, windowK int) error {
	if ix.lex == nil {
		return nil
	}
	if ix.lex.err != nil {
		return ix.lex.err
	}
	if len(queries) != ch.NQ {
		return fmt.Errorf("msrag: %d query texts for %d queries searched", len(queries), ch.NQ)
	}
	if err := checkQueries(queries); err != nil {
		return err
	}
	windowK = ix.Clamp(SearchOptions{WindowK: windowK}).WindowK
	tok := ix.lex.analyzer.NewTokenizer()
	terms := make([][]string, len(queries))
	for i, q := range queries {
		terms[i] = tok.Append(nil, q)
	}
	ch.lex = &lexicalTrace{terms: terms, channels: make([]channelTrace, len(ch.Layout))}
	for ci, c := range ch.Layout {
		if c.Kind != Lexical {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ix.searchLexicalChannel(ch, ci, terms, windowK); err != nil {
			return fmt.Errorf("msrag: channel %s: %w", c.Name(), err)
		}
	}
	return nil
}

// lexicalTrace keeps what explains a batch's lexical hits: the queries'
// terms and, per channel, the statistics and the shard and row of every hit.
type lexicalTrace struct {
	terms    [][]string
	channels []channelTrace
}

type channelTrace struct {
	stats       lexical.Stats
	shard, rows []int32 // parallel to the channel's Hits.Docs
}

// termRef is a lexical evidence chunk of a query's hits whose terms are
// wanted: hit and ev place it in the hits, ci and p in the chunk lists.
type termRef struct{ hit, ev, ci, p int }

// lexicalTerms sets the Terms of the evidence refs names in row (query q's
// hits) to the query terms each chunk holds. The chunks are explained
// together per channel and shard (lexical.Index.Holds), so that each
// query term's postings are decoded once for all of them; a channel
// without a trace of the search is left without terms.
func (ix *Index) lexicalTerms(ch *ChunkHits, q int, row []Hit, refs []termRef) {
	if ch.lex == nil || ix.lex == nil || len(refs) == 0 {
		return
	}
	type group struct {
		ci    int
		shard int32
	}
	groups := map[group][]int{} // positions in refs
	for i, r := range refs {
		if r.ci < len(ch.lex.channels) && ch.lex.channels[r.ci].rows != nil {
			g := group{r.ci, ch.lex.channels[r.ci].shard[r.p]}
			groups[g] = append(groups[g], i)
		}
	}
	for g, list := range groups {
		tr := &ch.lex.channels[g.ci]
		rows := mapSlice(list, func(i int) int { return int(tr.rows[refs[i].p]) })
		held, err := ix.lexShards(ch.Layout[g.ci])[g.shard].ix.Holds(ch.lex.terms[q], rows)
		if err != nil {
			continue
		}
		for k, i := range list {
			row[refs[i].hit].Evidence[refs[i].ev].Terms = held[k]
		}
	}
}

// lexShard is one shard's lexical index of a channel and how its rows map
// to the index's documents and byte spans.
type lexShard struct {
	ix   *lexical.Index
	hit  func(row int32) chunkHit
	hits lexical.Hits
}

// lexShards returns the shards' lexical indices of channel c.
func (ix *Index) lexShards(c Channel) []lexShard {
	out := make([]lexShard, len(ix.shards))
	wi := slices.IndexFunc(ix.man.Windows, func(w WindowInfo) bool { return windowOf(w) == c.Window })
	for si, sh := range ix.shards {
		if c.WholeDoc() {
			ends := sh.docEnds()
			out[si] = lexShard{ix: sh.docLex, hit: func(r int32) chunkHit { return chunkHit{doc: sh.gidx[r], end: ends[r]} }}
			continue
		}
		ct := sh.windows[wi].chunks
		out[si] = lexShard{ix: sh.windows[wi].lex, hit: func(r int32) chunkHit {
			return chunkHit{doc: sh.gidx[ct.Doc[r]], start: ct.ByteStart[r], end: ct.ByteEnd[r]}
		}}
	}
	return out
}

// searchLexicalChannel searches channel ci of every shard and writes the
// merged lists into ch.
func (ix *Index) searchLexicalChannel(ch *ChunkHits, ci int, terms [][]string, windowK int) error {
	shards := ix.lexShards(ch.Layout[ci])
	var st lexical.Stats
	for _, s := range shards {
		st.Add(s.ix.Stats(terms))
	}
	p := ix.lex.bm25
	k := windowK + tieMargin
	for i := range shards {
		var err error
		if shards[i].hits, err = shards[i].ix.Search(terms, k, p, &st); err != nil {
			return err
		}
	}
	nq := ch.NQ
	h := fuse.Hits{K: windowK, Docs: make([]int32, nq*windowK), Scores: make([]float32, nq*windowK)}
	start, end := make([]int64, nq*windowK), make([]int64, nq*windowK)
	tr := channelTrace{stats: st, shard: make([]int32, nq*windowK), rows: make([]int32, nq*windowK)}
	var buf []chunkHit
	for q := range nq {
		var err error
		if buf, err = mergeLexical(buf[:0], shards, terms[q], q, windowK, p, &st); err != nil {
			return err
		}
		for r := range windowK {
			i := q*windowK + r
			if r < len(buf) {
				c := buf[r]
				h.Docs[i], h.Scores[i], start[i], end[i] = c.doc, c.score, c.start, c.end
				tr.shard[i], tr.rows[i] = c.shard, c.row
			} else {
				h.Docs[i], h.Scores[i], start[i], end[i] = -1, 0, 0, 0
			}
		}
	}
	ch.Hits[ci], ch.Start[ci], ch.End[ci] = h, start, end
	if ch.lex != nil {
		ch.lex.channels[ci] = tr
	}
	return nil
}

// mergeLexical appends query q's best k chunks over all shards to buf in
// the canonical order. While a shard's list is full and its last score
// reaches the k-th merged one, chunks tied with it may lie beyond the list:
// that shard is searched again for q with twice as many.
func mergeLexical(buf []chunkHit, shards []lexShard, query []string, q, k int, p lexical.BM25, st *lexical.Stats) ([]chunkHit, error) {
	lists := make([]lexical.Hits, len(shards))
	off := make([]int, len(shards))
	for i, s := range shards {
		lists[i], off[i] = s.hits, q*s.hits.K
	}
	for {
		buf = buf[:0]
		for i, s := range shards {
			l := lists[i]
			for j := off[i]; j < off[i]+l.K && l.Rows[j] >= 0; j++ {
				c := s.hit(l.Rows[j])
				c.score, c.shard, c.row = l.Scores[j], int32(i), l.Rows[j]
				buf = append(buf, c)
			}
		}
		slices.SortFunc(buf, func(a, b chunkHit) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.doc, b.doc), cmp.Compare(a.start, b.start))
		})
		if len(buf) < k {
			return buf, nil
		}
		again := false
		for i, s := range shards {
			l := lists[i]
			last := off[i] + l.K - 1
			if l.Rows[last] < 0 || l.K >= s.ix.Docs() || l.Scores[last] < buf[k-1].score {
				continue
			}
			more, err := s.ix.Search([][]string{query}, min(2*l.K, s.ix.Docs()), p, st)
			if err != nil {
				return nil, err
			}
			lists[i], off[i], again = more, 0, true
		}
		if !again {
			return buf[:min(len(buf), k)], nil
		}
	}
}
