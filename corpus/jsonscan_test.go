package corpus

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var testKeys = [3]string{"_id", "title", "text"}

func TestScanObject(t *testing.T) {
	tests := []struct {
		name, line string
		want       [3]jsonField // compared on present, null, isStr, str, num
		bad        bool
	}{
		{"plain", `{"_id":"a","title":"T","text":"body"}`, [3]jsonField{{present: true, isStr: true, str: "a"}, {present: true, isStr: true, str: "T"}, {present: true, isStr: true, str: "body"}}, false},
		{"escapes", `{"text":"q\"b\\s\/\n\t\u00e9\ud83d\ude00"}`, [3]jsonField{{}, {}, {present: true, isStr: true, str: "q\"b\\s/\n\té😀"}}, false},
		{"lone surrogate", `{"text":"x\ud800y"}`, [3]jsonField{{}, {}, {present: true, isStr: true, str: "x\uFFFDy"}}, false},
		{"skips others", ` { "metadata" : {"a":[1,"}",{"b":null}]}, "n":-1.5e3,"t":true, "_id" : 12 , "text":null } `, [3]jsonField{{present: true, num: "12"}, {}, {present: true, null: true}}, false},
		{"empty object", `{}`, [3]jsonField{}, false},
		{"raw utf8", `{"text":"délta ε"}`, [3]jsonField{{}, {}, {present: true, isStr: true, str: "délta ε"}}, false},
		{"unterminated", `{"text":"abc`, [3]jsonField{}, true},
		{"trailing", `{"text":"abc"} x`, [3]jsonField{}, true},
		{"no colon", `{"text" "abc"}`, [3]jsonField{}, true},
		{"control char", "{\"text\":\"a\tb\"}", [3]jsonField{}, true},
		{"bad escape", `{"text":"a\qb"}`, [3]jsonField{}, true},
		{"not an object", `["a"]`, [3]jsonField{}, true},
		{"null line", ` null `, [3]jsonField{}, true},
		{"unclosed", `{"_id":"a"`, [3]jsonField{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s scanner
			var got [3]jsonField
			err := s.scanObject([]byte(tt.line), &testKeys, &got)
			if (err != nil) != tt.bad {
				t.Fatalf("err = %v, want error: %v", err, tt.bad)
			}
			if !tt.bad && got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// FuzzScanObject checks the scanner against encoding/json: whenever
// encoding/json decodes a line to an object (not null, which it also
// accepts into a map), the scanner accepts it too and
// finds the same strings, nulls and absent keys.
func FuzzScanObject(f *testing.F) {
	f.Add(`{"_id":"a","title":"T","text":"body"}`)
	f.Add(`{"text":"q\"b\\s\/\n\t\u00e9\ud83d\ude00 \ud800\u0041","_id":"x","metadata":{"k":["}",1]}}`)
	f.Add(`{"_id":null,"text":"t","title":""}`)
	f.Fuzz(func(t *testing.T, line string) {
		if !utf8.ValidString(line) {
			return // the reader repairs UTF-8 before scanning
		}
		var decoded any
		if json.Unmarshal([]byte(line), &decoded) != nil {
			return
		}
		want, ok := decoded.(map[string]any)
		if !ok {
			return // null, an array or a scalar: not an object, which the scanner refuses
		}
		var s scanner
		var got [3]jsonField
		if err := s.scanObject([]byte(line), &testKeys, &got); err != nil {
			t.Fatalf("scanner rejects what encoding/json accepts: %v", err)
		}
		for k, key := range testKeys {
			v, ok := want[key]
			g := got[k]
			switch v := v.(type) {
			case nil:
				if ok != g.present || (ok && !g.null) {
					t.Fatalf("key %q: json %v (present %v), scanner %+v", key, v, ok, g)
				}
			case string:
				if !g.isStr || g.str != v {
					t.Fatalf("key %q: json %q, scanner %+v", key, v, g)
				}
			default:
				if g.isStr || g.null || !g.present {
					t.Fatalf("key %q: json %v, scanner %+v", key, v, g)
				}
			}
		}
	})
}
