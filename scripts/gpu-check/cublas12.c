// libcublas.so.12 for a machine that has cuBLAS 13 only: FAISS 1.15.0's GPU
// library (the faiss-gpu wheel, CUDA 12) calls these eight cuBLAS
// functions, declared alike in cuBLAS 12.9 and 13.0; each is forwarded to
// the same function of libcublas.so.13, loaded at the first call. Built by
// scripts/gpu-check.sh --prepare with cublas12.map, which gives the symbols
// the version libfaiss.so asks for (libcublas.so.12). Enumerations are
// ints and handles, streams pointers, as in cuBLAS's headers.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int status;  // cublasStatus_t
typedef void* handle; // cublasHandle_t

static void* lib13(void) {
    static void* lib;
    if (lib == NULL) {
        lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
        if (lib == NULL) {
            fprintf(stderr, "libcublas.so.12 (forwarding to cuBLAS 13): %s\n", dlerror());
            abort();
        }
    }
    return lib;
}

static void* real(const char* name) {
    void* f = dlsym(lib13(), name);
    if (f == NULL) {
        fprintf(stderr, "libcublas.so.12 (forwarding to cuBLAS 13): no %s: %s\n", name, dlerror());
        abort();
    }
    return f;
}

#define FORWARD(name, params, args)                 \
    status name params {                            \
        static status(*f) params;                   \
        if (f == NULL) f = (status(*) params)real(#name); \
        return f args;                              \
    }

FORWARD(cublasCreate_v2, (handle * h), (h))
FORWARD(cublasDestroy_v2, (handle h), (h))
FORWARD(cublasSetStream_v2, (handle h, void* stream), (h, stream))
FORWARD(cublasGetMathMode, (handle h, int* mode), (h, mode))
FORWARD(cublasSetMathMode, (handle h, int mode), (h, mode))
FORWARD(cublasSgemmEx,
        (handle h, int ta, int tb, int m, int n, int k, const float* alpha, const void* A, int at, int lda,
         const void* B, int bt, int ldb, const float* beta, void* C, int ct, int ldc),
        (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc))
FORWARD(cublasGemmEx,
        (handle h, int ta, int tb, int m, int n, int k, const void* alpha, const void* A, int at, int lda,
         const void* B, int bt, int ldb, const void* beta, void* C, int ct, int ldc, int compute, int algo),
        (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo))
FORWARD(cublasGemmStridedBatchedEx,
        (handle h, int ta, int tb, int m, int n, int k, const void* alpha, const void* A, int at, int lda,
         long long sa, const void* B, int bt, int ldb, long long sb, const void* beta, void* C, int ct, int ldc,
         long long sc, int batch, int compute, int algo),
        (h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc, sc, batch, compute, algo))
