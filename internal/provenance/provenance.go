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
)

// Set by the linker (-X) where the build information has no VCS data.
var (
	revision string
	modified string
)

// Build describes the build and libraries a result was produced with.
type Build struct {
	// Module is the main module's path and Version its version:
	// "(devel)" for a build from a source tree rather than a release.
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision is the source revision (git commit); empty when the binary
	// does not know it.
	Revision string `json:"vcs_revision,omitempty"`
	// Time is the revision's commit time (RFC 3339), when the build
	// information has it.
	Time string `json:"vcs_time,omitempty"`
	// Modified says whether the source tree had uncommitted changes; nil
	// when unknown.
	Modified *bool `json:"vcs_modified"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
	// ONNXRuntime is the version the loaded ONNX Runtime library reports
	// (its C API's GetVersionString); empty when no model ran in-process.
	ONNXRuntime string `json:"onnxruntime_version,omitempty"`
	// FAISS is the version of the FAISS the binary links (statically, with
	// the headers of the same installation) and FAISSOptions what that
	// library reports of its compilation (faiss::get_compile_options).
	FAISS        string `json:"faiss_version,omitempty"`
	FAISSOptions string `json:"faiss_compile_options,omitempty"`
}

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

// String is the version in one line: "(devel) 0123abcd... (modified)",
// "(devel) unknown revision" when the revision is not known.
func (b Build) String() string {
	s := b.Version
	switch {
	case b.Revision == "":
		return s + " unknown revision"
	case b.Modified == nil:
		return s + " " + b.Revision + " (modified: unknown)"
	case *b.Modified:
		return s + " " + b.Revision + " (modified)"
	}
	return s + " " + b.Revision
}
