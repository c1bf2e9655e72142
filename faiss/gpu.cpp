// The GPU half of the shim. cgo compiles every .cpp file of the package in
// every build, so the whole body is guarded by MSRAG_FAISS_GPU, which only
// gpu.go (build tag gpu) defines through #cgo CPPFLAGS: the default build
// compiles this file to nothing and never includes a GPU header.
#ifdef MSRAG_FAISS_GPU

#include "gpu.h"
#include "shim_internal.h"

#include <faiss/gpu/GpuAutoTune.h>
#include <faiss/gpu/GpuCloner.h>
#include <faiss/gpu/GpuClonerOptions.h>
#include <faiss/gpu/StandardGpuResources.h>
#include <faiss/gpu/utils/DeviceUtils.h>

extern "C" {

char* msrag_gpu_count(int* n) {
    *n = 0;
    return msrag::guard([&] { *n = faiss::gpu::getNumDevices(); });
}

char* msrag_index_to_gpu(const msrag_index* idx, const int* devices, int ndevices,
                         msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        // One StandardGpuResources (streams, cuBLAS handle, scratch memory)
        // per device; the new msrag_index keeps them alive and deletes the
        // GPU index before them.
        std::vector<std::shared_ptr<void>> keep;
        std::vector<faiss::gpu::GpuResourcesProvider*> providers;
        std::vector<int> devs(devices, devices + ndevices);
        for (int i = 0; i < ndevices; i++) {
            auto res = std::make_shared<faiss::gpu::StandardGpuResources>();
            providers.push_back(res.get());
            keep.push_back(res);
        }
        std::unique_ptr<faiss::Index> gpu;
        if (ndevices == 1) {
            faiss::gpu::GpuClonerOptions opts;
            gpu.reset(faiss::gpu::index_cpu_to_gpu(providers[0], devs[0], idx->index, &opts));
        } else {
            faiss::gpu::GpuMultipleClonerOptions opts;
            opts.shard = true;
            gpu.reset(faiss::gpu::index_cpu_to_gpu_multiple(providers, devs, idx->index, &opts));
        }
        auto* m = new msrag_index(gpu.get());
        gpu.release();
        m->keep = std::move(keep);
        *out = m;
    });
}

char* msrag_index_to_cpu(const msrag_index* idx, msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        std::unique_ptr<faiss::Index> cpu(faiss::gpu::index_gpu_to_cpu(idx->index));
        *out = new msrag_index(cpu.get());
        cpu.release();
    });
}

char* msrag_gpu_set_param(msrag_index* idx, const char* name, double value) {
    return msrag::guard([&] {
        faiss::gpu::GpuParameterSpace ps;
        ps.set_index_parameter(idx->index, name, value);
    });
}

}  // extern "C"

#endif  // MSRAG_FAISS_GPU
