package msrag

import (
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/provenance"
)

// BuildInfo says what produced a result: msrag's module version, source
// revision and whether the tree was modified, the Go toolchain, and the
// ONNX Runtime and FAISS versions. Manifests, results.json and MTEB result
// files record it.
type BuildInfo = provenance.Build

// CurrentBuild returns this process's BuildInfo: the binary's build
// information and the versions the native libraries report. ONNX Runtime's
// is empty until a model has been opened (the first one loads the library),
// and without package onnx imported (it registers the reporter).
func CurrentBuild() BuildInfo {
	return provenance.Current(provenance.Libraries{
		ONNXRuntime: provenance.RuntimeVersion("onnxruntime"), FAISS: faiss.Version(), FAISSOptions: faiss.CompileOptions(),
	})
}
