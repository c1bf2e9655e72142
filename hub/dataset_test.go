package hub_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/mteb"
)

// opened is what a fetched dataset directory holds, read back with corpus.
type opened struct {
	docs    []string // ids in corpus order
	queries int
	qrels   map[string][]corpus.Qrel
}

// readBack opens dir with corpus and reads every part of it.
func readBack(t testing.TB, dir string) opened {
	t.Helper()
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ds.OpenCorpus(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got opened
	for {
		docs, err := r.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			got.docs = append(got.docs, d.ID)
		}
	}
	qs, err := ds.ReadQueries(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got.queries = len(qs)
	got.qrels = map[string][]corpus.Qrel{}
	for _, split := range ds.Splits() {
		if got.qrels[split], err = ds.ReadQrels(split); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// entries lists the names in dir.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestFetchDataset fetches both layouts, reads them back, and fetches again
// to find them present without a request.
func TestFetchDataset(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    func(testing.TB) map[string][]byte
		rev      string
		pageSize int
		want     opened
		layout   []string // the dataset directory's top level
	}{
		{
			name:  "parquet layout, qrels of the default config under data/",
			files: parquetRepo, rev: commit,
			want: opened{docs: []string{"d1", "d2", "d3"}, queries: 3, qrels: map[string][]corpus.Qrel{
				"test":  {{QueryID: "q1", DocID: "d1", Score: 1}, {QueryID: "q2", DocID: "d3", Score: 2}},
				"train": {{QueryID: "q3", DocID: "d2", Score: 1}},
			}},
			layout: []string{hub.StampFile, "corpus", "qrels", "queries"},
		},
		{
			name:  "older jsonl layout, a branch, a listing in pages",
			files: func(testing.TB) map[string][]byte { return jsonlRepo() }, rev: "main", pageSize: 2,
			want: opened{docs: []string{"4983", "5836"}, queries: 2, qrels: map[string][]corpus.Qrel{
				"test": {{QueryID: "1", DocID: "4983", Score: 1}},
				"dev":  {{QueryID: "3", DocID: "5836", Score: 2}, {QueryID: "1", DocID: "4983", Score: 1}},
			}},
			layout: []string{hub.StampFile, "corpus.jsonl", "qrels", "queries.jsonl"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHub(t, "mteb/small", tc.files(t))
			h.pageSize = tc.pageSize
			root := t.TempDir()
			var log bytes.Buffer
			opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL() + "/", Log: &log}, Dir: root}
			dir, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+tc.rev, opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, "hf--mteb--small@"+tc.rev); dir != want {
				t.Fatalf("dir %s, want %s", dir, want)
			}
			if got := readBack(t, dir); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("read back %+v\nwant %+v", got, tc.want)
			}
			if repo, rev, c, ok := hub.Fetched(dir); !ok || repo != "mteb/small" || rev != tc.rev || c != commit {
				t.Errorf("Fetched(%s) = %s, %s, %s, %v; want mteb/small, %s, %s, true", dir, repo, rev, c, ok, tc.rev, commit)
			}
			if _, _, _, ok := hub.Fetched(root); ok {
				t.Errorf("Fetched(%s) is true for a directory without a stamp", root)
			}
			if got := entries(t, dir); !reflect.DeepEqual(got, tc.layout) {
				t.Errorf("dataset directory holds %v, want %v", got, tc.layout)
			}
			if got := entries(t, root); len(got) != 1 {
				t.Errorf("%s holds %v, want the dataset alone", root, got)
			}
			if !strings.Contains(log.String(), "fetched into "+dir) {
				t.Errorf("log does not say where the dataset went:\n%s", log.String())
			}

			// A second fetch finds it present and asks the hub nothing.
			asked := len(h.Requests())
			again, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+tc.rev, opts)
			if err != nil || again != dir {
				t.Fatalf("second fetch: %s, %v", again, err)
			}
			if n := len(h.Requests()) - asked; n != 0 {
				t.Errorf("second fetch made %d requests: %v", n, h.Requests()[asked:])
			}
			if !strings.Contains(log.String(), "present in "+dir) {
				t.Errorf("log does not say the dataset is present:\n%s", log.String())
			}
		})
	}
}

// TestFetchDatasetRefetch checks that Force, or a damaged copy, fetches again
// and replaces the directory.
func TestFetchDatasetRefetch(t *testing.T) {
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	root := t.TempDir()
	opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root}
	name := "hf:mteb/small@" + commit
	dir, err := hub.FetchDataset(context.Background(), name, opts)
	if err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(dir, "corpus", "corpus-00001-of-00002.parquet")
	if err := os.Truncate(shard, 10); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		asked := len(h.Requests())
		opts.Force = force
		if _, err := hub.FetchDataset(context.Background(), name, opts); err != nil {
			t.Fatal(err)
		}
		if n := len(h.Requests()) - asked; n < 6 {
			t.Errorf("force %v: %d requests, want a listing and every file", force, n)
		}
		if got := readBack(t, dir); len(got.docs) != 3 {
			t.Errorf("force %v: %d documents after the fetch", force, len(got.docs))
		}
	}
	if got := entries(t, root); len(got) != 1 {
		t.Errorf("%s holds %v, want the dataset alone", root, got)
	}
}

// failureShard is the corpus file the failure cases damage.
const failureShard = "corpus/corpus-00001-of-00002.parquet"

// failureCase is a repository damaged by setup, and the error a fetch of it
// must return: one wrapping want, whose text says every string of say.
type failureCase struct {
	name  string
	jsonl bool
	rev   string
	setup func(h *fakeHub)
	want  error
	say   []string
}

var failureCases = []failureCase{
	{
		name:  "wrong sha256",
		setup: func(h *fakeHub) { h.serve[failureShard] = flip(h.files[failureShard]) },
		want:  hub.ErrIntegrity,
		say:   []string{"dataset mteb/small@" + commit, failureShard, "sha256 ", "200 OK"},
	},
	{
		name:  "wrong git blob id",
		jsonl: true,
		setup: func(h *fakeHub) { h.serve["qrels/test.tsv"] = flip(h.files["qrels/test.tsv"]) },
		want:  hub.ErrIntegrity,
		say:   []string{"qrels/test.tsv", "git blob id"},
	},
	{
		name: "truncated body",
		setup: func(h *fakeHub) {
			h.resolve = func(w http.ResponseWriter, r *http.Request, path string) bool {
				if path != failureShard {
					return false
				}
				w.Header().Set("Content-Length", "1000000")
				w.Write(h.files[failureShard])
				return true
			}
		},
		want: hub.ErrTransfer,
		say:  []string{failureShard, "unexpected EOF"},
	},
	{
		name:  "404 for a listed file",
		setup: func(h *fakeHub) { h.gone["queries/queries-00000-of-00001.parquet"] = true },
		want:  hub.ErrNotFound,
		say: []string{"dataset mteb/small@" + commit, ": queries/queries-00000-of-00001.parquet: GET http://",
			"/datasets/mteb/small/resolve/" + commit + "/queries/queries-00000-of-00001.parquet", "404 Not Found"},
	},
	{
		name: "unknown revision",
		rev:  strings.Repeat("f", 40),
		want: hub.ErrNotFound,
		say:  []string{"/api/datasets/mteb/small/tree/" + strings.Repeat("f", 40) + "?recursive=true", "404 Not Found"},
	},
	{
		name: "no qrels",
		setup: func(h *fakeHub) {
			delete(h.files, "data/test-00000-of-00001.parquet")
			delete(h.files, "data/train-00000-of-00001.parquet")
		},
		want: hub.ErrLayout,
		say:  []string{"no qrels", "README.md"},
	},
	{
		name: "queries without an _id column",
		setup: func(h *fakeHub) {
			h.files["queries/queries-00000-of-00001.parquet"] = parquetFile(h.t, []string{"id", "text"}, []any{"q1", "what?"})
		},
		want: corpus.ErrColumn,
		say:  []string{"do not open as a dataset", "_id", "not an MTEB retrieval dataset"},
	},
}

// TestFetchDatasetFailures fetches damaged repositories: each fetch fails
// with an error that names what went wrong, and leaves nothing behind.
func TestFetchDatasetFailures(t *testing.T) {
	for _, tc := range failureCases {
		t.Run(tc.name, func(t *testing.T) {
			files := parquetRepo(t)
			if tc.jsonl {
				files = jsonlRepo()
			}
			h := newFakeHub(t, "mteb/small", files)
			if tc.setup != nil {
				tc.setup(h)
			}
			rev := tc.rev
			if rev == "" {
				rev = commit
			}
			root := filepath.Join(t.TempDir(), "data")
			_, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+rev,
				hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root})
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			for _, s := range tc.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("a failed fetch left %v in %s", got, root)
			}
		})
	}
}

// flip returns b with its first byte changed: same size, other content.
func flip(b []byte) []byte {
	out := slices.Clone(b)
	out[0] ^= 0xff
	return out
}

// TestFetchDatasetToken fetches from a hub that wants a token: without one,
// with a wrong one (which shows nowhere), and with the right one.
func TestFetchDatasetToken(t *testing.T) {
	const secret, wrong = "hf_SeCrEt0123456789", "hf_WrOnG9876543210"
	clearHubEnv(t)
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	h.token = secret
	fetch := func(token string) (string, string, error) {
		t.Setenv(hub.EnvToken, token)
		var log bytes.Buffer
		dir, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit,
			hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL(), Log: &log}, Dir: t.TempDir()})
		return dir, log.String(), err
	}
	_, _, err := fetch("")
	if !errors.Is(err, hub.ErrUnauthorized) || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), hub.EnvToken) {
		t.Errorf("without a token: %v, want ErrUnauthorized, 401 and a hint naming %s", err, hub.EnvToken)
	}
	_, log, err := fetch(wrong)
	if !errors.Is(err, hub.ErrUnauthorized) || !strings.Contains(err.Error(), "refused") {
		t.Errorf("with a wrong token: %v, want ErrUnauthorized saying it was refused", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(log, wrong) {
		t.Errorf("the token shows in the error or the log: %v\n%s", err, log)
	}
	dir, log, err := fetch(secret)
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if strings.Contains(log, secret) {
		t.Errorf("the token shows in the log:\n%s", log)
	}
	if got := readBack(t, dir); len(got.docs) != 3 {
		t.Errorf("%d documents, want 3", len(got.docs))
	}
	stamp, err := os.ReadFile(filepath.Join(dir, hub.StampFile))
	if err != nil || strings.Contains(string(stamp), secret) || !strings.Contains(string(stamp), commit) {
		t.Errorf("stamp %s, %v: want the commit and no token", stamp, err)
	}
}

// TestFetchDatasetCancel cancels the context while a file is half sent: the
// fetch stops at once and leaves nothing.
func TestFetchDatasetCancel(t *testing.T) {
	const shard = "corpus/corpus-00001-of-00002.parquet"
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	started := make(chan struct{})
	h.resolve = func(w http.ResponseWriter, r *http.Request, path string) bool {
		if path != shard {
			return false
		}
		w.Header().Set("Content-Length", "1000000")
		w.Write(h.files[shard][:10])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	root := filepath.Join(t.TempDir(), "data")
	begin := time.Now()
	_, err := hub.FetchDataset(ctx, "hf:mteb/small@"+commit, hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, hub.ErrTransfer) || !strings.Contains(err.Error(), shard) {
		t.Fatalf("error %v, want context.Canceled naming %s", err, shard)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("the fetch took %v to stop", d)
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("a cancelled fetch left %v in %s", got, root)
	}
}

// TestFetchDatasetNames checks that bad names and unpinned datasets fail
// before any request.
func TestFetchDatasetNames(t *testing.T) {
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: t.TempDir()}
	for _, tc := range []struct {
		name string
		want error
		say  string
	}{
		{"hf:mteb/small", hub.ErrRevision, "no task of mteb " + mteb.Version + " reads it"},
		{"mteb:NoSuchTask", hub.ErrName, "unknown MTEB retrieval task"},
		{"mteb:LEMBQMSumRetrieval", hub.ErrTask, `reads config "qmsum" of dwzhu/LongEmbed`},
		{"mteb:BelebeleRetrieval", hub.ErrTask, "language subsets"},
		{"mteb:ABOI2VRetrieval", hub.ErrTask, "msrag retrieves text"},
		{"hf:mteb/small@", hub.ErrName, "hf:mteb/NAME@REVISION"},
		{"mteb/small@" + commit, hub.ErrName, "hf:mteb/NAME"},
		{"hf:other/small@" + commit, hub.ErrName, "hf:mteb/NAME"},
		{"hf:mteb/../x@" + commit, hub.ErrName, "hf:mteb/NAME"},
		{"hf:mteb/small@refs/pr/1", hub.ErrName, `without "/"`},
		{"hf:mteb/small@..", hub.ErrName, "hf:mteb/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hub.FetchDataset(context.Background(), tc.name, opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.say) {
				t.Errorf("error %v, want %v saying %q", err, tc.want, tc.say)
			}
		})
	}
	if n := len(h.Requests()); n != 0 {
		t.Errorf("bad names made %d requests", n)
	}
}

// TestFetchDatasetEndpoint checks where the endpoint and the directory come
// from when the options leave them empty.
func TestFetchDatasetEndpoint(t *testing.T) {
	t.Run("none: the Hugging Face hub", func(t *testing.T) {
		clearHubEnv(t)
		rec := &recorder{}
		dir := t.TempDir()
		opts := hub.DatasetOptions{Options: hub.Options{HTTPClient: &http.Client{Transport: rec}}, Dir: dir}
		_, err := hub.FetchDataset(context.Background(), "hf:mteb/scifact", opts)
		rev, _ := hub.PinnedRevision("scifact")
		want := "https://huggingface.co/api/datasets/mteb/scifact/tree/" + rev + "?recursive=true"
		if len(rec.urls) != 1 || rec.urls[0] != want || !errors.Is(err, hub.ErrTransfer) || !strings.Contains(err.Error(), want) {
			t.Errorf("asked %q, error %v; want one request for %s, named by the error", rec.urls, err, want)
		}
		if got := entries(t, dir); len(got) != 0 {
			t.Errorf("a failed fetch left %v", got)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		clearHubEnv(t)
		t.Setenv(hub.EnvEndpoint, "localhost:8080")
		_, err := hub.FetchDataset(context.Background(), "hf:mteb/scifact", hub.DatasetOptions{Dir: t.TempDir()})
		if !errors.Is(err, hub.ErrEndpoint) {
			t.Errorf("error %v, want ErrEndpoint", err)
		}
	})
	t.Run("from the environment, pinned revision, default directory", func(t *testing.T) {
		clearHubEnv(t)
		h := newFakeHub(t, "mteb/scifact", jsonlRepo())
		rev, _ := hub.PinnedRevision("scifact")
		h.commit = rev
		t.Setenv(hub.EnvEndpoint, h.URL())
		cache := t.TempDir()
		t.Setenv(hub.EnvCache, cache)
		dir, err := hub.FetchDataset(context.Background(), "hf:mteb/scifact", hub.DatasetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(cache, "data", "hf--mteb--scifact@"+rev); dir != want {
			t.Errorf("dir %s, want %s", dir, want)
		}
	})
}

// TestFetchTask fetches mteb:SciFact (spelt in another case) from a hub
// that serves mteb/scifact at the revision mteb 2.26.24's SciFact task
// pins, and nothing else: the directory records that commit. Offline, a
// task that is not present is refused without a request, and one that is
// present is returned.
func TestFetchTask(t *testing.T) {
	task, ok := mteb.Get("SciFact")
	if !ok {
		t.Fatal("no SciFact task")
	}
	h := newFakeHub(t, "mteb/scifact", jsonlRepo())
	h.commit = task.Revision
	root := t.TempDir()
	opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root, Offline: true}
	if _, err := hub.FetchDataset(context.Background(), "mteb:SciFact", opts); !errors.Is(err, hub.ErrOffline) || len(h.Requests()) != 0 {
		t.Fatalf("offline: %v after %d requests, want ErrOffline and none", err, len(h.Requests()))
	}
	opts.Offline = false
	dir, err := hub.FetchDataset(context.Background(), "mteb:scifact", opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "hf--mteb--scifact@"+task.Revision); dir != want {
		t.Fatalf("dir %s, want %s", dir, want)
	}
	if repo, _, commit, ok := hub.Fetched(dir); !ok || repo != "mteb/scifact" || commit != task.Revision {
		t.Fatalf("stamp: %s %s %v", repo, commit, ok)
	}
	n := len(h.Requests())
	opts.Offline = true
	if again, err := hub.FetchDataset(context.Background(), "mteb:SciFact", opts); err != nil || again != dir || len(h.Requests()) != n {
		t.Fatalf("present, offline: %s, %v, %d more requests", again, err, len(h.Requests())-n)
	}
}
