package msrag

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/benchdata"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/router"
	"github.com/msrag/msrag/tokenizer"
)

// Benchmarks of the whole pipeline and of search over real data. They need the
// evaluation data (SciFact and QMSum in the cache: testfiles.Dataset) and the all-MiniLM-L6-v2
// tokenizer (CACHE/models/all-minilm-l6-v2/tokenizer.json, or $MSRAG_TOKENIZER),
// and skip without them. See docs/performance.md, "Builds" and "Search and fusion".

func benchTokenizerPath(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("MSRAG_TOKENIZER")
	if p == "" {
		p = filepath.Join(cache.Dir(), "models", "all-minilm-l6-v2", "tokenizer.json")
	}
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("no tokenizer at %s (scripts/fetch-model.sh): %v", p, err)
	}
	return p
}

func benchCorpusPath(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(testfiles.Dataset(tb, name), "corpus.jsonl.gz")
}

// nopEmbedder returns zero vectors without looking at the tokens: with it a
// build measures reading, tokenizing, chunking, batching and the index
// bookkeeping, not a model.
type nopEmbedder struct {
	tok  *tokenizer.Tokenizer
	dims int
}

func (e *nopEmbedder) Spec() embed.Spec {
	return embed.Spec{Name: "nop", Dims: e.dims, MaxTokens: 512, SpecialTokens: e.tok.NumSpecialTokens(), Pooling: embed.PoolMean, Normalize: true}
}
func (e *nopEmbedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }
func (e *nopEmbedder) Close() error                    { return nil }
func (e *nopEmbedder) Embed(_ context.Context, texts []string, _ embed.Role) ([]float32, error) {
	return make([]float32, len(texts)*e.dims), nil
}
func (e *nopEmbedder) EmbedChunks(_ context.Context, chunks []embed.Chunk, _ embed.Role) ([]float32, error) {
	return make([]float32, len(chunks)*e.dims), nil
}

// contentTokens counts the content tokens of every document of a corpus file
// (title + " " + text, no special tokens): what the chunker cuts.
func contentTokens(tb testing.TB, tok *tokenizer.Tokenizer, path string) (docs, tokens int64) {
	tb.Helper()
	r, err := corpus.Open(path, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	for {
		batch, err := r.Next(context.Background())
		if err != nil {
			break
		}
		for _, d := range batch {
			tokens += int64(len(tok.EncodeWith(d.Full(), tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs))
			docs++
		}
	}
	return docs, tokens
}

// BenchmarkPipeline builds SciFact and QMSum (windows 100, 200, 500) from their
// corpus.jsonl.gz with BuildWithStats, in memory. embedder=nop measures the
// pipeline alone; embedder=hash64 adds the 64-dim hash test embedder. Metrics:
// content-tokens/s (tokens of the documents, each counted once: the target's
// unit) and embedded-tokens/s (tokens of the unique chunks handed to the
// embedder, summed over window sizes).
func BenchmarkPipeline(b *testing.B) {
	tokPath := benchTokenizerPath(b)
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		b.Fatal(err)
	}
	hash, err := hashembed.NewHash(tokPath, 64, 512)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"scifact", "qmsum"} {
		path := benchCorpusPath(b, name)
		docs, content := contentTokens(b, tok, path)
		for _, emb := range []struct {
			name string
			e    Embedder
		}{{"nop", &nopEmbedder{tok: tok, dims: 8}}, {"hash64", hash}} {
			b.Run("corpus="+name+"/embedder="+emb.name, func(b *testing.B) {
				b.ReportAllocs()
				var embedded int64
				for b.Loop() {
					src, err := corpus.Open(path, corpus.Options{})
					if err != nil {
						b.Fatal(err)
					}
					ix, st, err := BuildWithStats(context.Background(), src, Config{Embedder: emb.e, Windows: chunk.Sizes(100, 200, 500)})
					src.Close()
					if err != nil {
						b.Fatal(err)
					}
					ix.Close()
					if st.Docs != docs {
						b.Fatalf("built %d documents, the corpus has %d", st.Docs, docs)
					}
					embedded = st.Tokens
				}
				s := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(content)/s, "content-tokens/s")
				b.ReportMetric(float64(embedded)/s, "embedded-tokens/s")
				b.ReportMetric(float64(docs)/s, "docs/s")
				b.ReportMetric(float64(content), "content-tokens")
				b.ReportMetric(float64(embedded), "embedded-tokens")
			})
		}
	}
}

const (
	benchQueries = 10000
	benchDims    = 384
	benchSeed    = 0x5e4c
)

// benchQueryTexts reads SciFact's query texts.
func benchQueryTexts(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(testfiles.Dataset(tb, "scifact"), "queries.jsonl.gz"))
	if err != nil {
		tb.Skipf("no SciFact queries: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var texts []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatal(err)
		}
		texts = append(texts, q.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return texts
}

// benchQueryVectors embeds SciFact's queries with emb and repeats them to n
// rows, every repeat perturbed by Gaussian noise of norm about 0.1 and
// normalised again (fixed seed). scripts/searchbench makes the same vectors.
func benchQueryVectors(tb testing.TB, emb Embedder, n int) []float32 {
	tb.Helper()
	base, err := emb.Embed(context.Background(), benchQueryTexts(tb), embed.Query)
	if err != nil {
		tb.Fatal(err)
	}
	return benchdata.PerturbQueries(base, emb.Spec().Dims, n, benchSeed)
}

// benchSciFactIndex builds SciFact in memory with cfg and the 384-dim hash
// test embedder (which it returns too); the index is closed when b ends.
func benchSciFactIndex(b *testing.B, cfg Config) (*Index, Embedder) {
	b.Helper()
	emb, err := hashembed.NewHash(benchTokenizerPath(b), benchDims, 512)
	if err != nil {
		b.Fatal(err)
	}
	src, err := corpus.Open(benchCorpusPath(b, "scifact"), corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	cfg.Embedder = emb
	ix, err := Build(context.Background(), src, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return ix, emb
}

// BenchmarkSearch searches an in-memory SciFact index (windows 100, 200, 500,
// 384-dim hash test embedder, Flat inner product) with 10,000 query vectors
// (SciFact's 1,109 queries, repeated with noise) for 100 chunks per window and
// fuses them with RRF into 10 documents. stage=search+fuse is
// Index.SearchVectors + Index.Fuse; stage=faiss is the FAISS searches alone
// (the same k SearchVectors asks for, windows one after another); stage=fuse
// is Index.Fuse alone on the chunk hits of one search.
func BenchmarkSearch(b *testing.B) {
	ix, emb := benchSciFactIndex(b, Config{Windows: chunk.Sizes(100, 200, 500)})
	vecs := benchQueryVectors(b, emb, benchQueries)
	opts := SearchOptions{K: 10, ChannelK: 100}
	ctx := context.Background()
	qps := func(b *testing.B) {
		b.ReportMetric(float64(benchQueries)*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
	}
	b.Run("stage=search+fuse", func(b *testing.B) {
		b.ReportAllocs()
		var fuseTime time.Duration
		for b.Loop() {
			ch, err := ix.SearchVectors(ctx, vecs, opts.ChannelK)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if _, err := ix.Fuse(ch, opts); err != nil {
				b.Fatal(err)
			}
			fuseTime += time.Since(t0)
		}
		qps(b)
		b.ReportMetric(100*fuseTime.Seconds()/b.Elapsed().Seconds(), "fuse-%")
	})
	b.Run("stage=faiss", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, w := range ix.shards[0].windows() {
				if _, _, err := w.index.Search(vecs, int(min(int64(opts.ChannelK+channel.TieMargin), w.index.Ntotal()))); err != nil {
					b.Fatal(err)
				}
			}
		}
		qps(b)
	})
	ch, err := ix.SearchVectors(ctx, vecs, opts.ChannelK)
	if err != nil {
		b.Fatal(err)
	}
	for _, rule := range benchRules(b, ix) {
		b.Run("stage=fuse/rule="+rule.name, func(b *testing.B) {
			o := opts
			o.Fusion = rule.f
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ix.Fuse(ch, o); err != nil {
					b.Fatal(err)
				}
			}
			qps(b)
		})
	}
}

// benchRule is a fusion rule a benchmark times, with its name there.
type benchRule struct {
	name string
	f    fusion.Fusion
}

// benchRules are the fusion rules BenchmarkSearch times: plain RRF, the
// label-free rules, and a learned linear rule with and without a router (its
// coefficients arbitrary: the cost does not depend on them).
func benchRules(tb testing.TB, ix *Index) []benchRule {
	var out []benchRule
	for _, s := range []string{"rrf", "combmnz:norm=minmax", "combsum:norm=zscore,adapt=entropy:0.3",
		"linear:score=100:0.25/500:1,rank=100:1/200:0.25,votes=100:1/200:0.25"} {
		f, err := fusion.Parse(s)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, benchRule{strings.SplitN(s, ":", 2)[0], f})
	}
	lin := out[len(out)-1].f
	names := []string{"w100", "w200", "w500"}
	in := benchDims + len(names)*fuse.NumFeatures
	m := &router.Model{Channels: names, Inputs: in, Mean: make([]float64, in), Std: make([]float64, in), W: make([]float64, (in+1)*len(names))}
	for i := range m.Std {
		m.Std[i] = 1
	}
	for i := range m.W {
		m.W[i] = float64(i%7-3) / 100
	}
	lin.Router = m
	out[1].name, out[2].name = "combmnz", "combsum-adapt"
	return append(out, benchRule{"linear+router", lin})
}

// BenchmarkSearchHybrid searches an in-memory SciFact index of dense and
// lexical channels (windows 64, 128, 254 and full, 384-dim hash test
// embedder, BM25 over every window and whole documents) with SciFact's 1,109
// queries three times over, through Index.SearchBatches (embedding, FAISS and
// BM25), and fuses every batch with each rule over all channels: fuse-% is
// the share of Index.Fuse in search + fuse (docs/performance.md). The fusion
// is timed without the matched terms of the evidence (SkipTerms, as msrag
// search --format trec); rule=default+terms adds them to the default's.
func BenchmarkSearchHybrid(b *testing.B) {
	ix, _ := benchSciFactIndex(b, Config{Windows: append(chunk.Sizes(64, 128, 254), chunk.Full), Channels: withLexical(&LexicalConfig{})})
	base := benchQueryTexts(b)
	texts := append(append(slices.Clone(base), base...), base...)
	rules := hybridBenchRules(b)
	rules = append(rules, benchRule{"default+terms", rules[1].f})
	for _, rule := range rules {
		b.Run("rule="+rule.name, func(b *testing.B) {
			opts := SearchOptions{K: 10, ChannelK: 100, Fusion: rule.f, SkipTerms: rule.name != "default+terms"}
			var fuseTime time.Duration
			for b.Loop() {
				_, err := ix.SearchBatches(context.Background(), texts, BatchOptions{ChannelK: opts.ChannelK}, func(_ int, ch *ChunkHits) error {
					t0 := time.Now()
					_, err := ix.Fuse(ch, opts)
					fuseTime += time.Since(t0)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(100*fuseTime.Seconds()/b.Elapsed().Seconds(), "fuse-%")
		})
	}
}

// hybridBenchRules are the rules over every channel BenchmarkSearchHybrid
// times: RRF, the default hybrid (CombSUM of z-scores) and the one before
// it (RRF with a kind's weight and per-query kind weights), the default with
// per-query kind weights and with the batch's consensus, and the built-in
// transferred fusion model
// (its linear rule with its router of kind features, read from
// tune/builtin).
func hybridBenchRules(tb testing.TB) []benchRule {
	var out []benchRule
	add := func(name string, f fusion.Fusion) { out = append(out, benchRule{name, f}) }
	const before = "rrf:windows=all,weights=lexical:1.5,adapt=kind-top:1"
	for _, s := range []string{"rrf:windows=all", fusion.DefaultHybrid, before,
		fusion.DefaultHybrid + ",adapt=kind-peak:1", fusion.DefaultHybrid + ",adapt=consensus:1"} {
		f, err := fusion.Parse(s)
		if err != nil {
			tb.Fatal(err)
		}
		add(strings.ReplaceAll(s, ",", ";"), f)
	}
	files, _ := filepath.Glob(filepath.Join("tune", "builtin", "transfer-*.json"))
	if len(files) == 0 {
		tb.Fatal("no built-in fusion model under tune/builtin")
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		Rule   string        `json:"rule"`
		Router *router.Model `json:"router"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatal(err)
	}
	f, err := fusion.Parse(m.Rule)
	if err != nil {
		tb.Fatal(err)
	}
	f.Router = m.Router
	add("transfer", f)
	return out
}
