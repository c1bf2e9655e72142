package onnx

import ort "github.com/yalue/onnxruntime_go"

// RuntimeVersion returns the version the loaded ONNX Runtime library reports
// (its C API's GetVersionString, such as "1.30.0"), or "" when no model has
// been opened in this process: the first Open loads the library.
func RuntimeVersion() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}
