// C interface of the msrag FAISS shim (shim.cpp). Every function that can fail
// returns NULL on success and, on failure, the error message, allocated with
// malloc; the caller frees it with free(). No function lets a C++ exception
// escape and none keeps a per-thread "last error". (The message is the return
// value rather than an out-parameter because a pointer to a Go variable passed
// to C escapes to the heap: an out-parameter would cost an allocation per
// search.)
//
// An index handle (msrag_index*) is owned by the caller from the function that
// returned it until msrag_index_free.
#ifndef MSRAG_FAISS_SHIM_H
#define MSRAG_FAISS_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct msrag_index msrag_index;

// Metric codes, equal to faiss::MetricType.
enum { MSRAG_METRIC_INNER_PRODUCT = 0, MSRAG_METRIC_L2 = 1 };

char* msrag_index_new(int dim, const char* factory, int metric, msrag_index** out);
void msrag_index_free(msrag_index* idx);

char* msrag_index_train(msrag_index* idx, int64_t n, const float* x);
char* msrag_index_add(msrag_index* idx, int64_t n, const float* x);
char* msrag_index_search(const msrag_index* idx, int64_t n, const float* x, int64_t k,
                       float* distances, int64_t* labels);
char* msrag_index_reset(msrag_index* idx);
char* msrag_index_set_param(msrag_index* idx, const char* name, double value);

int64_t msrag_index_ntotal(const msrag_index* idx);
int msrag_index_dim(const msrag_index* idx);
int msrag_index_is_trained(const msrag_index* idx);
int msrag_index_metric(const msrag_index* idx);

// msrag_index_write_stream writes the index in FAISS's format through the Go
// io.Writer behind the cgo handle (msragGoWrite, stream.go).
char* msrag_index_write_stream(const msrag_index* idx, uintptr_t handle);
// msrag_index_read_stream reads an index of exactly len bytes through the Go
// io.Reader behind the cgo handle (msragGoRead).
char* msrag_index_read_stream(uintptr_t handle, size_t len, msrag_index** out);

// msrag_index_is_flat is 1 for an exact flat index (faiss::IndexFlat).
int msrag_index_is_flat(const msrag_index* idx);
// msrag_index_rescore writes into distances the score of each of the n*k
// (query, label) pairs of a flat index, computed one pair at a time (0 for a
// label < 0 or out of range).
char* msrag_index_rescore(const msrag_index* idx, int64_t n, const float* x, int64_t k,
                          const int64_t* labels, float* distances);

// Thread count applied before every FAISS call (OpenMP and OpenBLAS); n < 1
// restores the libraries' defaults.
void msrag_set_threads(int n);
int msrag_get_threads(void);

const char* msrag_faiss_version(void);
// msrag_faiss_compile_options returns faiss::get_compile_options() of the
// linked library (such as "OPTIMIZE AVX2 "), malloc'd: the caller frees it;
// NULL if it failed.
char* msrag_faiss_compile_options(void);

#ifdef __cplusplus
}
#endif

#endif
