package hub_test

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// commit is the commit a fake hub serves unless told otherwise.
const commit = "0123456789abcdef0123456789abcdef01234567"

// fakeHub serves one repository the way a Hugging Face hub does: the tree
// and revision APIs and the resolve URLs, at commit (or "main"). Tests change
// its fields before the first request.
type fakeHub struct {
	t        testing.TB
	srv      *httptest.Server
	kind     string            // "datasets/" or "" (models)
	repo     string            // ORG/NAME
	commit   string            // the commit served; "main" resolves to it
	files    map[string][]byte // the repository's files
	lfs      func(path string) bool
	serve    map[string][]byte // bytes served instead of files[path]
	gone     map[string]bool   // listed, but resolve answers 404
	token    string            // bearer token required; "" for none
	pageSize int               // entries per listing page; 0 for one page
	// resolve, when set, serves the resolve URL of path instead (it returns
	// false to fall back to the default).
	resolve func(w http.ResponseWriter, r *http.Request, path string) bool

	mu       sync.Mutex
	requests []string
}

// newFakeHub starts a fake hub serving files as the dataset repository repo.
func newFakeHub(t testing.TB, repo string, files map[string][]byte) *fakeHub {
	t.Helper()
	h := &fakeHub{t: t, kind: "datasets/", repo: repo, commit: commit, files: files, serve: map[string][]byte{}, gone: map[string]bool{},
		lfs: func(p string) bool { return strings.HasSuffix(p, ".parquet") || strings.HasPrefix(p, "corpus") }}
	h.srv = httptest.NewServer(h)
	t.Cleanup(h.srv.Close)
	return h
}

// URL returns the endpoint.
func (h *fakeHub) URL() string { return h.srv.URL }

// Requests returns the paths asked for so far.
func (h *fakeHub) Requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.requests)
}

// ServeHTTP records the request, checks the token and routes it.
func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.URL.Path)
	h.mu.Unlock()
	if h.token != "" && r.Header.Get("Authorization") != "Bearer "+h.token {
		w.Header().Set("X-Error-Message", "Invalid credentials in Authorization header")
		http.Error(w, `{"error":"Invalid credentials"}`, http.StatusUnauthorized)
		return
	}
	api := "/api/" + h.kind + h.repo + "/"
	if h.kind == "" {
		api = "/api/models/" + h.repo + "/"
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, api+"revision/"):
		h.revision(w, strings.TrimPrefix(p, api+"revision/"))
	case strings.HasPrefix(p, api+"tree/"):
		h.tree(w, r, strings.TrimPrefix(p, api+"tree/"))
	case strings.HasPrefix(p, "/"+h.kind+h.repo+"/resolve/"):
		rev, file, _ := strings.Cut(strings.TrimPrefix(p, "/"+h.kind+h.repo+"/resolve/"), "/")
		h.file(w, r, rev, file)
	default:
		http.NotFound(w, r)
	}
}

// known reports a revision the fake hub serves.
func (h *fakeHub) known(rev string) bool { return rev == h.commit || rev == "main" }

// revision answers the revision API with the commit.
func (h *fakeHub) revision(w http.ResponseWriter, rev string) {
	if !h.known(rev) {
		http.Error(w, `{"error":"Invalid rev id"}`, http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"id": h.repo, "sha": h.commit, "siblings": []any{}})
}

// tree answers the tree API with the listing, pageSize entries a page, the
// next page linked by a cursor as the hub does.
func (h *fakeHub) tree(w http.ResponseWriter, r *http.Request, rev string) {
	if !h.known(rev) || r.URL.Query().Get("recursive") != "true" {
		http.Error(w, `{"error":"Invalid rev id"}`, http.StatusNotFound)
		return
	}
	entries := h.listing()
	from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	to := len(entries)
	if h.pageSize > 0 && from+h.pageSize < to {
		to = from + h.pageSize
		next := url.URL{Path: r.URL.Path, RawQuery: "recursive=true&cursor=" + strconv.Itoa(to)}
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, h.srv.URL, next.String()))
	}
	json.NewEncoder(w).Encode(entries[from:to])
}

// listing returns the tree entries of every file, and of the directories.
func (h *fakeHub) listing() []map[string]any {
	var out []map[string]any
	dirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(h.files)) {
		data := h.files[p]
		e := map[string]any{"type": "file", "path": p, "size": len(data), "oid": blobID(data)}
		if h.lfs(p) {
			pointer := fmt.Sprintf("lfs pointer\noid sha256:%s\nsize %d\n", sha(data), len(data))
			e["oid"] = blobID([]byte(pointer))
			e["lfs"] = map[string]any{"oid": sha(data), "size": len(data), "pointerSize": len(pointer)}
		}
		if d, _, ok := strings.Cut(p, "/"); ok && !dirs[d] {
			dirs[d] = true
			out = append(out, map[string]any{"type": "directory", "path": d, "size": 0, "oid": blobID([]byte(d))})
		}
		out = append(out, e)
	}
	return out
}

// file answers a resolve URL with the file's bytes.
func (h *fakeHub) file(w http.ResponseWriter, r *http.Request, rev, path string) {
	data, ok := h.files[path]
	if !h.known(rev) || !ok || h.gone[path] {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if h.resolve != nil && h.resolve(w, r, path) {
		return
	}
	if b, ok := h.serve[path]; ok {
		data = b
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

// sha returns the hex sha256 of b.
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// blobID is git's id of a blob holding b.
func blobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// parquetFile returns a Parquet file with the named columns and rows; a
// column is int64 when its first value is an int, string otherwise.
func parquetFile(t testing.TB, names []string, rows ...[]any) []byte {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var fields []arrow.Field
	for i, n := range names {
		typ := arrow.DataType(arrow.BinaryTypes.String)
		if _, ok := rows[0][i].(int); ok {
			typ = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields, arrow.Field{Name: n, Type: typ, Nullable: true})
	}
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			switch fb := b.Field(i).(type) {
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.Int64Builder:
				fb.Append(int64(v.(int)))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem))
	w, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	docCols   = []string{"_id", "title", "text"}
	queryCols = []string{"_id", "text"}
	qrelCols  = []string{"query-id", "corpus-id", "score"}
)

// parquetRepo is a small MTEB dataset in the Parquet layout: three documents
// in two corpus shards, three queries, qrels of two splits under data/ (the
// default config), plus files that are not part of the dataset.
func parquetRepo(t testing.TB) map[string][]byte {
	return map[string][]byte{
		".gitattributes": []byte("*.parquet filter=lfs diff=lfs merge=lfs -text\n"),
		"README.md":      []byte("---\nconfigs:\n- config_name: corpus\n---\n# a small dataset\n"),
		"corpus/corpus-00000-of-00002.parquet": parquetFile(t, docCols,
			[]any{"d1", "Alpha", "first document"}, []any{"d2", "", "second document"}),
		"corpus/corpus-00001-of-00002.parquet": parquetFile(t, docCols, []any{"d3", "Gamma", "third document"}),
		"queries/queries-00000-of-00001.parquet": parquetFile(t, queryCols,
			[]any{"q1", "what is first?"}, []any{"q2", "what is third?"}, []any{"q3", "what is second?"}),
		"data/test-00000-of-00001.parquet":  parquetFile(t, qrelCols, []any{"q1", "d1", 1}, []any{"q2", "d3", 2}),
		"data/train-00000-of-00001.parquet": parquetFile(t, qrelCols, []any{"q3", "d2", 1}),
	}
}

// jsonlRepo is a small MTEB dataset in the older layout: JSONL corpus and
// queries at the top, qrels as TSV for one split and as JSONL for another.
func jsonlRepo() map[string][]byte {
	return map[string][]byte{
		"README.md": []byte("# older layout\n"),
		"corpus.jsonl": []byte(`{"_id": "4983", "title": "Microstructural development", "text": "Alterations of the architecture."}` + "\n" +
			`{"_id": "5836", "title": "Induction of myelodysplasia", "text": "Myelodysplastic syndromes are age-dependent."}` + "\n"),
		"queries.jsonl":   []byte(`{"_id": "1", "text": "0-dimensional biomaterials show inductive properties.", "metadata": {}}` + "\n" + `{"_id": "3", "text": "Second claim."}` + "\n"),
		"qrels/test.tsv":  []byte("query-id\tcorpus-id\tscore\n1\t4983\t1\n"),
		"qrels/dev.jsonl": []byte(`{"query-id": "3", "corpus-id": "5836", "score": "2"}` + "\n" + `{"query-id": 1, "corpus-id": 4983, "score": 1.0}` + "\n"),
	}
}
