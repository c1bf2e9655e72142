package hub_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/msrag/msrag/hub"
)

// hubEnv lists every variable the client reads, cleared by clearHubEnv.
var hubEnv = []string{hub.EnvEndpoint, hub.EnvHFEndpoint, hub.EnvToken, hub.EnvTokenLegacy, hub.EnvTokenPath,
	hub.EnvHome, hub.EnvNoImplicitToken, hub.EnvOffline, hub.EnvOfflineLegacy}

// clearHubEnv empties the client's variables, and points the token file
// somewhere empty, so that the machine's own settings play no part.
func clearHubEnv(t *testing.T) {
	t.Helper()
	for _, v := range hubEnv {
		t.Setenv(v, "")
	}
	t.Setenv(hub.EnvHome, t.TempDir())
}

// recorder is an HTTP client that sends nothing: it records each request's
// URL and Authorization header and fails it.
type recorder struct {
	mu   sync.Mutex
	urls []string
	auth []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls = append(r.urls, req.URL.String())
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	return nil, errors.New("not sent")
}

// ask makes one request through a client built from o and returns what the
// recorder saw (nothing when no request went out) and the error.
func ask(t *testing.T, o hub.Options) (url, auth string, err error) {
	t.Helper()
	rec := &recorder{}
	o.HTTPClient = &http.Client{Transport: rec}
	c, err := hub.NewClient(o)
	if err != nil {
		return "", "", err
	}
	_, err = c.Commit(context.Background(), hub.Repo{ID: "mteb/scifact", Dataset: true}, "main")
	if len(rec.urls) == 0 {
		return "", "", err
	}
	return rec.urls[0], rec.auth[0], err
}

// TestEndpointChoice: the option, then $MSRAG_HF_ENDPOINT, then $HF_ENDPOINT,
// then https://huggingface.co; empty values count as unset.
func TestEndpointChoice(t *testing.T) {
	const path = "/api/datasets/mteb/scifact/revision/main"
	for _, tc := range []struct {
		name, option, msrag, hf, want string
	}{
		{"nothing set", "", "", "", "https://huggingface.co"},
		{"HF_ENDPOINT", "", "", "http://hf.example:8080/", "http://hf.example:8080"},
		{"MSRAG_HF_ENDPOINT over HF_ENDPOINT", "", "http://msrag.example/mirror", "http://hf.example", "http://msrag.example/mirror"},
		{"the option over both", "http://option.example", "http://msrag.example", "http://hf.example", "http://option.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearHubEnv(t)
			t.Setenv(hub.EnvEndpoint, tc.msrag)
			t.Setenv(hub.EnvHFEndpoint, tc.hf)
			url, _, err := ask(t, hub.Options{Endpoint: tc.option})
			if url != tc.want+path {
				t.Errorf("asked %q, want %q", url, tc.want+path)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want+path) {
				t.Errorf("error %v, want one naming %s", err, tc.want+path)
			}
		})
	}
	for _, tc := range []struct{ env, value string }{
		{hub.EnvHFEndpoint, "huggingface.co"},
		{hub.EnvEndpoint, "ftp://127.0.0.1/"},
		{hub.EnvHFEndpoint, "http://127.0.0.1/?x=1"},
	} {
		t.Run("malformed "+tc.env, func(t *testing.T) {
			clearHubEnv(t)
			t.Setenv(tc.env, tc.value)
			_, err := hub.NewClient(hub.Options{})
			if !errors.Is(err, hub.ErrEndpoint) || !strings.Contains(err.Error(), "$"+tc.env) || !strings.Contains(err.Error(), tc.value) {
				t.Errorf("error %v, want ErrEndpoint naming $%s and %q", err, tc.env, tc.value)
			}
		})
	}
}

// TestTokenChoice: the option, then $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN and the
// token file, cleaned as huggingface_hub cleans them; none of the implicit
// ones with $HF_HUB_DISABLE_IMPLICIT_TOKEN.
func TestTokenChoice(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		option, env, legacy      string
		file                     string // written to the token file when not ""
		pathVar, disable, want   string
		useHomeForFile, unreadbl bool
	}{
		{name: "none", want: ""},
		{name: "option", option: "hf_opt", env: "hf_env", want: "Bearer hf_opt"},
		{name: "HF_TOKEN", env: " hf_env\r\n", legacy: "hf_legacy", file: "hf_file", want: "Bearer hf_env"},
		{name: "HUGGING_FACE_HUB_TOKEN", legacy: "hf_legacy", file: "hf_file", want: "Bearer hf_legacy"},
		{name: "token file in HF_HOME", file: "hf_fi\nle\n", useHomeForFile: true, want: "Bearer hf_file"},
		{name: "HF_TOKEN_PATH", file: "hf_path", want: "Bearer hf_path"},
		{name: "implicit tokens disabled", env: "hf_env", file: "hf_file", disable: "1", want: ""},
		{name: "option despite disabled", option: "hf_opt", disable: "true", want: "Bearer hf_opt"},
		{name: "blank HF_TOKEN falls through", env: " \n", file: "hf_file", want: "Bearer hf_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearHubEnv(t)
			t.Setenv(hub.EnvEndpoint, "http://127.0.0.1:1")
			t.Setenv(hub.EnvToken, tc.env)
			t.Setenv(hub.EnvTokenLegacy, tc.legacy)
			t.Setenv(hub.EnvNoImplicitToken, tc.disable)
			if tc.file != "" {
				path := filepath.Join(t.TempDir(), "token")
				if tc.useHomeForFile {
					path = filepath.Join(os.Getenv(hub.EnvHome), "token")
				} else {
					t.Setenv(hub.EnvTokenPath, path)
				}
				if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, auth, err := ask(t, hub.Options{Token: tc.option})
			if auth != tc.want {
				t.Errorf("Authorization %q, want %q", auth, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hf_") {
				t.Errorf("the token shows in the error: %v", err)
			}
		})
	}
	t.Run("unreadable token file", func(t *testing.T) {
		clearHubEnv(t)
		dir := t.TempDir() // a directory where the file should be
		t.Setenv(hub.EnvTokenPath, dir)
		_, err := hub.NewClient(hub.Options{Endpoint: "http://127.0.0.1:1"})
		if err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("error %v, want one naming %s", err, dir)
		}
	})
}

// TestOffline: $HF_HUB_OFFLINE (else $TRANSFORMERS_OFFLINE) or the option
// refuse every request; a dataset already fetched is still served.
func TestOffline(t *testing.T) {
	for _, tc := range []struct {
		name, offline, legacy string
		option, want          bool
	}{
		{"online", "", "", false, false},
		{"HF_HUB_OFFLINE=1", "1", "", false, true},
		{"HF_HUB_OFFLINE=yes", "yes", "", false, true},
		{"HF_HUB_OFFLINE=0 wins over TRANSFORMERS_OFFLINE", "0", "1", false, false},
		{"TRANSFORMERS_OFFLINE=ON", "", "ON", false, true},
		{"the option", "", "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearHubEnv(t)
			t.Setenv(hub.EnvOffline, tc.offline)
			t.Setenv(hub.EnvOfflineLegacy, tc.legacy)
			url, _, err := ask(t, hub.Options{Endpoint: "http://127.0.0.1:1", Offline: tc.option})
			if got := errors.Is(err, hub.ErrOffline); got != tc.want || (url != "") == tc.want {
				t.Errorf("request %q, error %v; want offline %v", url, err, tc.want)
			}
			if tc.want && !strings.Contains(err.Error(), hub.EnvOffline) {
				t.Errorf("error %v does not name %s", err, hub.EnvOffline)
			}
		})
	}
	t.Run("a fetched dataset is served offline", func(t *testing.T) {
		clearHubEnv(t)
		h := newFakeHub(t, "mteb/small", parquetRepo(t))
		opts := hub.DatasetOptions{Options: hub.Options{Endpoint: h.URL()}, Dir: t.TempDir()}
		dir, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(hub.EnvOffline, "1")
		asked := len(h.Requests())
		if again, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts); err != nil || again != dir {
			t.Errorf("offline, present: %q, %v; want %s", again, err, dir)
		}
		opts.Force = true
		if _, err := hub.FetchDataset(context.Background(), "hf:mteb/small@"+commit, opts); !errors.Is(err, hub.ErrOffline) {
			t.Errorf("offline, forced: %v, want ErrOffline", err)
		}
		if n := len(h.Requests()) - asked; n != 0 {
			t.Errorf("%d requests offline", n)
		}
	})
}
