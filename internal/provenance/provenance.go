// Package provenance says what produced a result: the msrag module version,
// the source revision it was built from and whether that tree was modified,
// the Go toolchain, and the versions of the native libraries it ran (ONNX
// Runtime, FAISS). results.json, MTEB result files and index manifests all
// record a [Build], made by [Current] (msrag.CurrentBuild supplies the
// libraries' versions), so a number can be traced to the code that made it.
// The package has no cgo: report and store, which record it, stay pure.
//
// The revision comes from the binary's build information (go build in a git
// checkout stamps vcs.revision and vcs.modified), else from the linker
// flags `make build` sets (go does not stamp a git worktree, and go run and
// go test never stamp):
//
//	-X github.com/msrag/msrag/internal/provenance.revision=REV
//	-X github.com/msrag/msrag/internal/provenance.modified=true|false
//
// Without either the revision is empty and Modified is nil (unknown).
package provenance

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"

	"github.com/msrag/msrag/indexfile"
)

// Set by the linker (-X) where the build information has no VCS data.
var (
	revision string
	modified string
)

// Build describes the build and libraries a result was produced with; it is
// the on-disk schema's type (indexfile.Build), which index manifests record.
type Build = indexfile.Build

// Libraries are the versions of the native libraries, as they report them.
type Libraries struct {
	ONNXRuntime, FAISS, FAISSOptions string
}

// Current returns this binary's provenance with the given library versions.
func Current(libs Libraries) Build {
	b := Build{Version: "unknown", GoVersion: runtime.Version(), ONNXRuntime: libs.ONNXRuntime,
		FAISS: libs.FAISS, FAISSOptions: libs.FAISSOptions}
	if bi, ok := debug.ReadBuildInfo(); ok {
		b.Module, b.Version = bi.Main.Path, bi.Main.Version
		fromSettings(&b, bi.Settings)
	}
	if b.Revision == "" && revision != "" {
		b.Revision = revision
		b.Modified = parseBool(modified)
	}
	return b
}

// fromSettings takes the VCS settings of the build information.
func fromSettings(b *Build, settings []debug.BuildSetting) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = parseBool(s.Value)
		}
	}
}

func parseBool(s string) *bool {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return nil
	}
	return &v
}

// runtimes are the registered reporters of libraries loaded at run time.
var runtimes sync.Map // name -> func() string

// RegisterRuntime registers the function that reports the version of a
// library a package loads at run time: package onnx registers
// "onnxruntime", so that the core reports it without importing onnx.
func RegisterRuntime(name string, version func() string) { runtimes.Store(name, version) }

// RuntimeVersion returns the version the library registered as name reports,
// "" when none is registered.
func RuntimeVersion(name string) string {
	if f, ok := runtimes.Load(name); ok {
		return f.(func() string)()
	}
	return ""
}
