package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/msrag/msrag/internal/safefile"
)

// startProfile starts a CPU profile of the whole process into the file
// MSRAG_CPUPROFILE names (for go tool pprof; written as --out files are,
// safefile.CreateOutput), and returns what stops it; without the variable
// it does nothing.
func startProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv("MSRAG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := safefile.CreateOutput(context.Background(), path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Abort()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "msrag: MSRAG_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Commit(); err != nil {
			fmt.Fprintf(stderr, "msrag: MSRAG_CPUPROFILE: %v\n", err)
		}
	}
}
