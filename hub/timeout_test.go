package hub_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/safefile"
)

// TestFetchDatasetTimeouts: a hub that accepts the connection and never
// answers, or stops sending a body, fails the fetch within the timeout
// instead of holding it forever, and leaves nothing behind.
func TestFetchDatasetTimeouts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads nothing, answers nothing
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	const shard = "corpus/corpus-00001-of-00002.parquet"
	stall := newFakeHub(t, "mteb/small", parquetRepo(t))
	stall.resolve = func(w http.ResponseWriter, r *http.Request, path string) bool {
		if path != shard {
			return false
		}
		w.Header().Set("Content-Length", "1000000")
		w.Write(stall.files[shard][:10])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	}
	for _, tc := range []struct {
		name, endpoint, want string
	}{
		{"no answer", "http://" + ln.Addr().String(), "nothing received for 300ms"},
		{"a body that stops", stall.URL(), shard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "data")
			begin := time.Now()
			_, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit,
				hub.DatasetOptions{Options: hub.Options{Endpoint: tc.endpoint, Timeout: 300 * time.Millisecond}, Dir: root})
			if !errors.Is(err, hub.ErrTimeout) || !errors.Is(err, hub.ErrTransfer) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrTimeout with %q", err, tc.want)
			}
			if d := time.Since(begin); d > 10*time.Second {
				t.Errorf("the fetch took %v to fail", d)
			}
			if got := entries(t, root); len(got) != 0 {
				t.Errorf("a failed fetch left %v", got)
			}
		})
	}
}

// TestFetchDatasetRefusesOtherFiles: a fetch does not replace a directory
// that holds something other than an earlier fetch of the same dataset,
// unless forced; it refuses before any request.
func TestFetchDatasetRefusesOtherFiles(t *testing.T) {
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	root := filepath.Join(t.TempDir(), "data")
	opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root}
	ref, _ := hub.ParseDatasetName("hf:mteb/small@" + commit)
	dir := filepath.Join(root, ref.DirName())
	os.MkdirAll(dir, 0o755)
	mine := filepath.Join(dir, "notes.txt")
	os.WriteFile(mine, []byte("mine\n"), 0o644)
	_, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts)
	if !errors.Is(err, safefile.ErrNotReplaceable) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("error %v, want ErrNotReplaceable naming %s and --force", err, dir)
	}
	if len(h.Requests()) != 0 {
		t.Errorf("requests before the refusal: %v", h.Requests())
	}
	if b, _ := os.ReadFile(mine); string(b) != "mine\n" {
		t.Error("the directory's file was touched")
	}
	opts.Force = true
	if _, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts); err != nil {
		t.Fatalf("with Force: %v", err)
	}
	opts.Force = false
	os.Remove(filepath.Join(dir, "corpus", "corpus-00001-of-00002.parquet"))
	if _, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts); err != nil {
		t.Fatalf("refetching a damaged earlier fetch of the same dataset: %v", err)
	}
}

// TestFetchDatasetEndlessFile: a hub that sends a file without end is cut
// off one byte past the listed size, not read until the disk is full.
func TestFetchDatasetEndlessFile(t *testing.T) {
	const shard = "corpus/corpus-00001-of-00002.parquet"
	h := newFakeHub(t, "mteb/small", parquetRepo(t))
	h.resolve = func(w http.ResponseWriter, r *http.Request, path string) bool {
		if path != shard {
			return false
		}
		chunk := make([]byte, 1<<16)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return true
	}
	root := filepath.Join(t.TempDir(), "data")
	_, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: root})
	if !errors.Is(err, hub.ErrIntegrity) || !strings.Contains(err.Error(), shard) {
		t.Fatalf("error %v, want ErrIntegrity naming %s", err, shard)
	}
	if got := entries(t, root); len(got) != 0 {
		t.Errorf("left %v", got)
	}
}
