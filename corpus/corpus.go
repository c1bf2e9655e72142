package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Errors wrapped by everything this package returns, for use with [errors.Is].
var (
	// ErrFormat reports a file that is not in the format it claims or that
	// is truncated or unreadable.
	ErrFormat = errors.New("unrecognised or damaged file")
	// ErrColumn reports a missing or mistyped id, title or text column.
	ErrColumn = errors.New("bad column")
	// ErrRecord reports one bad record: a missing id, malformed JSON, an
	// empty line where a record was expected.
	ErrRecord = errors.New("bad record")
	// ErrDuplicateID reports a document id seen twice.
	ErrDuplicateID = errors.New("duplicate id")
	// ErrEmpty reports an input that holds no usable document, query or
	// judgement.
	ErrEmpty = errors.New("no records")
	// ErrOption reports invalid [Options].
	ErrOption = errors.New("invalid option")
	// ErrClosed is returned by Next after Close.
	ErrClosed = errors.New("reader closed")
)

// Doc is one document of a corpus.
type Doc struct {
	ID    string
	Title string // may be empty
	Text  string // never empty in what a Reader returns
}

// Full returns the text to embed for the document: title + " " + text when the
// document has a title, as BEIR and MTEB do, and the text alone otherwise.
func (d Doc) Full() string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + " " + d.Text
}

// Format names an input format. The zero value asks [Open] to detect it.
type Format string

// Formats that [Open] reads.
const (
	FormatAuto        Format = ""
	FormatParquet     Format = "parquet"
	FormatArrowFile   Format = "arrow"  // Arrow IPC file ("ARROW1" magic), also .feather v2
	FormatArrowStream Format = "arrows" // Arrow IPC stream
	FormatJSONL       Format = "jsonl"  // one JSON object per line, optionally gzip-compressed
	FormatDir         Format = "dir"    // a directory of .txt and .md files
	FormatTSV         Format = "tsv"    // queries only: id<TAB>text
	FormatLines       Format = "lines"  // queries only: one query per line
)

// Shard selects part of a corpus for one of N parallel builds. Unit u of the
// input (see [Options]) belongs to shard u mod N. The zero value, like N = 1,
// selects everything.
type Shard struct {
	I, N int
}

func (s Shard) active() bool { return s.N > 1 }

func (s Shard) has(unit int) bool { return !s.active() || unit%s.N == s.I }

// Options configures [Open]. The zero value reads the BEIR/MTEB column names
// in batches of 1,024 documents.
type Options struct {
	// Format forces a format; by default it is detected from the file's
	// magic bytes, then its extension.
	Format Format
	// IDColumn, TitleColumn and TextColumn name the columns (Parquet,
	// Arrow) or JSON keys (JSONL). Defaults "_id", "title", "text". A
	// missing title column means documents without titles; a missing id or
	// text column is an error.
	IDColumn, TitleColumn, TextColumn string
	// BatchSize is the most documents one Next returns. Default 1,024.
	BatchSize int
	// DedupeIDs keeps the first document of each id and skips (and counts)
	// later ones. Without it a repeated id is an error naming both rows.
	DedupeIDs bool
	// Shard reads only the units u with u mod Shard.N == Shard.I. Units
	// are row groups for Parquet (numbered across the files of a
	// directory), record batches for Arrow, files for a
	// directory and blocks of BlockLines lines for JSONL.
	Shard Shard
	// BlockLines is the number of lines of one JSONL unit. Default 10,000.
	BlockLines int
	// MaxDocBytes is the most bytes one line of a JSONL corpus (one
	// document) may hold: a longer line is an error when it is read,
	// before its document is tokenized. Default DefaultMaxDocBytes; at
	// most 256 MiB.
	MaxDocBytes int
	// Allocator allocates the Arrow buffers of Parquet and Arrow inputs.
	// Nil means memory.DefaultAllocator. Documents never point into these
	// buffers: their strings are copied out before a record is released.
	Allocator memory.Allocator
}

const (
	defaultBatch      = 1024
	defaultBlockLines = 10000
)

// DefaultMaxDocBytes is Options.MaxDocBytes's default, 8 MiB: a build's
// memory peaks at some 25 times the largest document's size (its tokens,
// windows and terms), so a document of 8 MiB takes a few hundred MB and
// one of 100 MB took 3 GB (docs/reliability.md).
const DefaultMaxDocBytes = 8 << 20

func (o Options) withDefaults() (Options, error) {
	if o.IDColumn == "" {
		o.IDColumn = "_id"
	}
	if o.TitleColumn == "" {
		o.TitleColumn = "title"
	}
	if o.TextColumn == "" {
		o.TextColumn = "text"
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	if o.BatchSize == 0 {
		o.BatchSize = defaultBatch
	}
	if o.BlockLines == 0 {
		o.BlockLines = defaultBlockLines
	}
	if o.MaxDocBytes == 0 {
		o.MaxDocBytes = min(DefaultMaxDocBytes, maxLineBytes)
	}
	switch {
	case o.BatchSize < 0:
		return o, fmt.Errorf("corpus: batch size %d is negative: %w", o.BatchSize, ErrOption)
	case o.BlockLines < 0:
		return o, fmt.Errorf("corpus: block of %d lines is negative: %w", o.BlockLines, ErrOption)
	case o.MaxDocBytes < 0 || o.MaxDocBytes > maxLineBytes:
		return o, fmt.Errorf("corpus: a document of at most %d bytes: want 1 to %d: %w", o.MaxDocBytes, maxLineBytes, ErrOption)
	case o.Shard.N < 0 || (o.Shard.N > 0 && (o.Shard.I < 0 || o.Shard.I >= o.Shard.N)) || (o.Shard.N == 0 && o.Shard.I != 0):
		return o, fmt.Errorf("corpus: shard %d of %d: want 0 <= I < N: %w", o.Shard.I, o.Shard.N, ErrOption)
	}
	return o, nil
}

// Stats counts what a Reader has read so far.
type Stats struct {
	Rows        int64 // records read in the selected units, including skipped ones
	Docs        int64 // documents returned
	Bytes       int64 // bytes of title and text returned
	Empty       int64 // records skipped for a null or empty text
	Duplicates  int64 // records skipped for a repeated id (Options.DedupeIDs)
	InvalidUTF8 int64 // records whose invalid UTF-8 was replaced with U+FFFD
	Units       int   // units read (row groups, batches, files, line blocks)
	// InputBytes are the bytes of the input file read so far, as stored
	// (compressed for a gzip'd file), and InputSize the file's size: a
	// fraction of the input read at once, for a line-based file (JSONL);
	// 0 for other formats.
	InputBytes, InputSize int64
}

// Reader streams the documents of one corpus in batches.
type Reader interface {
	// Next returns the next batch of documents, or io.EOF after the last
	// one. A batch is never empty and the caller owns it: a
	// pipeline may hand it to another goroutine. Reaching the end of an input with no
	// document at all returns an error wrapping ErrEmpty instead of
	// io.EOF, unless a Shard is set (a shard may be legitimately empty).
	Next(ctx context.Context) ([]Doc, error)
	// Close releases the file and buffers. It is safe to call twice.
	Close() error
	// Stats returns the counts so far.
	Stats() Stats
}

// RecordError locates a bad record: the file, the position in it and, when
// known, the document id.
type RecordError struct {
	// Input says what File is when it is not a corpus file: "queries file".
	Input string
	File  string // path of the input
	Where string // "line 12", "row group 1 row 7 (row 1031)", "batch 2 row 5"
	ID    string // document or query id, if known
	Err   error
}

func (e *RecordError) Error() string {
	var b strings.Builder
	b.WriteString("corpus: ")
	if e.Input != "" {
		b.WriteString(e.Input + " ")
	}
	b.WriteString(e.File)
	if e.Where != "" {
		b.WriteString(" ")
		b.WriteString(e.Where)
	}
	if e.ID != "" {
		fmt.Fprintf(&b, " (id %q)", e.ID)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *RecordError) Unwrap() error { return e.Err }

// Open opens a corpus: a Parquet file, an Arrow IPC file or stream, a JSONL
// file (gzip-compressed or not), a directory of .txt/.md files, or a
// directory with .parquet files at its top level, read as one corpus in
// file name order (the shards of a dataset on the Hugging Face hub).
func Open(path string, opts Options) (Reader, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f, err := detect(path, opts.Format)
	if err != nil {
		return nil, err
	}
	if fm := formatOf(f); fm != nil && fm.open != nil {
		return fm.open(path, f, opts)
	}
	return nil, fmt.Errorf("corpus: %s: format %q cannot hold a corpus: %w", path, f, ErrFormat)
}

var magicGzip = []byte{0x1f, 0x8b}

// detect returns the format of path: forced, from its magic bytes, or from
// its extension, in that order (the formats say which bytes and extensions).
func detect(path string, forced Format) (Format, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	if st.IsDir() {
		return detectDir(path, forced)
	}
	if forced != FormatAuto {
		return forced, nil
	}
	head := make([]byte, 8)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	name := strings.TrimSuffix(strings.ToLower(filepath.Base(path)), ".gz")
	return detectContent(path, name, head)
}

func hasPrefix(b, p []byte) bool { return len(b) >= len(p) && string(b[:len(p)]) == string(p) }

// pos is the position of a record: its unit and its row (or line) in it.
type pos struct {
	unit int
	row  int64
}

// builder turns raw records into documents: it skips empty texts, repairs
// UTF-8, checks ids and fills the batch. Every format shares it.
type builder struct {
	file   string
	opts   Options
	where  func(pos) string
	stats  Stats
	seen   map[string]pos
	out    []Doc
	strict bool   // empty texts are errors (queries), not skipped
	input  string // RecordError.Input: "queries file", or "" for a corpus
}

func newBuilder(file string, opts Options, where func(pos) string) *builder {
	return &builder{file: file, opts: opts, where: where, seen: make(map[string]pos), out: make([]Doc, 0, opts.BatchSize)}
}

func (b *builder) errAt(p pos, id string, err error) error {
	return &RecordError{Input: b.input, File: b.file, Where: b.where(p), ID: id, Err: err}
}

// add takes one record. id, title and text must be owned by the caller (not
// views of buffers that will be freed).
func (b *builder) add(p pos, id, title, text string) error {
	b.stats.Rows++
	if id == "" {
		return b.errAt(p, "", fmt.Errorf("missing or empty id (a record names its id %q and its text %q, as BEIR's {\"_id\": ..., \"text\": ...}): %w", b.opts.IDColumn, b.opts.TextColumn, ErrRecord))
	}
	if strings.TrimSpace(text) == "" {
		if b.strict {
			return b.errAt(p, id, fmt.Errorf("empty text: %w", ErrRecord))
		}
		b.stats.Empty++
		return nil
	}
	if !utf8.ValidString(id) || !utf8.ValidString(title) || !utf8.ValidString(text) {
		id = strings.ToValidUTF8(id, "\uFFFD")
		title = strings.ToValidUTF8(title, "\uFFFD")
		text = strings.ToValidUTF8(text, "\uFFFD")
		b.stats.InvalidUTF8++
	}
	if err := CheckID(id); err != nil {
		return b.errAt(p, "", err)
	}
	if first, dup := b.seen[id]; dup {
		if b.opts.DedupeIDs {
			b.stats.Duplicates++
			return nil
		}
		return b.errAt(p, id, fmt.Errorf("id already used at %s: %w", b.where(first), ErrDuplicateID))
	}
	b.seen[id] = p
	b.out = append(b.out, Doc{ID: id, Title: title, Text: text})
	b.stats.Docs++
	b.stats.Bytes += int64(len(title) + len(text))
	return nil
}

func (b *builder) full() bool { return len(b.out) >= b.opts.BatchSize }

// take returns the batch built so far, which the caller then owns, and
// starts a new one.
func (b *builder) take() []Doc {
	out := b.out
	b.out = make([]Doc, 0, b.opts.BatchSize)
	return out
}

// eof is what a reader returns at the end: io.EOF, or ErrEmpty when nothing
// at all was found.
func (b *builder) eof() error {
	if b.stats.Docs == 0 && !b.opts.Shard.active() {
		return fmt.Errorf("corpus: %s: no documents (%d records read, %d with an empty text, %d duplicates): %w",
			b.file, b.stats.Rows, b.stats.Empty, b.stats.Duplicates, ErrEmpty)
	}
	return io.EOF
}
