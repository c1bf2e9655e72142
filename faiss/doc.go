// Package faiss is msrag's own cgo binding to FAISS, the vector search
// library: enough of it to build, search, save and load the per-window
// indices of a multi-scale index.
//
// # Moving parts
//
//   - shim.h / shim.cpp: a small C++ layer with one extern "C" function per
//     operation. Each runs its body under a guard that catches every C++
//     exception and returns the message as the function's result (NULL on
//     success), so nothing is kept in a per-thread "last error". The message
//     is allocated with malloc and freed on the Go side by the one function
//     that turns shim errors into Go errors.
//   - index.go: the [Index] type, the only file of the CPU build that imports
//     "C". Arguments are checked in Go before any native call (dimension,
//     vector lengths that are not a multiple of it, k < 1, result slices
//     that are too short, untrained or closed indices), so FAISS sees only
//     well-formed calls.
//   - budget.cpp and precheck.go: the defences for reading untrusted files
//     (below).
//   - gpu.go / gpu.cpp (build tag gpu) and gpu_stub.go (without it): moving an
//     index to one or several GPUs and back. The stub has the same API and
//     returns [ErrGPUUnavailable]. gpu.cpp is compiled in every build, as cgo
//     compiles every .cpp file of a package, but its body is inside
//     #ifdef MSRAG_FAISS_GPU, a macro only gpu.go's #cgo CPPFLAGS define, so
//     the default build never sees a GPU header.
//
// # Building
//
// The package links FAISS and OpenBLAS with OpenMP (-lfaiss -lopenblas
// -fopenmp). On Debian 12 they are libfaiss-dev (1.7.3, a static library) and
// libopenblas-dev, installed by scripts/setup.sh. The shim uses only API that
// FAISS 1.7.3 and the 1.8+ releases share. A GPU build needs a FAISS built
// with CUDA, the tag gpu, and CGO_CPPFLAGS / CGO_LDFLAGS pointing at its and
// CUDA's headers and libraries: make build GPU=1 links FAISS 1.15.0's GPU
// library from the faiss-gpu wheel, with the OpenBLAS and libgomp it bundles
// taking the place of -lopenblas and -fopenmp's (docs/gpu.md).
//
// # Ownership
//
// An [Index] owns its native index from [New], [ReadFile], [ReadBytes],
// [Index.ToGPU] or [Index.ToCPU] until [Index.Close], which is safe to call
// twice. A cleanup registered with runtime.AddCleanup frees an index that
// was dropped without Close, as a safety net only: native memory is invisible
// to the Go garbage collector, so it may run late. Slices passed in are read
// (or, for [Index.SearchInto], written) during the call and never kept;
// slices returned belong to the caller.
//
// # Concurrency and threads
//
// FAISS's CPU search is const and safe for concurrent readers, so
// [Index.Search] and [Index.SearchInto] hold a read lock and may run from
// many goroutines at once; Train, Add, Reset, SetParam and Close hold the
// write lock and wait for searches in flight. GPU indices take the write
// lock for searches too, since one set of GPU resources serves one caller at
// a time.
//
// Inside one call FAISS parallelises with OpenMP (over queries, or over the
// database for a single query in some index types) and, for batches of 20 or
// more queries on a flat index, through OpenBLAS's matrix multiply, which has
// its own thread pool. OpenMP keeps its team size per OS thread, and Go runs
// each native call on whichever OS thread is free, so the shim re-applies the
// count chosen with [SetThreads] at the start of every call; [SetThreads]
// also sizes OpenBLAS's pool. Each OS thread that enters an OpenMP region
// gets its own pool of worker threads, so G goroutines searching at once
// with T threads each run up to G x T threads. When many goroutines search
// small batches concurrently, SetThreads(1) and let the goroutines provide
// the parallelism; when one goroutine searches large batches, leave the
// default (OMP_NUM_THREADS, or all CPUs). Idle OpenMP workers spin for a
// while before sleeping (OMP_WAIT_POLICY=passive stops that), which shows as
// CPU time between calls.
//
// # Reading untrusted files
//
// FAISS's reader trusts lengths and shapes found in its input. For a
// corrupt or truncated file, ReadFile and ReadBytes return an error wrapping
// [ErrCorrupt] instead of crashing or exhausting memory:
//
//   - the shim reads through its own bounded reader, so a truncated input is
//     an error, and bytes left over after the index are too;
//   - while FAISS reads, every C++ allocation on that thread is charged to a
//     budget of 16 MiB plus four times the input size, so a corrupt length
//     cannot make it allocate gigabytes before it notices the input is
//     short. For this budget.cpp replaces the global C++ operator new and
//     delete of the whole program with malloc/free-based ones that cost one
//     thread-local load per allocation outside a read;
//   - after reading, the shim checks the invariants that search relies on
//     for flat, IVF, PQ, HNSW, ID-map and pre-transform indices (sizes that
//     agree, neighbour ids in range, supported metric, nprobe, efSearch), and
//     builds IVF-PQ's precomputed tables only then;
//   - precheck.go checks product-quantizer shapes in Go before FAISS reads
//     them, because FAISS 1.7.3 divides by the sub-quantizer count before
//     checking it (SIGFPE, which nothing can catch).
//
// Index types outside that list rely on FAISS's own checks. FAISS leaks the
// parts of an index it had read when a read fails, bounded by the budget.
package faiss
