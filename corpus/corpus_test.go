package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/msrag/msrag/corpus"
)

var threeDocs = []corpus.Doc{
	{ID: "d1", Title: "First", Text: "alpha beta"},
	{ID: "d2", Title: "", Text: "gamma"},
	{ID: "d3", Title: "Third", Text: "délta ε"},
}

// format writes rs in one format under dir and returns the path.
type format struct {
	name  string
	write func(t testing.TB, dir string, rs []row) string
}

var formats = []format{
	{"parquet", func(t testing.TB, dir string, rs []row) string {
		p := filepath.Join(dir, "c.parquet")
		writeParquet(t, p, beir, 2, rs)
		return p
	}},
	{"arrow file", func(t testing.TB, dir string, rs []row) string {
		p := filepath.Join(dir, "c.arrow")
		writeIPC(t, p, false, beir, 2, rs)
		return p
	}},
	{"arrow stream", func(t testing.TB, dir string, rs []row) string {
		p := filepath.Join(dir, "c.arrows")
		writeIPC(t, p, true, beir, 2, rs)
		return p
	}},
	{"jsonl", func(t testing.TB, dir string, rs []row) string {
		p := filepath.Join(dir, "c.jsonl")
		writeJSONL(t, p, rs)
		return p
	}},
	{"jsonl.gz", func(t testing.TB, dir string, rs []row) string {
		p := filepath.Join(dir, "corpus.jsonl.gz")
		writeJSONL(t, p, rs)
		return p
	}},
}

func checked(t *testing.T) (*memory.CheckedAllocator, corpus.Options) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	return mem, corpus.Options{Allocator: mem}
}

func TestOpenFormats(t *testing.T) {
	for _, f := range formats {
		for _, batch := range []int{1, 2, 1024} {
			t.Run(fmt.Sprintf("%s/batch=%d", f.name, batch), func(t *testing.T) {
				mem, opts := checked(t)
				defer mem.AssertSize(t, 0)
				opts.BatchSize = batch
				path := f.write(t, t.TempDir(), rows(threeDocs...))
				docs, st, err := readAll(t, path, opts)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(docs, threeDocs) {
					t.Errorf("docs = %+v, want %+v", docs, threeDocs)
				}
				if st.Docs != 3 || st.Rows != 3 || st.Empty != 0 || st.Bytes != int64(len("Firstalpha betagammaThirddélta ε")) {
					t.Errorf("stats = %+v", st)
				}
			})
		}
	}
}

func TestDocFull(t *testing.T) {
	tests := []struct {
		doc  corpus.Doc
		want string
	}{
		{corpus.Doc{ID: "a", Title: "T", Text: "body"}, "T body"},
		{corpus.Doc{ID: "a", Text: "body"}, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.doc.Full(); got != tt.want {
				t.Errorf("Full() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEmptyAndInvalidTexts(t *testing.T) {
	rs := []row{
		{s("a"), s("t"), s("keep me")},
		{s("b"), s("t"), nil},                     // null text
		{s("c"), nil, s("")},                      // empty text
		{s("d"), s("t"), s("  \n ")},              // blank text
		{s("e"), s("ti\xfftle"), s("x\xff\xfey")}, // invalid UTF-8
	}
	want := []corpus.Doc{{ID: "a", Title: "t", Text: "keep me"}, {ID: "e", Title: "ti\uFFFDtle", Text: "x\uFFFDy"}}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			mem, opts := checked(t)
			defer mem.AssertSize(t, 0)
			docs, st, err := readAll(t, f.write(t, t.TempDir(), rs), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(docs, want) {
				t.Errorf("docs = %q, want %q", docs, want)
			}
			if st.Empty != 3 || st.InvalidUTF8 != 1 || st.Docs != 2 || st.Rows != 5 {
				t.Errorf("stats = %+v, want 3 empty, 1 invalid, 2 docs, 5 rows", st)
			}
		})
	}
}

func TestDuplicateIDs(t *testing.T) {
	rs := rows(threeDocs[0], threeDocs[1], threeDocs[2], corpus.Doc{ID: "d2", Text: "again"})
	wantWhere := map[string]string{
		"parquet":      "row group 1 row 1 (row 3) (id \"d2\"): id already used at row group 0 row 1 (row 1)",
		"arrow file":   "batch 1 row 1 (id \"d2\"): id already used at batch 0 row 1",
		"arrow stream": "batch 1 row 1 (id \"d2\"): id already used at batch 0 row 1",
		"jsonl":        "line 4 (id \"d2\"): id already used at line 2",
		"jsonl.gz":     "line 4 (id \"d2\"): id already used at line 2",
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			mem, opts := checked(t)
			defer mem.AssertSize(t, 0)
			path := f.write(t, t.TempDir(), rs)
			_, _, err := readAll(t, path, opts)
			if !errors.Is(err, corpus.ErrDuplicateID) {
				t.Fatalf("err = %v, want ErrDuplicateID", err)
			}
			want := "corpus: " + path + " " + wantWhere[f.name]
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n %q\ndoes not start with\n %q", err, want)
			}
			var re *corpus.RecordError
			if !errors.As(err, &re) || re.ID != "d2" || re.File != path {
				t.Errorf("RecordError = %+v", re)
			}

			opts.DedupeIDs = true
			docs, st, err := readAll(t, path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(docs, threeDocs) || st.Duplicates != 1 {
				t.Errorf("with DedupeIDs: docs %+v, %d duplicates", docs, st.Duplicates)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	rs := rows(threeDocs...)
	tests := []struct {
		name    string
		tab     table
		opts    corpus.Options
		wantErr string // "" means success
		want    []corpus.Doc
	}{
		{"no id column", table{names: [3]string{"", "title", "text"}}, corpus.Options{}, `no column "_id" (columns: "title", "text")`, nil},
		{"no text column", table{names: [3]string{"_id", "title", "body"}}, corpus.Options{}, `no column "text" (columns: "_id", "title", "body")`, nil},
		{"text is int64", table{names: beir.names, types: [3]arrow.DataType{nil, nil, arrow.PrimitiveTypes.Int64}}, corpus.Options{}, `column "text" has type int64, want a string`, nil},
		{"id is float64", table{names: beir.names, types: [3]arrow.DataType{arrow.PrimitiveTypes.Float64, nil, nil}}, corpus.Options{}, `column "_id" has type float64, want a string or an integer`, nil},
		{"title is int64", table{names: beir.names, types: [3]arrow.DataType{nil, arrow.PrimitiveTypes.Int64, nil}}, corpus.Options{}, `column "title" has type int64, want a string`, nil},
		{"no title column", table{names: [3]string{"_id", "", "text"}}, corpus.Options{}, "",
			[]corpus.Doc{{ID: "d1", Text: "alpha beta"}, {ID: "d2", Text: "gamma"}, {ID: "d3", Text: "délta ε"}}},
		{"renamed columns", table{names: [3]string{"doc_id", "heading", "body"}}, corpus.Options{IDColumn: "doc_id", TitleColumn: "heading", TextColumn: "body"}, "", threeDocs},
		{"integer ids", table{names: beir.names, types: [3]arrow.DataType{arrow.PrimitiveTypes.Int64, nil, nil}}, corpus.Options{}, "",
			// the test writer stores len(id) as the integer id: all 2, so dedupe
			[]corpus.Doc{{ID: "2", Title: "First", Text: "alpha beta"}}},
	}
	for _, tt := range tests {
		for _, kind := range []string{"parquet", "arrow"} {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				mem, opts := checked(t)
				defer mem.AssertSize(t, 0)
				o := tt.opts
				o.Allocator = opts.Allocator
				o.DedupeIDs = true
				path := filepath.Join(t.TempDir(), "c."+kind)
				if kind == "parquet" {
					writeParquet(t, path, tt.tab, 2, rs)
				} else {
					writeIPC(t, path, false, tt.tab, 2, rs)
				}
				docs, _, err := readAll(t, path, o)
				if tt.wantErr == "" {
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(docs, tt.want) {
						t.Errorf("docs = %+v, want %+v", docs, tt.want)
					}
					return
				}
				if !errors.Is(err, corpus.ErrColumn) {
					t.Fatalf("err = %v, want ErrColumn", err)
				}
				if want := "corpus: " + path + ": " + tt.wantErr; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error\n %q\ndoes not start with\n %q", err, want)
				}
			})
		}
	}
}

func TestBadRecords(t *testing.T) {
	tests := []struct {
		name, data, want string
		sentinel         error
	}{
		{"not json", `{"_id":"a","text":"x"}` + "\n{oops\n", `c.jsonl line 2: not a JSON object`, corpus.ErrRecord},
		{"missing id", `{"text":"x"}` + "\n", `c.jsonl line 1: missing or empty id`, corpus.ErrRecord},
		{"text is a number", `{"_id":"a","text":3}` + "\n", `c.jsonl line 1 (id "a"): key "text": want a string, got 3`, corpus.ErrRecord},
		{"empty line", `{"_id":"a","text":"x"}` + "\n\n" + `{"_id":"b","text":"y"}` + "\n", `c.jsonl line 2: empty line`, corpus.ErrRecord},
		{"only empty texts", `{"_id":"a","text":""}` + "\n" + `{"_id":"b","text":null}` + "\n", `c.jsonl: no documents (2 records read, 2 with an empty text, 0 duplicates)`, corpus.ErrEmpty},
		{"empty file", "", `c.jsonl: no documents (0 records read`, corpus.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.jsonl")
			writeFile(t, path, []byte(tt.data))
			_, _, err := readAll(t, path, corpus.Options{})
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want %v", err, tt.sentinel)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "corpus: ") {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestNullID(t *testing.T) {
	mem, opts := checked(t)
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "c.parquet")
	writeParquet(t, path, beir, 10, []row{{s("a"), nil, s("x")}, {nil, nil, s("y")}})
	_, _, err := readAll(t, path, opts)
	if !errors.Is(err, corpus.ErrRecord) || !strings.Contains(err.Error(), "c.parquet row group 0 row 1 (row 1): null id") {
		t.Errorf("err = %v", err)
	}
}

func TestDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, beir, 2, rows(threeDocs...))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	goodArrow := filepath.Join(dir, "good.arrow")
	writeIPC(t, goodArrow, false, beir, 2, rows(threeDocs...))
	arrowData, err := os.ReadFile(goodArrow)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"truncated parquet", "t.parquet", data[:len(data)/2], "not a readable Parquet file"},
		{"parquet without footer", "f.parquet", data[:len(data)-4], "not a readable Parquet file"},
		{"csv named parquet", "x.parquet", []byte("_id,text\na,b\n"), "not a Parquet file (no PAR1 magic)"},
		{"truncated arrow", "t.arrow", arrowData[:len(arrowData)/2], "not a readable Arrow IPC file"},
		{"unknown", "x.bin", []byte("hello"), "cannot tell the format"},
		{"truncated gzip", "t.jsonl.gz", truncatedGzip(t), "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, opts := checked(t)
			defer mem.AssertSize(t, 0)
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := readAll(t, path, opts)
			if !errors.Is(err, corpus.ErrFormat) {
				t.Fatalf("err = %v, want ErrFormat", err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %s and %q", err, path, tt.want)
			}
		})
	}
}

func TestShard(t *testing.T) {
	var docs []corpus.Doc
	for i := range 23 {
		docs = append(docs, corpus.Doc{ID: fmt.Sprint("d", i), Text: fmt.Sprint("text ", i)})
	}
	// Units of 5 rows (row groups, batches, line blocks): unit u holds rows
	// 5u .. 5u+4 and goes to shard u mod 3.
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			var path string
			switch f.name {
			case "parquet":
				path = filepath.Join(dir, "c.parquet")
				writeParquet(t, path, beir, 5, rows(docs...))
			case "arrow file", "arrow stream":
				path = filepath.Join(dir, "c.arrow")
				writeIPC(t, path, f.name == "arrow stream", beir, 5, rows(docs...))
			default:
				path = f.write(t, dir, rows(docs...))
			}
			var all []string
			for i := range 3 {
				mem, opts := checked(t)
				opts.Shard = corpus.Shard{I: i, N: 3}
				opts.BlockLines = 5
				opts.BatchSize = 4
				got, st, err := readAll(t, path, opts)
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for r := range docs {
					if (r/5)%3 == i {
						want = append(want, docs[r].ID)
					}
				}
				var ids []string
				for _, d := range got {
					ids = append(ids, d.ID)
				}
				if !reflect.DeepEqual(ids, want) {
					t.Errorf("shard %d: ids %v, want %v", i, ids, want)
				}
				if wantUnits := []int{2, 2, 1}[i]; st.Units != wantUnits {
					t.Errorf("shard %d: %d units, want %d", i, st.Units, wantUnits)
				}
				all = append(all, ids...)
				mem.AssertSize(t, 0)
			}
			if len(all) != len(docs) {
				t.Errorf("shards hold %d documents together, want %d", len(all), len(docs))
			}
		})
	}
}

func TestShardOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	writeJSONL(t, path, rows(threeDocs...))
	for _, sh := range []corpus.Shard{{I: 3, N: 3}, {I: -1, N: 2}, {I: 1, N: 0}, {N: -2}} {
		t.Run(fmt.Sprint(sh), func(t *testing.T) {
			_, err := corpus.Open(path, corpus.Options{Shard: sh})
			if !errors.Is(err, corpus.ErrOption) {
				t.Errorf("err = %v, want ErrOption", err)
			}
		})
	}
}

func TestDirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.txt"), []byte("bee"))
	writeFile(t, filepath.Join(dir, "a", "x.md"), []byte("# ex\nmarkdown"))
	writeFile(t, filepath.Join(dir, "a", "skip.json"), []byte("{}"))
	writeFile(t, filepath.Join(dir, ".hidden", "h.txt"), []byte("hidden"))
	writeFile(t, filepath.Join(dir, "empty.txt"), nil)
	docs, st, err := readAll(t, dir, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []corpus.Doc{{ID: "a/x.md", Text: "# ex\nmarkdown"}, {ID: "b.txt", Text: "bee"}}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("docs = %q, want %q", docs, want)
	}
	if st.Empty != 1 || st.Units != 3 {
		t.Errorf("stats %+v, want 1 empty, 3 units", st)
	}
}

// TestHugeDocument reads one 100 MB document: longer than any line buffer,
// it must come back whole when Options.MaxDocBytes allows it. By default
// (8 MiB) its line is refused once 8 MiB of it are read, naming the line:
// before, it was read, and a build of it took 3 to 7 GB.
func TestHugeDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	const size = 100 << 20
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `{"_id":"small","text":"before"}`+"\n"+`{"_id":"big","title":"Big","text":"`)
	chunk := []byte(strings.Repeat("abcdefg ", 1<<13)) // 64 KiB
	for range size / len(chunk) {
		f.Write(chunk)
	}
	fmt.Fprint(f, `"}`+"\n"+`{"_id":"after","text":"after"}`+"\n")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	def, err := corpus.Open(path, corpus.Options{BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if b, err := def.Next(context.Background()); err != nil || len(b) != 1 || b[0].ID != "small" {
		t.Fatalf("first document: %v, %v", b, err)
	}
	if _, err := def.Next(context.Background()); !errors.Is(err, corpus.ErrRecord) || !strings.Contains(err.Error(), "big.jsonl line 2: more than 8388608 bytes") {
		t.Fatalf("a 100 MB document by default: %v, want it refused", err)
	}
	r, err := corpus.Open(path, corpus.Options{BatchSize: 1, MaxDocBytes: size + 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []corpus.Doc
	for {
		b, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
	}
	if len(got) != 3 || got[1].ID != "big" || len(got[1].Text) != size || got[2].ID != "after" {
		t.Fatalf("got %d docs", len(got))
	}
	if !strings.HasPrefix(got[1].Text, "abcdefg abcdefg") || !strings.HasSuffix(got[1].Text, "abcdefg ") {
		t.Error("big document text mangled")
	}
}

func TestContextCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	writeJSONL(t, path, rows(threeDocs...))
	r, err := corpus.Open(path, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
}

func TestCloseTwice(t *testing.T) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			mem, opts := checked(t)
			defer mem.AssertSize(t, 0)
			r, err := corpus.Open(f.write(t, t.TempDir(), rows(threeDocs...)), opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := r.Next(context.Background()); err == nil || err == io.EOF {
				t.Errorf("Next after Close = %v, want an error", err)
			}
		})
	}
}

func truncatedGzip(t testing.TB) []byte {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, `{"_id":"d%d","text":"text %d"}`+"\n", i, i*7919)
	}
	z := gzipBytes(t, []byte(sb.String()))
	return z[:len(z)/2]
}

func TestCountUnits(t *testing.T) {
	var docs []corpus.Doc
	for i := range 23 {
		docs = append(docs, corpus.Doc{ID: fmt.Sprint("d", i), Text: "t"})
	}
	dir := t.TempDir()
	pq := filepath.Join(dir, "c.parquet")
	writeParquet(t, pq, beir, 5, rows(docs...))
	af := filepath.Join(dir, "c.arrow")
	writeIPC(t, af, false, beir, 10, rows(docs...))
	as := filepath.Join(dir, "c.arrows")
	writeIPC(t, as, true, beir, 4, rows(docs...))
	js := filepath.Join(dir, "c.jsonl.gz")
	writeJSONL(t, js, rows(docs...))
	txt := filepath.Join(dir, "txt")
	writeFile(t, filepath.Join(txt, "a.txt"), []byte("a"))
	writeFile(t, filepath.Join(txt, "b", "c.md"), []byte("c"))
	tests := []struct {
		path  string
		block int
		want  int
	}{
		{pq, 0, 5},  // row groups of 5 rows: 5+5+5+5+3
		{af, 0, 3},  // batches of 10: 10+10+3
		{as, 0, 6},  // batches of 4: 4*5+3
		{js, 0, 1},  // 23 lines, blocks of 10,000
		{js, 10, 3}, // blocks of 10: 10+10+3
		{js, 23, 1}, // exactly one block
		{txt, 0, 2}, // two files
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", filepath.Base(tt.path), tt.block), func(t *testing.T) {
			mem, opts := checked(t)
			defer mem.AssertSize(t, 0)
			opts.BlockLines = tt.block
			got, err := corpus.CountUnits(tt.path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CountUnits = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestMaxDocBytes checks the limit on a document's line at its edge: a line
// of exactly Options.MaxDocBytes bytes (with "\n" or "\r\n" after it) is
// read, one more byte is refused naming the line; the limit may be at most
// 256 MiB.
func TestMaxDocBytes(t *testing.T) {
	dir := t.TempDir()
	line := func(n int) string {
		s := `{"_id":"d","text":"`
		return s + strings.Repeat("x", n-len(s)-2) + `"}`
	}
	for _, tc := range []struct {
		name, body string
		err        bool
	}{
		{"at the limit", line(100) + "\n", false},
		{"at the limit, CRLF", line(100) + "\r\n", false},
		{"at the limit, no end", line(100), false},
		{"one byte over", line(101) + "\n", true},
		{"one byte over, CRLF", line(101) + "\r\n", true},
		{"one byte over, no end", line(101), true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".jsonl")
		os.WriteFile(path, []byte(tc.body), 0o644)
		r, err := corpus.Open(path, corpus.Options{MaxDocBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next(context.Background())
		r.Close()
		if tc.err != (err != nil) || tc.err && (!errors.Is(err, corpus.ErrRecord) || !strings.Contains(err.Error(), "line 1: more than 100 bytes")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := corpus.Open(filepath.Join(dir, "at_the_limit.jsonl"), corpus.Options{MaxDocBytes: 257 << 20}); !errors.Is(err, corpus.ErrOption) {
		t.Errorf("MaxDocBytes of 257 MiB: %v, want ErrOption", err)
	}
}
