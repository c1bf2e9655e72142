package faiss

import "errors"

// Sentinel errors. Every error this package returns wraps one of them, so
// callers can test with [errors.Is]; the message says which operation and
// which input failed.
var (
	// ErrClosed: the index was used after [Index.Close].
	ErrClosed = errors.New("index is closed")
	// ErrArgument: an argument was rejected before any native call (empty
	// factory string, non-positive dimension, vector data whose length is not
	// a multiple of the dimension, k < 1, too-short result slices, ...).
	ErrArgument = errors.New("invalid argument")
	// ErrNotTrained: vectors were added to or searched in an index that needs
	// training (IVF, PQ, ...) before [Index.Train] was called.
	ErrNotTrained = errors.New("index is not trained")
	// ErrNative: FAISS itself reported an error; the message is FAISS's.
	ErrNative = errors.New("native error")
	// ErrCorrupt: a serialised index could not be read back.
	ErrCorrupt = errors.New("corrupt or unreadable index")
	// ErrGPUUnavailable: the package was built without the gpu build tag, so
	// no GPU operation is available.
	ErrGPUUnavailable = errors.New("built without GPU support (build tag gpu)")
	// ErrOnGPU: the operation needs a CPU index (for example writing to disk);
	// call [Index.ToCPU] first.
	ErrOnGPU = errors.New("index is on a GPU")
)
