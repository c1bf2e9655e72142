package channel

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Setting is one parameter of a kind: its key and its value as text.
type Setting struct{ Key, Value string }

// Settings are a kind's parameters as text, in the kind's order: the
// stable form an index's identity records and compares ([Kind.Recorded],
// [Params.Settings]), and the form the command line gives them in
// ([Params.Parse]).
type Settings []Setting

// String writes the settings as "key=value, key=value".
func (s Settings) String() string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.Key + "=" + x.Value
	}
	return strings.Join(out, ", ")
}

// Get returns the value of key.
func (s Settings) Get(key string) (string, bool) {
	i := slices.IndexFunc(s, func(x Setting) bool { return x.Key == key })
	if i < 0 {
		return "", false
	}
	return s[i].Value, true
}

// Diff returns the settings in which s (what is there) and want differ,
// each side's, by key: a key one side lacks is left out of that side.
// Both are empty when the settings are alike.
func (s Settings) Diff(want Settings) (have, wanted Settings) {
	var keys []string
	for _, x := range append(slices.Clone(s), want...) {
		if !slices.Contains(keys, x.Key) {
			keys = append(keys, x.Key)
		}
	}
	for _, k := range keys {
		a, aok := s.Get(k)
		b, bok := want.Get(k)
		if a == b && aok == bok {
			continue
		}
		if aok {
			have = append(have, Setting{k, a})
		}
		if bok {
			wanted = append(wanted, Setting{k, b})
		}
	}
	return have, wanted
}

// ParseSettings reads "key=value,key=value" (the part of --channel
// NAME:... after the colon). A piece without "=" continues the value before
// it, so that a value may hold commas ("factory=IVF1024,Flat"). A first
// piece without "=", an empty key or a key given twice is an error naming
// it.
func ParseSettings(s string) (Settings, error) {
	var out Settings
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok && len(out) > 0 {
			out[len(out)-1].Value += "," + strings.TrimSpace(pair)
			continue
		}
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q: want key=value", pair)
		}
		if _, dup := out.Get(k); dup {
			return nil, fmt.Errorf("key %s given twice", k)
		}
		out = append(out, Setting{k, strings.TrimSpace(v)})
	}
	return out, nil
}

// Flag is one parameter of a kind's build that the command line takes, in
// the table a kind declares ([Params.Flags]): --channel NAME:KEY=VALUE, and
// --ALIAS where the command line had a flag of its own for it before kinds
// took parameters.
type Flag struct {
	Key     string
	Default string
	Usage   string
	// Alias is the name of the command line's own flag for the parameter
	// ("factory", "bm25-k1"), or "".
	Alias string
}

// ParseFlags reads settings by a kind's flag table: each key must be one
// of flags, each value is read by parse (its error is about the value).
// Errors name the key (a value's error is a *ParamError). Settings not given are left out: parse's caller
// starts from the kind's defaults.
func ParseFlags(s Settings, flags []Flag, parse func(key, value string) error) error {
	for _, x := range s {
		if !slices.ContainsFunc(flags, func(f Flag) bool { return f.Key == x.Key }) {
			var keys []string
			for _, f := range flags {
				keys = append(keys, f.Key)
			}
			if len(keys) == 0 {
				return fmt.Errorf("key %s: the kind takes no parameters", x.Key)
			}
			return fmt.Errorf("key %s: no such parameter (want %s)", x.Key, strings.Join(keys, ", "))
		}
		if err := parse(x.Key, x.Value); err != nil {
			return &ParamError{Key: x.Key, Err: err}
		}
	}
	return nil
}

// FileRef is a file a kind's section of a manifest names, and the field
// that names it ("lexical.windows[0].file").
type FileRef struct{ Field, Name string }

// Record is what a manifest records of a kind (Kind.Recorded): its
// parameters as Settings and the files its section names.
type Record struct {
	Settings Settings
	Files    []FileRef
}

// Params are a kind's build parameters: a value of the kind's own type
// (dense.Params, bm25.Config), which its package makes and its NewBuilder
// takes. A build lists the kinds it makes by their parameters
// (msrag.Config.Channels); Kind.Params gives a kind's defaults.
type Params interface {
	// Kind is the kind the parameters are of.
	Kind() Kind
	// Settings checks the parameters and returns what a build with them
	// records, as the kind's Recorded reads them back: alike for equal
	// parameters. Parameters out of range are an error.
	Settings() (Settings, error)
	// Flags is the table of the kind's parameters that the command line
	// takes (--channel NAME:KEY=VALUE).
	Flags() []Flag
	// Parse returns the parameters with settings keyed as Flags applied;
	// an unknown key or a bad value is an error naming the key
	// ([ParseFlags]).
	Parse(s Settings) (Params, error)
}

// ErrNoModel is wrapped by the error for what needs a model (a query
// embedding, a channel that searches by vectors) asked of an index built
// without one.
var ErrNoModel = errors.New("the index has no model")

// Defaults returns the parameters of the kinds a build makes when it is
// asked for none: each registered kind's defaults whose Traits.Default
// says so for a build with (model true) or without a model.
func Defaults(model bool) []Params {
	var out []Params
	for _, k := range Kinds() {
		if k.Traits().Default.For(model) {
			out = append(out, k.Params())
		}
	}
	return out
}

// ModelChecker is a kind's Params that depend on the model's vectors (a
// FAISS factory's sub-quantizers divide their dimension): CheckModel says
// whether they suit vectors of dims, before a build starts.
type ModelChecker interface {
	CheckModel(dims int) error
}

// ParamError is a kind's error about one of its parameters as the command
// line gave it: the key and what is wrong with the value.
type ParamError struct {
	Key string
	Err error
}

func (e *ParamError) Error() string { return "key " + e.Key + " " + e.Err.Error() }
func (e *ParamError) Unwrap() error { return e.Err }
