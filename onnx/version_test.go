package onnx

import (
	"os"
	"regexp"
	"testing"
)

// TestRuntimeVersion checks the loaded library's own version against the
// release scripts/setup.sh installs (the onnxruntime-node package version).
func TestRuntimeVersion(t *testing.T) {
	openModel(t, "all-minilm-l6-v2", Options{})
	setup, err := os.ReadFile("../scripts/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ort_version=(\S+)$`).FindSubmatch(setup)
	if m == nil {
		t.Fatal("scripts/setup.sh sets no ort_version")
	}
	if got := RuntimeVersion(); got != string(m[1]) {
		t.Fatalf("RuntimeVersion() = %q, scripts/setup.sh installs %s", got, m[1])
	}
}
