// Package scatter searches an index sharded into directories in three
// phases that any scheduler can run as separate processes (msrag runs them
// on Slurm), which share a work directory:
//
//   - statistics (Statistics), a task per shard: shard i's corpus
//     statistics for the queries, for the kinds that score with them
//     (channel.Statistics: documents, the query terms' frequencies), and
//     the i-th block of the queries embedded, so that every query is
//     embedded once;
//   - scatter (Scatter), a task per shard: shard i alone opened
//     (msrag.OpenShard), searched with every shard's statistics added,
//     each channel's canonical top rows written to a lists file;
//   - gather (OpenGather, then Gather.SearchBatches), one task: every
//     shard's lists of each channel merged exactly (channel.Merge), then
//     fused by the shards' documents (Gather.Fuse), as msrag.Index.Fuse
//     fuses any search's: a Gather is a msrag.Searcher.
//
// It ranks exactly as one process searching the shards together does
// (msrag.OpenWith of every shard), which ranks as one index over the whole
// corpus. Every file a phase writes is checked by the next: missing,
// damaged, of other queries or of other shards is an error naming the
// file, before anything is fused or written. Each phase reads and checks
// the shards' manifests once (msrag.ReadShards) and opens what it searches
// from them.
package scatter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/internal/scatterfile"
)

// QuerySet is the queries of a scatter-gather search: ids and texts.
type QuerySet struct {
	IDs, Texts []string
}

// QuerySetOf returns the ids and texts of queries.
func QuerySetOf(queries []corpus.Query) QuerySet {
	var qs QuerySet
	for _, q := range queries {
		qs.IDs, qs.Texts = append(qs.IDs, q.ID), append(qs.Texts, q.Text)
	}
	return qs
}

// Options says how a scatter-gather search runs; every phase of one search
// is given the same.
type Options struct {
	// Work is the directory the phases share.
	Work string
	// ChannelK is the rows each channel returns per query; default 100.
	ChannelK int
	// Batch is the queries searched at once, a block of the lists files;
	// default 1024.
	Batch int
	// Kinds are the kinds of channel searched; nil: every kind of the
	// index.
	Kinds []msrag.ChannelKind
	// Terms keeps what explains every row (the query terms it holds,
	// channel.Explainer), for evidence.
	Terms bool
	// Open says how a phase opens a shard: verification, GPUs, the model's
	// options (Embedder and Kinds are set by the phase).
	Open msrag.OpenOptions
}

func (o Options) withDefaults() Options {
	if o.ChannelK <= 0 {
		o.ChannelK = 100
	}
	if o.Batch <= 0 {
		o.Batch = 1024
	}
	return o
}

// shardSet is the shards of a scatter-gather search: their manifests, read
// and checked once to be of one index, and each manifest's sha256.
type shardSet struct {
	*msrag.Shards
	sums     []string
	allKinds []channel.Kind
}

// openShardSet reads and checks the shards' manifests.
func openShardSet(dirs []string) (*shardSet, error) {
	if len(dirs) == 0 {
		return nil, errors.New("msrag: no shard directory given")
	}
	shards, err := msrag.ReadShards(dirs...)
	if err != nil {
		return nil, err
	}
	set := &shardSet{Shards: shards}
	for _, d := range dirs {
		sum, err := safefile.SHA256(filepath.Join(d, "manifest.json"))
		if err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
		set.sums = append(set.sums, sum)
	}
	if err := set.checkNumbers(); err != nil {
		return nil, err
	}
	if set.allKinds, err = channel.KindsOf(set.Manifests[0]); err != nil {
		return nil, fmt.Errorf("msrag: index %s: %w", dirs[0], err)
	}
	return set, nil
}

// checkNumbers fails unless the shards that record their place in a
// sharded build (msrag index --shard i/n) are of a build of as many shards
// as there are directories (checkParts has checked one n, each place once).
func (s *shardSet) checkNumbers() error {
	for i, m := range s.Manifests {
		var k, n int
		if m.Shard == "" {
			continue
		}
		if _, err := fmt.Sscanf(m.Shard, "%d/%d", &k, &n); err != nil || n != len(s.Dirs) {
			return fmt.Errorf("msrag: %s holds shard %s, and %d shard directories were given: %w", s.Dirs[i], m.Shard, len(s.Dirs), msrag.ErrIndexMismatch)
		}
	}
	return nil
}

// kindsSearched returns the kinds o searches: o.Kinds, each of the index, or
// every kind of it.
func (s *shardSet) kindsSearched(o Options) ([]channel.Kind, error) {
	if o.Kinds == nil {
		return s.allKinds, nil
	}
	for _, k := range o.Kinds {
		if !slices.Contains(s.allKinds, k) {
			return nil, fmt.Errorf("msrag: index %s has no %s windows: %w", s.Dirs[0], k.Name(), k.Traits().Absent)
		}
	}
	return o.Kinds, nil
}

// queryNeeds returns what a search of kinds reads of the queries.
func queryNeeds(kinds []channel.Kind) channel.Needs {
	var n channel.Needs
	for _, k := range kinds {
		n |= k.Needs()
	}
	return n
}

// fingerprint identifies a search: its queries (ids and texts), channel k,
// blocks, kinds and whether it keeps evidence terms. Every file of one
// search records it.
func fingerprint(qs QuerySet, o Options, kinds []channel.Kind) string {
	h := sha256.New()
	fmt.Fprintf(h, "msrag scatter-gather %d\nwindow_k %d batch %d terms %v kinds", scatterfile.Format, o.ChannelK, o.Batch, o.Terms)
	for _, k := range kinds {
		fmt.Fprintf(h, " %s", k.Name())
	}
	fmt.Fprintf(h, "\nqueries %d\n", len(qs.IDs))
	for i := range qs.IDs {
		fmt.Fprintf(h, "%d %q %q\n", i, qs.IDs[i], qs.Texts[i])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// check fails unless qs has an id per text, none empty.
func (qs QuerySet) check() error {
	if len(qs.IDs) != len(qs.Texts) {
		return fmt.Errorf("msrag: %d query ids for %d texts", len(qs.IDs), len(qs.Texts))
	}
	return msrag.CheckQueries(qs.Texts)
}

// block returns the queries [lo, hi) of the i-th of n blocks of nq queries:
// the part of the queries statistics task i embeds.
func block(nq, i, n int) (lo, hi int) {
	return i * nq / n, (i + 1) * nq / n
}

// Statistics is task i of the statistics phase over the shards dirs: it
// writes shard i's statistics for the queries (of the kinds whose scores
// need them) and embeds the i-th of len(dirs) blocks of the queries, when
// the search needs their vectors, into o.Work.
func Statistics(ctx context.Context, dirs []string, i int, qs QuerySet, o Options) error {
	o = o.withDefaults()
	set, kinds, fp, err := startPhase(dirs, i, qs, o)
	if err != nil {
		return err
	}
	if err := removeStale(o.Work, scatterfile.PhaseStats, i); err != nil {
		return err
	}
	if err := removeStale(o.Work, scatterfile.PhaseQueries, i); err != nil {
		return err
	}
	var withStats []channel.Kind
	for _, k := range kinds {
		if k.Needs().Has(channel.Statistics) {
			withStats = append(withStats, k)
		}
	}
	payload := []byte("{}")
	if len(withStats) > 0 {
		st, err := shardStats(set, i, qs, withStats, o.Open)
		if err != nil {
			return err
		}
		if payload, err = json.Marshal(st); err != nil {
			return fmt.Errorf("msrag: %w", err)
		}
	}
	if queryNeeds(kinds).Has(channel.QueryVectors) && !set.Manifests[0].Model.None() {
		if err := embedBlock(ctx, set, i, qs, o, fp); err != nil {
			return err
		}
	}
	size, sum, err := scatterfile.WriteData(o.Work, scatterfile.PhaseStats, i, payload)
	if err != nil {
		return err
	}
	rec := &scatterfile.Record{Phase: scatterfile.PhaseStats, Queries: fp, Shard: i, Shards: len(dirs), Manifest: set.sums[i],
		File: filepath.Base(scatterfile.DataPath(o.Work, scatterfile.PhaseStats, i)), Size: size, SHA256: sum}
	return scatterfile.WriteRecord(o.Work, i, rec)
}

// startPhase checks what every phase's task i checks: the shards belong
// together, i is one of them, the queries are well formed; and returns the
// kinds searched and the search's fingerprint.
func startPhase(dirs []string, i int, qs QuerySet, o Options) (*shardSet, []channel.Kind, string, error) {
	if err := qs.check(); err != nil {
		return nil, nil, "", err
	}
	if err := checkWork(o.Work); err != nil {
		return nil, nil, "", err
	}
	set, err := openShardSet(dirs)
	if err != nil {
		return nil, nil, "", err
	}
	if i < 0 || i >= len(dirs) {
		return nil, nil, "", fmt.Errorf("msrag: task %d of a search of %d shards", i, len(dirs))
	}
	kinds, err := set.kindsSearched(o)
	if err != nil {
		return nil, nil, "", err
	}
	return set, kinds, fingerprint(qs, o, kinds), nil
}

// shardStats opens the kinds of shard i and returns its statistics for
// every query.
func shardStats(set *shardSet, i int, qs QuerySet, kinds []channel.Kind, open msrag.OpenOptions) (channel.StatsSet, error) {
	open.Kinds, open.GPUs = kinds, nil // statistics search nothing
	sh, err := msrag.OpenShard(open, set.Shards, i)
	if err != nil {
		return nil, err
	}
	defer sh.Close()
	return sh.Stats(&channel.Queries{Texts: qs.Texts})
}

// embedBlock embeds the queries of block i with the index's model and
// writes them, in record batches of o.Batch, with their record.
func embedBlock(ctx context.Context, set *shardSet, i int, qs QuerySet, o Options, fp string) error {
	m := set.Manifests[0]
	emb := o.Open.Embedder
	if emb == nil {
		var err error
		if emb, err = msrag.ReopenEmbedder(ctx, m.Model, o.Open.EmbedderOptions); err != nil {
			return fmt.Errorf("msrag: index %s was built with model %q: %w", set.Dirs[0], m.Model.Name, err)
		}
		defer emb.Close()
	}
	if err := msrag.CheckEmbedder(m, emb, set.Dirs[0]); err != nil {
		return err
	}
	lo, hi := block(len(qs.Texts), i, len(set.Dirs))
	path := scatterfile.Path(o.Work, scatterfile.PhaseQueries, i, ".arrow")
	w, err := scatterfile.CreateVectors(path, m.Model.Dims)
	if err != nil {
		return err
	}
	for b := lo; b < hi || b == lo; b += o.Batch {
		e := min(b+o.Batch, hi)
		var vecs []float32
		if e > b {
			if vecs, err = emb.Embed(ctx, qs.Texts[b:e], embed.Query); err != nil {
				w.Abort()
				return fmt.Errorf("msrag: queries %d to %d: %w", b+1, e, err)
			}
		}
		if err := w.Vectors(qs.IDs[b:e], vecs); err != nil {
			w.Abort()
			return err
		}
		if e >= hi {
			break
		}
	}
	size, sum, err := w.Commit()
	if err != nil {
		return err
	}
	rec := &scatterfile.Record{Phase: scatterfile.PhaseQueries, Queries: fp, Shard: i, Shards: len(set.Dirs), Lo: lo, Hi: hi,
		Batch: o.Batch, Dims: m.Model.Dims, File: filepath.Base(path), Size: size, SHA256: sum}
	return scatterfile.WriteRecord(o.Work, i, rec)
}

// addedStats reads every shard's statistics record, checks each is of this
// search and of the shard in its place, and returns their sum and its
// fingerprint.
func addedStats(set *shardSet, work, fp string) (channel.StatsSet, string, error) {
	sum := channel.StatsSet{}
	h := sha256.New()
	for j := range set.Dirs {
		rec, err := scatterfile.ReadRecord(work, scatterfile.PhaseStats, j, len(set.Dirs))
		if err != nil {
			return nil, "", fmt.Errorf("msrag: %w", err)
		}
		path := scatterfile.Path(work, scatterfile.PhaseStats, j, ".json")
		if err := ofSearch(rec, path, fp, set, j); err != nil {
			return nil, "", err
		}
		data, err := scatterfile.ReadData(work, scatterfile.PhaseStats, j, rec)
		if err != nil {
			return nil, "", fmt.Errorf("msrag: %w", err)
		}
		path = scatterfile.DataPath(work, scatterfile.PhaseStats, j)
		st, err := channel.DecodeStatsSet(data)
		if err != nil {
			return nil, "", fmt.Errorf("msrag: %s: %v: %w", path, err, scatterfile.ErrBad)
		}
		if err := sum.Add(st); err != nil {
			return nil, "", fmt.Errorf("msrag: %s: %w", path, err)
		}
		h.Write([]byte(rec.SHA256))
	}
	return sum, hex.EncodeToString(h.Sum(nil)), nil
}

// ofSearch fails unless the record at path is of the search fp and, for
// a shard's file, of shard j of set.
func ofSearch(rec *scatterfile.Record, path, fp string, set *shardSet, j int) error {
	if rec.Queries != fp {
		return fmt.Errorf("msrag: %s is of another search (other queries, window k, batch or channels): %w", path, scatterfile.ErrBad)
	}
	if (rec.Manifest != "" || rec.Phase != scatterfile.PhaseQueries) && rec.Manifest != set.sums[j] {
		return fmt.Errorf("msrag: %s is of another shard than %s (manifest sha256 %.12s..., the shard's is %.12s...): %w",
			path, set.Dirs[j], rec.Manifest, set.sums[j], scatterfile.ErrBad)
	}
	return nil
}

// queryVectors reads the blocks of embedded queries in order, checking each
// record; next returns the vectors of the next n queries.
type queryVectors struct {
	work, fp string
	shards   *shardSet
	width    int // the vectors' dims
	next     int // next block file
	reader   *scatterfile.Reader
	buf      []float32
	ids      []string
	seen     int // queries read so far
}

func newQueryVectors(set *shardSet, work, fp string) *queryVectors {
	return &queryVectors{work: work, fp: fp, shards: set, width: set.Manifests[0].Model.Dims}
}

// check checks every block's record and data before any is read.
func (v *queryVectors) check(nq int) error {
	lo := 0
	for j := range v.shards.Dirs {
		rec, err := scatterfile.ReadRecord(v.work, scatterfile.PhaseQueries, j, len(v.shards.Dirs))
		if err != nil {
			return fmt.Errorf("msrag: %w", err)
		}
		path := scatterfile.Path(v.work, scatterfile.PhaseQueries, j, ".json")
		if err := ofSearch(rec, path, v.fp, v.shards, j); err != nil {
			return err
		}
		if rec.Lo != lo || rec.Dims != v.width {
			return fmt.Errorf("msrag: %s holds queries %d to %d of %d dims, want from %d of %d: %w", path, rec.Lo, rec.Hi, rec.Dims, lo, v.width, scatterfile.ErrBad)
		}
		if _, err := scatterfile.CheckData(v.work, scatterfile.PhaseQueries, j, rec); err != nil {
			return fmt.Errorf("msrag: %w", err)
		}
		lo = rec.Hi
	}
	if lo != nq {
		return fmt.Errorf("msrag: the embedded queries end at %d of %d: %w", lo, nq, scatterfile.ErrBad)
	}
	return nil
}

// take returns the vectors of the next n queries, whose ids must be ids.
func (v *queryVectors) take(ids []string) ([]float32, error) {
	for len(v.ids) < len(ids) {
		if v.reader == nil {
			if v.next >= len(v.shards.Dirs) {
				return nil, fmt.Errorf("msrag: the embedded queries end after %d: %w", v.seen, scatterfile.ErrBad)
			}
			r, err := scatterfile.OpenVectors(scatterfile.Path(v.work, scatterfile.PhaseQueries, v.next, ".arrow"), v.width)
			if err != nil {
				return nil, err
			}
			v.reader, v.next = r, v.next+1
		}
		ids, vecs, err := v.reader.Vectors()
		if errors.Is(err, io.EOF) {
			v.reader.Close()
			v.reader = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		v.ids, v.buf = append(v.ids, ids...), append(v.buf, vecs...)
	}
	for i, id := range ids {
		if v.ids[i] != id {
			return nil, fmt.Errorf("msrag: embedded query %d is %q, want %q: %w", v.seen+i, v.ids[i], id, scatterfile.ErrBad)
		}
	}
	out := v.buf[: len(ids)*v.width : len(ids)*v.width]
	v.ids, v.buf = v.ids[len(ids):], v.buf[len(ids)*v.width:]
	v.seen += len(ids)
	return out, nil
}

func (v *queryVectors) close() {
	if v.reader != nil {
		v.reader.Close()
	}
}

// Scatter is task i of the scatter phase: it opens shard i alone, searches
// every block of the queries with every shard's statistics added, and
// writes each channel's canonical top rows (with the documents' ids) into
// o.Work.
func Scatter(ctx context.Context, dirs []string, i int, qs QuerySet, o Options) error {
	o = o.withDefaults()
	set, kinds, fp, err := startPhase(dirs, i, qs, o)
	if err != nil {
		return err
	}
	if err := removeStale(o.Work, scatterfile.PhaseLists, i); err != nil {
		return err
	}
	st, stFP, err := addedStats(set, o.Work, fp)
	if err != nil {
		return err
	}
	var vecs *queryVectors
	if queryNeeds(kinds).Has(channel.QueryVectors) && !set.Manifests[0].Model.None() {
		vecs = newQueryVectors(set, o.Work, fp)
		defer vecs.close()
		if err := vecs.check(len(qs.IDs)); err != nil {
			return err
		}
	}
	open := o.Open
	open.Kinds = kinds
	sh, err := msrag.OpenShard(open, set.Shards, i)
	if err != nil {
		return err
	}
	defer sh.Close()
	k := min(o.ChannelK, set.MaxChannelK())
	path := scatterfile.Path(o.Work, scatterfile.PhaseLists, i, ".arrow")
	w, err := scatterfile.CreateLists(path)
	if err != nil {
		return err
	}
	for lo := 0; lo < len(qs.IDs) || lo == 0; lo += o.Batch {
		hi := min(lo+o.Batch, len(qs.IDs))
		rows, err := scatterBlock(ctx, sh, qs, lo, hi, vecs, st, k, o.Terms)
		if err == nil {
			err = w.Lists(rows)
		}
		if err != nil {
			w.Abort()
			return fmt.Errorf("msrag: shard %s, queries %d to %d: %w", dirs[i], lo+1, hi, err)
		}
		if hi >= len(qs.IDs) {
			break
		}
	}
	size, sum, err := w.Commit()
	if err != nil {
		return err
	}
	rec := &scatterfile.Record{Phase: scatterfile.PhaseLists, Queries: fp, Stats: stFP, Shard: i, Shards: len(dirs), Manifest: set.sums[i],
		Batch: o.Batch, File: filepath.Base(path), Size: size, SHA256: sum}
	return scatterfile.WriteRecord(o.Work, i, rec)
}

// scatterBlock searches the queries [lo, hi) of a shard and returns every
// channel's rows.
func scatterBlock(ctx context.Context, sh *msrag.ShardSearcher, qs QuerySet, lo, hi int, vecs *queryVectors, st channel.StatsSet, k int, terms bool) ([]scatterfile.Row, error) {
	q := &channel.Queries{Texts: qs.Texts[lo:hi]}
	if vecs != nil {
		v, err := vecs.take(qs.IDs[lo:hi])
		if err != nil {
			return nil, err
		}
		q.Vectors, q.Dims = v, vecs.width
	}
	if hi == lo {
		return nil, nil
	}
	lists, err := sh.Search(ctx, q, st, k)
	if err != nil {
		return nil, err
	}
	layout := sh.Layout()
	var rows []scatterfile.Row
	for ci, h := range lists {
		for qi := range h.NumQueries() {
			var held [][]string
			if terms {
				if held, err = sh.Explain(q, qi, ci, h); err != nil {
					return nil, fmt.Errorf("channel %s, query %d: %w", layout[ci].Name(), lo+qi+1, err)
				}
			}
			for j := range h.K {
				x := h.At(qi, j)
				if x.Row < 0 {
					break
				}
				r := scatterfile.Row{Query: int32(lo + qi), Channel: int32(ci), Rank: int32(j), Row: x.Row, Doc: sh.DocID(int(x.Doc)),
					Score: x.Score, Start: x.Start, End: x.End}
				if held != nil {
					r.Terms = held[j]
				}
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}

// removeStale removes a task's record of phase in work, so that a rerun
// does not leave an old record beside a new data file, and the temporary
// files an earlier run of the task left when it was killed.
func removeStale(work, phase string, i int) error {
	err := os.Remove(scatterfile.Path(work, phase, i, ".json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("msrag: %w", err)
	}
	if err := scatterfile.RemoveTemps(work, phase, i); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	return nil
}

// removeTemps removes the temporary files every task of every phase left
// in work when it was killed (its rerun succeeded, or the gather would not
// have begun): the gather calls it once every record is checked.
func removeTemps(work string, n int) error {
	for _, phase := range []string{scatterfile.PhaseQueries, scatterfile.PhaseStats, scatterfile.PhaseLists} {
		for i := range n {
			if err := scatterfile.RemoveTemps(work, phase, i); err != nil {
				return fmt.Errorf("msrag: %w", err)
			}
		}
	}
	return nil
}

// checkWork fails unless work can be a work directory: a directory, a
// symbolic link to one, or a path whose first missing part the first task
// creates. A symbolic link to nothing (a file system not mounted on this
// node, a typing error) is refused rather than followed: the directory
// made at its target would lie on whatever disk is there, unseen by the
// tasks on other nodes.
func checkWork(work string) error {
	if work == "" {
		return errors.New("msrag: a scatter-gather search needs a work directory")
	}
	for p := filepath.Clean(work); ; p = filepath.Dir(p) {
		lst, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) && filepath.Dir(p) != p {
			continue // the first task creates it
		}
		if err != nil {
			return fmt.Errorf("msrag: work directory %s: %w", work, err)
		}
		st, err := os.Stat(p)
		switch {
		case err != nil && lst.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			return fmt.Errorf("msrag: work directory %s: %s is a symbolic link to %s, which does not exist: create it (or mount its file system), or give another work directory", work, p, target)
		case err != nil:
			return fmt.Errorf("msrag: work directory %s: %w", work, err)
		case !st.IsDir():
			return fmt.Errorf("msrag: work directory %s: %s is not a directory", work, p)
		}
		return nil
	}
}
