package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startProfile starts a CPU profile of the whole process into the file
// MSRAG_CPUPROFILE names (for go tool pprof), and returns what stops it;
// without the variable it does nothing.
func startProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv("MSRAG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "msrag: MSRAG_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "msrag: MSRAG_CPUPROFILE: %v\n", err)
		}
	}
}
