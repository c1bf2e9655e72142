package hub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a [Client]. The zero value talks to the hub that
// $MSRAG_HF_ENDPOINT, $HF_ENDPOINT or [DefaultEndpoint] names, with the token
// of $HF_TOKEN (or huggingface_hub's other sources, env.go), offline when
// $HF_HUB_OFFLINE says so, through http.DefaultClient, logging nothing.
type Options struct {
	// Endpoint is the hub's base URL, such as "http://127.0.0.1:8080" or a
	// mirror with a path prefix; empty means $MSRAG_HF_ENDPOINT, else
	// $HF_ENDPOINT, else DefaultEndpoint.
	Endpoint string
	// Token is sent as a bearer token; empty means $HF_TOKEN, else
	// $HUGGING_FACE_HUB_TOKEN, else the token file ([TokenPath]), none of
	// them when $HF_HUB_DISABLE_IMPLICIT_TOKEN is true; with none, no
	// Authorization header is sent.
	Token string
	// Offline refuses every request with an error wrapping [ErrOffline]
	// ($HF_HUB_OFFLINE=1 does too): a fetch then serves only what is
	// present.
	Offline bool
	// HTTPClient does the requests; nil means http.DefaultClient. Its
	// timeout, if any, bounds whole downloads: prefer a context.
	HTTPClient *http.Client
	// Log receives one line per download; nil discards them.
	Log io.Writer
	// Timeout bounds each request's wait for a connection and the response
	// headers, and then each wait for more of the body (a stalled download
	// fails, a slow one that keeps sending does not); 0 means
	// DefaultTimeout.
	Timeout time.Duration
}

// Repo names a repository on the hub: ID is "ORG/NAME", Dataset tells a
// dataset repository from a model repository.
type Repo struct {
	ID      string
	Dataset bool
}

// String returns "dataset ORG/NAME" or "model ORG/NAME".
func (r Repo) String() string {
	if r.Dataset {
		return "dataset " + r.ID
	}
	return "model " + r.ID
}

// check reports an ID that is not two non-empty path segments.
func (r Repo) check() error {
	org, name, ok := strings.Cut(r.ID, "/")
	if !ok || !validSegment(org) || !validSegment(name) {
		return fmt.Errorf("hub: %s: want ORG/NAME: %w", r, ErrName)
	}
	return nil
}

// validSegment reports a non-empty path segment that is not "." or "..".
func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\")
}

// prefix returns the repository's path under the endpoint: "datasets/ORG/NAME"
// or "ORG/NAME", each segment escaped.
func (r Repo) prefix() string {
	org, name, _ := strings.Cut(r.ID, "/")
	p := url.PathEscape(org) + "/" + url.PathEscape(name)
	if r.Dataset {
		return "datasets/" + p
	}
	return p
}

// Client lists and downloads the files of hub repositories. It is safe for
// concurrent use.
type Client struct {
	endpoint string // without a trailing slash
	token    string
	offline  bool
	http     *http.Client
	log      io.Writer
	timeout  time.Duration
}

// NewClient returns a client for the hub at o.Endpoint, $MSRAG_HF_ENDPOINT,
// $HF_ENDPOINT or DefaultEndpoint. A malformed endpoint is an error wrapping
// [ErrEndpoint] that names where it came from.
func NewClient(o Options) (*Client, error) {
	ep, err := endpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	tok, err := token(o.Token)
	if err != nil {
		return nil, err
	}
	c := &Client{endpoint: ep, token: tok, offline: o.Offline || OfflineEnv(), http: o.HTTPClient, log: o.Log}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.log == nil {
		c.log = io.Discard
	}
	if c.timeout = o.Timeout; c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// Endpoint returns the hub's base URL, without a trailing slash.
func (c *Client) Endpoint() string { return c.endpoint }

// FileURL returns the URL that serves path of repo at rev:
// ENDPOINT/[datasets/]ORG/NAME/resolve/REV/PATH.
func (c *Client) FileURL(repo Repo, rev, path string) string {
	return c.endpoint + "/" + repo.prefix() + "/resolve/" + url.PathEscape(rev) + "/" + escapePath(path)
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// get sends GET u with the token, if any; offline, it sends nothing and
// fails with [ErrOffline]. A response other than 200 is
// returned as an error wrapping the sentinel for its status; the caller turns
// both kinds of error into an [*Error].
func (c *Client) get(ctx context.Context, u string) (*http.Response, error) {
	if c.offline {
		return nil, fmt.Errorf("%w: no request made (%s or the Offline option)", ErrOffline, EnvOffline)
	}
	rctx, wd := watch(ctx, c.timeout, "GET "+u)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		wd.stop()
		return nil, fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		err = cause(rctx, err)
		wd.stop()
		return nil, fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	wd.progress()
	resp.Body = &watchedBody{ReadCloser: resp.Body, ctx: rctx, w: wd}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	resp.Body.Close()
	return resp, c.statusError(resp)
}

// statusError maps a status to its sentinel, with the hub's own message and a
// hint about the token where one helps.
func (c *Client) statusError(resp *http.Response) error {
	var err error
	switch resp.StatusCode {
	case http.StatusNotFound:
		err = ErrNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		if c.token == "" {
			err = fmt.Errorf("%w (no token sent: set %s)", ErrUnauthorized, EnvToken)
		} else {
			err = fmt.Errorf("%w (the token was refused)", ErrUnauthorized)
		}
	default:
		err = ErrStatus
	}
	if msg := resp.Header.Get("X-Error-Message"); msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// fail builds the [*Error] for a request to u; resp may be nil.
func fail(repo Repo, rev, file, u string, resp *http.Response, err error) error {
	e := &Error{Repo: repo, Revision: rev, File: file, URL: u, Err: err}
	if resp != nil {
		e.Status = resp.Status
	}
	return e
}
