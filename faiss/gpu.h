// C interface of the GPU half of the shim (gpu.cpp), used only by gpu.go
// (build tag gpu). Conventions as in shim.h: NULL or a malloc'ed message the
// caller frees; handles returned through out are owned by the caller.
#ifndef MSRAG_FAISS_GPU_H
#define MSRAG_FAISS_GPU_H

#include "shim.h"

#ifdef __cplusplus
extern "C" {
#endif

char* msrag_gpu_count(int* n);
// msrag_index_to_gpu copies idx to devices[0..ndevices): one device gets a
// whole copy, several get one shard each. The result owns its GPU resources.
char* msrag_index_to_gpu(const msrag_index* idx, const int* devices, int ndevices,
                         msrag_index** out);
char* msrag_index_to_cpu(const msrag_index* idx, msrag_index** out);
char* msrag_gpu_set_param(msrag_index* idx, const char* name, double value);

#ifdef __cplusplus
}
#endif

#endif
