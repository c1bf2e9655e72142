// Package lexical is msrag's lexical retriever: BM25 over the chunks of a
// window, next to the window's dense index, in pure Go.
//
// # Moving parts
//
//   - [Analyzer] names the way text becomes terms, recorded in a manifest by
//     name and [Analyzer.Version]: [English] (the default, the zero value)
//     and [None]; [Analyzer.Identity] and [ParseIdentity] are what a
//     manifest records and an opener checks. A [Tokenizer] applies one, reusing its buffers and a cache
//     of the words it has seen; give each goroutine its own. The build
//     analyses each chunk's text span once; a query is analysed once per
//     batch, with the analyzer the index was built with.
//   - [Builder] takes each chunk row of a window's chunk table in order,
//     with its terms, and [Builder.Build] returns the window's [Index]:
//     sorted vocabulary, per-term postings (row deltas and term
//     frequencies as varints), row lengths.
//   - [Index.WriteTo] writes an index through an io.Writer (the index
//     directory's hashing writer) and [Read] reads one from an io.Reader of
//     known size, checking every byte it trusts (format.go describes the
//     file): a damaged file is an error wrapping [ErrCorrupt], never a panic
//     or an allocation beyond a small multiple of its size.
//   - [Index.Search] scores a batch of queries and returns the top K rows of
//     each in [Hits] (K slots per query, -1 after the last match), which
//     [Hits.Fuse] maps through the chunk table to the fuse package's
//     document hits. [Index.Explain] gives the matched terms of a hit, its
//     evidence.
//   - [Stats] carries the collection statistics BM25 needs (documents,
//     total length, document frequencies of the query terms). An index
//     searched alone uses its own; the shards of one collection each search
//     with the sum of all shards' [Index.Stats], and merging their lists by
//     score, then row, gives exactly the ranking of a single index.
//
// # Words
//
// The analyzers find words as bm25s and scikit-learn do with the regular
// expression (?u)\b\w\w+\b over Python's str.lower() of the text, and
// reproduce it exactly, not approximately: \w is Python's (str.isalnum(),
// which counts letters and every character with a numeric value, such as
// "²" and "½", plus "_"), lower-casing is str.lower's full mapping (U+0130
// becomes "i" and a combining dot, which is not a word character, and
// U+03A3 becomes the final sigma at the end of a word, by Unicode's
// Final_Sigma rule). The character tables are generated from Python 3.11
// (Unicode 14.0.0) by scripts/gen_lexical_unicode.py, so the analyzer does
// not drift with Go's own Unicode version. So "state-of-the-art" is four
// words, "don't" is "don" (and "t", too short), "x_y" one word. Bytes that
// are not UTF-8 separate words. Words longer than [MaxTermBytes] are dropped.
//
// [English] then drops the 33 stop words of Lucene's English analyzer
// (stopwords_en.txt, the list bm25s uses too) and stems with Snowball 2.0's
// English stemmer (github.com/kljensen/snowball v0.10.0, which PyStemmer
// 2.0.1 matches). [None] keeps the lower-case words as they are: no stop
// words, no stemming, for text in other languages.
//
// # Scores
//
// [BM25] documents the formula: Lucene's (and bm25s's "lucene"), with
// exact lengths, k1 = 0.9 and b = 0.4 by default. Scores are computed in
// float64, in the query's term order, and rounded to float32 for ranking and
// output; rows of equal float32 score rank by increasing row. A row that
// holds no query term is not a hit; a query with no term in the index gets
// no hits and no error.
//
// # Search
//
// Search is term at a time: one posting list after another adds into an
// accumulator of one float64 per row, kept by a [Searcher] across queries
// and reset through the list of rows touched; a heap then keeps the best K.
// The per-row length norms depend on the average length, and so on the
// statistics: the index caches them for the last parameters used.
package lexical
