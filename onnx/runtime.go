package onnx

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// The ONNX Runtime environment is process-wide: the library is loaded (dlopen) and
// initialised once, by the first Open, and never torn down.
var (
	envOnce sync.Once
	envErr  error
	envLib  string
)

// initRuntime loads the library named by LibraryPath and initialises the
// environment, once per process. Later calls return the first call's result.
func initRuntime() error {
	envOnce.Do(func() {
		envLib = LibraryPath()
		if _, err := os.Stat(envLib); err != nil {
			where := "looked in " + strings.Join(LibraryCandidates(), ", ")
			if os.Getenv(EnvORTLib) != "" {
				where = "named by " + EnvORTLib
			}
			envErr = fmt.Errorf("onnx: onnx runtime library %s not found (%s): run make setup, or set %s: %w",
				ortLibName, where, EnvORTLib, ErrRuntime)
			return
		}
		ort.SetSharedLibraryPath(envLib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			envErr = fmt.Errorf("onnx: loading onnx runtime library %s: %v: %w", envLib, err, ErrRuntime)
		}
	})
	return envErr
}

// Device names accepted by Options.Device.
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
	DeviceAuto = "auto"
)

// sessionOptions builds the options of a session on the given device ("cpu" or
// "cuda") with threads intra-op threads. The caller destroys them.
func sessionOptions(o Options, device string, threads int) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx: session options: %v: %w", err, ErrRuntime)
	}
	if err := so.SetIntraOpNumThreads(threads); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("onnx: setting %d threads: %v: %w", threads, err, ErrRuntime)
	}
	if err := so.SetGraphOptimizationLevel(ort.GraphOptimizationLevelEnableAll); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("onnx: setting graph optimization level: %v: %w", err, ErrRuntime)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("onnx: setting inter-op threads: %v: %w", err, ErrRuntime)
	}
	if device == DeviceCUDA {
		if err := appendCUDA(so, o.DeviceID); err != nil {
			so.Destroy()
			return nil, err
		}
	}
	return so, nil
}

func appendCUDA(so *ort.SessionOptions, deviceID int) error {
	cu, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return cudaError(deviceID, envLib, err)
	}
	defer cu.Destroy()
	if err := cu.Update(map[string]string{"device_id": strconv.Itoa(deviceID)}); err != nil {
		return cudaError(deviceID, envLib, err)
	}
	if err := so.AppendExecutionProviderCUDA(cu); err != nil {
		return cudaError(deviceID, envLib, err)
	}
	return nil
}

// cudaProviderLib is the CUDA execution provider's library of a GPU build,
// beside the ONNX Runtime library.
const cudaProviderLib = "libonnxruntime_providers_cuda.so"

// cudaProviderBeside reports whether the CUDA provider's library lies beside
// lib, the ONNX Runtime library: a GPU build has it, a CPU build does not.
func cudaProviderBeside(lib string) bool {
	_, err := os.Stat(filepath.Join(filepath.Dir(lib), cudaProviderLib))
	return err == nil
}

// missingLib finds the shared library the dynamic loader could not open in a
// message such as "... with error: libcublasLt.so.13: cannot open shared object file".
var missingLib = regexp.MustCompile(`(lib[A-Za-z0-9_+.-]+\.so[0-9.]*): cannot open shared object`)

// cudaError explains why the CUDA provider could not be created, from ONNX
// Runtime's message and from whether the provider library lies beside lib, the
// ONNX Runtime library: a GPU build whose provider cannot load the CUDA
// libraries fails with a message that names the provider library too.
func cudaError(deviceID int, lib string, err error) error {
	msg := err.Error()
	low := strings.ToLower(msg)
	var why string
	switch {
	case !cudaProviderBeside(lib) && strings.Contains(low, "libonnxruntime_providers"):
		why = fmt.Sprintf("the ONNX Runtime library %s has no CUDA execution provider beside it "+
			"(libonnxruntime_providers_shared.so, %s): it is a CPU build; "+
			"use a GPU build of ONNX Runtime (set %s)", lib, cudaProviderLib, EnvORTLib)
	case strings.Contains(low, "not supported in this build") || strings.Contains(low, "not enabled in this build") ||
		strings.Contains(low, "provider is not available") || strings.Contains(low, "not compiled"):
		why = fmt.Sprintf("the ONNX Runtime library %s was built without the CUDA execution provider; "+
			"use a GPU build of ONNX Runtime (set %s)", lib, EnvORTLib)
	case strings.Contains(low, ".so") || strings.Contains(low, "cannot open shared object") ||
		strings.Contains(low, "libcu") || strings.Contains(low, "cudnn"):
		why = "CUDA libraries are missing (CUDA runtime, cuBLAS, cuDNN must be on the library path)"
		if m := missingLib.FindStringSubmatch(msg); m != nil {
			why = fmt.Sprintf("the CUDA provider beside %s needs %s, which is not on the library path "+
				"(LD_LIBRARY_PATH must hold the CUDA runtime, cuBLAS and cuDNN of the CUDA version the build is for)", lib, m[1])
		}
	case strings.Contains(low, "no cuda-capable device") || strings.Contains(low, "cudaerrornodevice") ||
		strings.Contains(low, "invalid device ordinal") || strings.Contains(low, "no device"):
		why = fmt.Sprintf("no CUDA device %d", deviceID)
	default:
		why = "ONNX Runtime could not create it"
	}
	return fmt.Errorf("onnx: cuda device %d: %s (onnx runtime: %s): %w", deviceID, why, msg, ErrCUDAUnavailable)
}
