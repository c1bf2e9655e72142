package msrag

import (
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/provenance"
	"github.com/msrag/msrag/onnx"
)

// BuildInfo says what produced a result: msrag's module version, source
// revision and whether the tree was modified, the Go toolchain, and the
// ONNX Runtime and FAISS versions. Manifests, results.json and MTEB result
// files record it.
type BuildInfo = provenance.Build

// CurrentBuild returns this process's BuildInfo: the binary's build
// information and the versions the native libraries report. ONNX Runtime's
// is empty until a model has been opened (the first one loads the library).
func CurrentBuild() BuildInfo {
	return provenance.Current(provenance.Libraries{
		ONNXRuntime: onnx.RuntimeVersion(), FAISS: faiss.Version(), FAISSOptions: faiss.CompileOptions(),
	})
}
