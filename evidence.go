package msrag

import (
	"fmt"

	"github.com/msrag/msrag/channel"
)

// evidenceRef is an evidence chunk of a query's hits: hit and ev place it
// in the hits, ci and p in the chunk lists.
type evidenceRef struct{ hit, ev, ci, p int }

// explain sets the Terms of the evidence refs names in row (query q's hits)
// to what explains each chunk: the terms a scatter-gather search brought,
// or those the chunk's kind gives (channel.Explainer: the query terms a
// chunk holds). The chunks are explained together per channel and
// shard, so that each query term's postings are decoded once for all of
// them; a channel without a trace of its search is left without terms. A
// kind that fails to explain its chunks fails the search: its terms are
// never dropped in silence.
func (ix *Index) explain(ch *ChunkHits, q int, row []Hit, refs []evidenceRef) error {
	if ch.terms != nil {
		for _, r := range refs {
			if t := ch.terms[r.ci]; t != nil {
				row[r.hit].Evidence[r.ev].Terms = t[r.p]
			}
		}
		return nil
	}
	if ch.q == nil || ch.rows == nil {
		return nil
	}
	type group struct {
		ci    int
		shard int32
	}
	var groups map[group][]int // positions in refs; none for channels without terms
	for i, r := range refs {
		if ch.rows[r.ci] == nil || !ix.explains(ch.Layout[r.ci].Kind) {
			continue
		}
		if groups == nil {
			groups = map[group][]int{}
		}
		g := group{ci: r.ci}
		if s := ch.shards[r.ci]; s != nil {
			g.shard = s[r.p]
		}
		groups[g] = append(groups[g], i)
	}
	for g, list := range groups {
		kind := kindIndex(ix.kinds, ch.Layout[g.ci].Kind)
		if kind < 0 || int(g.shard) >= len(ix.shards) {
			continue
		}
		e, ok := ix.shards[g.shard].parts[kind].(channel.Explainer)
		if !ok {
			continue
		}
		rows := make([]int32, len(list))
		for k, i := range list {
			rows[k] = ch.rows[g.ci][refs[i].p]
		}
		held, err := e.Explain(ch.q, q, g.ci-ix.first[kind], rows)
		if err == nil && len(held) != len(rows) {
			err = fmt.Errorf("%d rows explained of %d", len(held), len(rows))
		}
		if err != nil {
			return fmt.Errorf("msrag: explaining the chunks of channel %s of %s for query %d: %w", ch.Layout[g.ci].Name(), ix.shards[g.shard].where(), q, err)
		}
		for k, i := range list {
			row[refs[i].hit].Evidence[refs[i].ev].Terms = held[k]
		}
	}
	return nil
}

// explains reports whether channels of kind k show the terms a chunk holds
// (their part of a shard is a channel.Explainer).
func (ix *Index) explains(k channel.Kind) bool {
	i := kindIndex(ix.kinds, k)
	if i < 0 || len(ix.shards) == 0 {
		return false
	}
	_, ok := ix.shards[0].parts[i].(channel.Explainer)
	return ok
}
