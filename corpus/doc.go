// Package corpus reads retrieval data sets: documents, queries and relevance
// judgements, in the layouts of BEIR and of the MTEB datasets.
//
// # Documents
//
// [Open] returns a [Reader] that streams a corpus as batches of [Doc]
// (id, title, text) with memory bounded by one batch, whatever the size of
// the corpus. It reads
//
//   - Parquet files, row group by row group, through arrow-go's pqarrow
//     record readers (only the id, title and text columns are decoded), and
//     directories holding .parquet files at their top level, read as one
//     corpus in file name order (the hub's "corpus/corpus-00000-of-00002.parquet"
//     shards);
//   - Arrow IPC files and streams, record batch by record batch;
//   - JSONL, one JSON object per line, optionally gzip-compressed (BEIR's
//     corpus.jsonl[.gz]); lines may be of any length (a 100 MB document is
//     one 100 MB line; memory is bounded by the longest line, not by a
//     scanner's limit); only the id, title and text keys are decoded, other
//     keys (BEIR's "metadata") are skipped unparsed; an integer id is taken
//     as its decimal text;
//   - a directory of .txt and .md files, one document per file, its id the
//     path relative to the directory.
//
// The format comes from the file's magic bytes, then its extension, or from
// [Options.Format]. Column (or JSON key) names default to "_id", "title" and
// "text", as in the datasets of MTEB; [Options] renames them.
//
// What a Reader does with imperfect records, counted in [Stats]:
//
//   - a null, empty or blank text: the record is skipped;
//   - invalid UTF-8 in the id, title or text: replaced with U+FFFD;
//   - a repeated id: an error naming both places, or, with
//     [Options.DedupeIDs], the later record is skipped;
//   - a missing or empty id, a malformed line: an error;
//   - an id holding white space or a control character (a tab, newline,
//     CR, NUL, space, ...), which would split or shift a TREC line: an
//     error wrapping [ErrBadID] (see [CheckID]);
//   - no document at all: an error wrapping [ErrEmpty].
//
// Errors name the file and the place in it: "line 12" for text formats
// (1-based), "row group 1 row 7 (row 1031)" for Parquet and "batch 2 row 5"
// for Arrow (0-based), with the id when known; see [RecordError]. They wrap
// the sentinels [ErrFormat], [ErrColumn], [ErrRecord], [ErrDuplicateID], [ErrBadID],
// [ErrEmpty], [ErrOption] and [ErrClosed]. Column problems are found from
// the schema before any row is read.
//
// Detecting repeated ids keeps a set of all ids seen: memory grows with the
// number of documents (tens of bytes each), not with their text.
//
// The text to embed for a document is [Doc.Full]: title + " " + text when
// there is a title, as BEIR and MTEB build it.
//
// # Units and shards
//
// Every input is a sequence of units: row groups (Parquet, numbered across
// the files of a directory), record batches (Arrow), files (directory) or blocks of [Options.BlockLines] lines (JSONL).
// [Options.Shard] {I, N} makes a Reader return only the units u with
// u mod N == I, so N processes can each build part of an index from the same
// file, deterministically and without coordination. Parquet and Arrow files
// skip the other units without decoding them; JSONL still scans their lines.
// [CountUnits] says how many units an input has, to choose N.
//
// # Queries, judgements and data sets
//
// [ReadQueries] loads a query file (Parquet, Arrow, JSONL, TSV or one query
// per line) into memory; there an empty line or text is an error. [ReadQrels]
// loads judgements from TSV ("query-id corpus-id score", header optional) or
// Parquet as plain [Qrel] triples; metrics over them live elsewhere.
// [OpenDataset] finds the three parts of a BEIR directory (corpus.jsonl.gz,
// queries.jsonl.gz, qrels/<split>.tsv) or of an MTEB dataset in the hub's
// Parquet layout (corpus/*.parquet, queries/*.parquet,
// qrels/<split>-00000-of-00001.parquet).
//
// # Arrow memory
//
// Arrow buffers come from [Options.Allocator]. Documents own their strings
// (copied out of the buffers), and every record is released before the next
// is read or on Close, so a checked allocator ends at zero.
package corpus
