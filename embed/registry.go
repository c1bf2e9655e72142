package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Origin says how an embedder was opened, so that it can be opened again: the
// name of its Kind and the kind's parameters as JSON objects, which an index's
// manifest stores without interpreting them. Params identify the model (two
// embedders with the same kind and Params embed alike); Access is how it was
// reached (a server's endpoints, a tokenizer file's path), which may change.
type Origin struct {
	Kind   string
	Params string
	Access string
}

// Originer is implemented by an Embedder that can say its Origin. An
// embedder without one is recorded by its Spec alone and opened again by
// its name (Open).
type Originer interface {
	Origin() Origin
}

// Options say how to open an embedder, whatever its kind. A kind uses what
// applies to it and ignores the rest, but for the device: Open and Reopen
// refuse device fields that would do nothing (Options.Check, Kind.Devices).
type Options struct {
	// Device is "cpu" (or ""), "cuda", or "auto" (CUDA if it can be had).
	Device string
	// DeviceID is the CUDA device number.
	DeviceID int
	// GPUs: with Device "cuda" or "auto", one session per GPU with the
	// batches handed out as they come free.
	GPUs []int
	// Threads is the intra-op thread count (of all sessions together, for a
	// kind that runs several); 0 means all cores.
	Threads int
	// Sessions is the number of model sessions the texts of a call are
	// handed out to, for a kind that can run several on one device; 0 lets
	// the kind choose (for ONNX on the CPU: one per thread when texts go one
	// per run, else one).
	Sessions int
	// BatchTokens caps a batch's size times its padded length; 0 means the
	// kind's default.
	BatchTokens int
	// Batching is how texts are grouped into model runs, for a kind that
	// has the choice: BatchingPadded, BatchingSingle, or "" / "auto" (the
	// kind chooses; for ONNX, single for a dynamically quantized model).
	Batching string
	// Offline forbids fetching a model on its first use.
	Offline bool
	// Log receives notices (a model fetched, a fall back to the CPU); nil
	// discards them.
	Log io.Writer
	// Extra holds each kind's own options, one value of the kind's type
	// each (such as remote.OpenOptions); see ExtraOf.
	Extra []any
}

// ExtraOf returns the value of type T in o.Extra, and whether there is one.
func ExtraOf[T any](o Options) (T, bool) {
	for _, x := range o.Extra {
		if v, ok := x.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// Batching modes (Options.Batching, BatchingReporter).
const (
	BatchingAuto   = "auto"   // the kind chooses
	BatchingPadded = "padded" // length-sorted padded batches
	BatchingSingle = "single" // one text per model run: a vector never depends on its batch
)

// BatchingReporter is implemented by an embedder that can group texts into
// model runs in more than one way; BatchingMode says how this one does
// (BatchingPadded or BatchingSingle), as an index's manifest records it.
type BatchingReporter interface {
	BatchingMode() string
}

// Kind is a kind of embedder: how it claims model names, opens one by name,
// and opens one again from the Origin it reported.
type Kind struct {
	// Name is the kind's name, recorded in Origin.Kind.
	Name string
	// Claims reports whether a model name is this kind's (a prefix such as
	// "tei:", an exact name). Nil: the kind is the default, which takes
	// every name no other kind claims; there is at most one.
	Claims func(name string) bool
	// Open opens the model called name.
	Open func(ctx context.Context, name string, o Options) (Embedder, error)
	// Reopen opens the model an Origin of this kind records.
	Reopen func(ctx context.Context, origin Origin, o Options) (Embedder, error)
	// Devices says that the kind runs its models on a device of this
	// machine that Options.Device, DeviceID and GPUs choose. Open and
	// Reopen refuse options that choose a device for a kind without
	// (ErrNoDevice): they would do nothing.
	Devices bool
}

// ErrUnknownKind is wrapped by the errors of Open and Reopen when no
// registered kind takes a name or an origin's kind.
var ErrUnknownKind = errors.New("embedder kind not registered")

var (
	kindsMu sync.RWMutex
	kinds   = map[string]Kind{}
)

// Register makes a kind available to Open and Reopen; a package that
// implements one calls it from init. It panics when the name is taken, a
// second default kind is given, or Open or Reopen is nil.
func Register(k Kind) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if k.Name == "" || k.Open == nil || k.Reopen == nil {
		panic("embed: Register of a kind without a name, Open or Reopen")
	}
	if _, dup := kinds[k.Name]; dup {
		panic("embed: Register called twice for kind " + k.Name)
	}
	if k.Claims == nil {
		if d, ok := defaultKind(); ok {
			panic("embed: kinds " + d.Name + " and " + k.Name + " are both the default")
		}
	}
	kinds[k.Name] = k
}

// Kinds returns the names of the registered kinds, sorted.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// defaultKind returns the kind without Claims; the caller holds kindsMu.
func defaultKind() (Kind, bool) {
	for _, k := range kinds {
		if k.Claims == nil {
			return k, true
		}
	}
	return Kind{}, false
}

// kindOf returns the kind that claims name: the one kind whose Claims says
// so, else the default.
func kindOf(name string) (Kind, error) {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	var claimed []Kind
	for _, k := range kinds {
		if k.Claims != nil && k.Claims(name) {
			claimed = append(claimed, k)
		}
	}
	switch len(claimed) {
	case 0:
		if k, ok := defaultKind(); ok {
			return k, nil
		}
		return Kind{}, fmt.Errorf("embed: model %q: no registered kind takes it (registered: %s): %w", name, kindList(), ErrUnknownKind)
	case 1:
		return claimed[0], nil
	}
	slices.SortFunc(claimed, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return Kind{}, fmt.Errorf("embed: model %q is claimed by kinds %s and %s", name, claimed[0].Name, claimed[1].Name)
}

// kindList names the registered kinds; the caller holds kindsMu.
func kindList() string {
	if len(kinds) == 0 {
		return "none: import the packages of the kinds, such as github.com/msrag/msrag/embed/builtin"
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Open opens the model called name with the kind that claims it. The
// caller closes it.
func Open(ctx context.Context, name string, o Options) (Embedder, error) {
	k, err := kindOf(name)
	if err != nil {
		return nil, err
	}
	if err := checkKind(k, o); err != nil {
		return nil, err
	}
	return k.Open(ctx, name, o)
}

// Reopen opens the model an origin records with its kind. The caller
// closes it.
func Reopen(ctx context.Context, origin Origin, o Options) (Embedder, error) {
	kindsMu.RLock()
	k, ok := kinds[origin.Kind]
	var list string
	if !ok {
		list = kindList()
	}
	kindsMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("embed: kind %q is not registered (registered: %s): %w", origin.Kind, list, ErrUnknownKind)
	}
	if err := checkKind(k, o); err != nil {
		return nil, err
	}
	return k.Reopen(ctx, origin, o)
}

// OriginOf returns e's origin, and whether it reports one.
func OriginOf(e Embedder) (Origin, bool) {
	if o, ok := e.(Originer); ok {
		return o.Origin(), true
	}
	return Origin{}, false
}
