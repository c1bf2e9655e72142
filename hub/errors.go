package hub

import (
	"errors"
	"strings"
)

// Errors wrapped by everything this package returns, for use with [errors.Is].
var (
	// ErrEndpoint reports a malformed hub endpoint.
	ErrEndpoint = errors.New("no usable hub endpoint")
	// ErrOffline reports a request refused, or a dataset not present, while
	// fetching is off (Options.Offline, DatasetOptions.Offline or
	// $HF_HUB_OFFLINE).
	ErrOffline = errors.New("offline")
	// ErrName reports a malformed repository, dataset, revision or file name.
	ErrName = errors.New("bad name")
	// ErrRevision reports a dataset that has no pinned revision and was
	// named without one.
	ErrRevision = errors.New("no revision")
	// ErrTask reports an MTEB task msrag cannot fetch (see ParseTask).
	ErrTask = errors.New("task not supported")
	// ErrNotFound reports an HTTP 404: no such repository, revision or file.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized reports an HTTP 401 or 403: the hub wants a token, or
	// refused the one sent.
	ErrUnauthorized = errors.New("not authorized")
	// ErrStatus reports any other HTTP status than 200.
	ErrStatus = errors.New("unexpected HTTP status")
	// ErrTransfer reports a request or a body that broke off; it is wrapped
	// together with the cause (context.Canceled for a cancelled download).
	ErrTransfer = errors.New("transfer failed")
	// ErrIntegrity reports downloaded bytes whose size, sha256 or git blob
	// id differ from what the listing promised.
	ErrIntegrity = errors.New("content does not match the listing")
	// ErrLayout reports a repository that is not an MTEB retrieval dataset:
	// a part is missing, or the files do not open as one.
	ErrLayout = errors.New("not an MTEB retrieval dataset")
)

// Error is a failed request to a hub: what was asked, where, and what came
// back. It never holds the token. Err wraps one of the sentinels above.
type Error struct {
	Repo     Repo
	Revision string // as asked; "" when none applies
	File     string // path in the repository; "" for a listing
	URL      string // the URL requested
	Status   string // the HTTP status line; "" when no response came
	Err      error
}

// Error formats the request as
// "hub: dataset mteb/scifact@REV: corpus.jsonl: GET URL: 404 Not Found: not found".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hub: ")
	b.WriteString(e.Repo.String())
	if e.Revision != "" {
		b.WriteString("@" + e.Revision)
	}
	if e.File != "" {
		b.WriteString(": " + e.File)
	}
	if e.URL != "" {
		b.WriteString(": GET " + e.URL)
	}
	if e.Status != "" {
		b.WriteString(": " + e.Status)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }
