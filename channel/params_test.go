package channel_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/msrag/msrag/channel"
)

// TestParseSettings checks the parameters of --channel NAME:...: pairs in
// order, values that hold commas, and the errors that name the piece.
func TestParseSettings(t *testing.T) {
	s, err := channel.ParseSettings("factory=IVF1024,Flat, metric = l2,train-size=100")
	want := channel.Settings{{Key: "factory", Value: "IVF1024,Flat"}, {Key: "metric", Value: "l2"}, {Key: "train-size", Value: "100"}}
	if err != nil || s.String() != want.String() {
		t.Fatalf("ParseSettings: %v, %v; want %v", s, err, want)
	}
	for in, msg := range map[string]string{"min": `"min": want key=value`, "=2": `"=2": want key=value`, "a=1,a=2": "key a given twice"} {
		if _, err := channel.ParseSettings(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSettings(%q): %v, want %q", in, err, msg)
		}
	}
}

// TestSettingsDiff checks that a difference names the keys that differ,
// each side's, and nothing when the settings are alike.
func TestSettingsDiff(t *testing.T) {
	a := channel.Settings{{Key: "words", Value: "v1"}, {Key: "min", Value: "1"}, {Key: "weight", Value: "count"}}
	b := channel.Settings{{Key: "words", Value: "v1"}, {Key: "min", Value: "2"}, {Key: "weight", Value: "count"}, {Key: "new", Value: "x"}}
	have, want := a.Diff(b)
	if have.String() != "min=1" || want.String() != "min=2, new=x" {
		t.Errorf("Diff: have %q, want %q", have, want)
	}
	if have, want := a.Diff(a); len(have)+len(want) != 0 {
		t.Errorf("alike settings differ: %v, %v", have, want)
	}
}

// TestParseFlags checks that a key outside the table, and a value its
// parser refuses, are errors naming the key.
func TestParseFlags(t *testing.T) {
	flags := []channel.Flag{{Key: "min"}, {Key: "weight"}}
	parse := func(key, v string) error {
		if v == "bad" {
			return fmt.Errorf("%q: want good", v)
		}
		return nil
	}
	err := channel.ParseFlags(channel.Settings{{Key: "depth", Value: "1"}}, flags, parse)
	if err == nil || err.Error() != "key depth: no such parameter (want min, weight)" {
		t.Errorf("unknown key: %v", err)
	}
	err = channel.ParseFlags(channel.Settings{{Key: "min", Value: "1"}, {Key: "weight", Value: "bad"}}, flags, parse)
	var pe *channel.ParamError
	if !errors.As(err, &pe) || pe.Key != "weight" || err.Error() != `key weight "bad": want good` {
		t.Errorf("bad value: %v", err)
	}
}
