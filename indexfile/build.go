package indexfile

// Build describes the build and libraries a result was produced with: what
// wrote an index (Manifest.Build), as results.json and MTEB result files
// record it too.
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
