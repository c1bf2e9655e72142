package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsThisProgram: README.md's Go example is this program as it
// is, so the example a reader copies is one that go vet and go build check.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "\n```go\n")
	if ok {
		block, _, ok = strings.Cut(block, "```\n")
	}
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	if block != string(src) {
		t.Errorf("README.md's Go example is not examples/quickstart/main.go as it is: copy the file into README.md (or the block into the file)")
	}
}
