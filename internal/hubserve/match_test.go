package hubserve

import "testing"

// TestMatchAttr: .gitattributes patterns as git matches them (gitattributes(5),
// which defers to gitignore(5) for the pattern rules).
func TestMatchAttr(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.onnx", "model.onnx", true},
		{"*.onnx", "onnx/model.onnx", true},
		{"*.onnx", "model.onnx.json", false},
		{"*tfevents*", "runs/x.tfevents.1", true},
		{"onnx/*.onnx", "onnx/model.onnx", true},
		{"onnx/*.onnx", "a/onnx/model.onnx", false},
		{"/onnx/*.onnx", "onnx/model.onnx", true},
		{"saved_model/**/*", "saved_model/variables/v.index", true},
		{"saved_model/**/*", "saved_model/saved_model.pb", true},
		{"saved_model/**/*", "other/saved_model.pb", false},
		{"**/data/*.bin", "data/x.bin", true},
		{"**/data/*.bin", "a/b/data/x.bin", true},
		{"**/data/*.bin", "a/b/data/c/x.bin", false},
		{"models/**", "models/a/b", true},
		{"*.[jt]sonl", "queries.jsonl", true},
		{"*.[jt]sonl", "queries.tsonl", true},
		{"*.[jt]sonl", "queries.xsonl", false},
	} {
		if got := matchAttr(tc.pattern, tc.path); got != tc.want {
			t.Errorf("matchAttr(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}
