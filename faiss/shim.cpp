// The msrag FAISS shim: one extern "C" wrapper per operation of shim.h. Each
// wrapper runs its body under msrag::guard, which catches every exception and
// returns its message as the function's result.
//
// Only API present in both FAISS 1.7.3 and the 1.8+ releases is used.

#include "shim_internal.h"

#include <faiss/AutoTune.h>
#include <faiss/IndexFlatCodes.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>

#include <omp.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <sys/stat.h>

// OpenBLAS's own thread pool (FAISS's Flat search goes through sgemm for
// batches of 20 queries or more).
extern "C" void openblas_set_num_threads(int num_threads);

namespace {

// Threads chosen with msrag_set_threads; 0 means the OpenMP default captured
// when the library was loaded (OMP_NUM_THREADS or the number of CPUs).
std::atomic<int> g_threads{0};
const int g_default_threads = omp_get_max_threads();

// Counts read from an index file are checked against what is left of the
// input before FAISS allocates for them; see BoundedReader.
constexpr uint64_t kSmallCount = uint64_t{1} << 24;

// BoundedReader is the base of the readers below: it knows how many bytes are
// left and refuses a single 8-byte value larger than both that and kSmallCount.
// FAISS reads every vector length as one 8-byte value and then resizes the
// vector before reading the data, so a corrupt length would otherwise make it
// allocate (and zero) up to a terabyte before noticing the input is short. The
// only legitimate 8-byte values above the bound are counts of data stored in
// another file (on-disk inverted lists), which this reader does not support.
struct BoundedReader : faiss::IOReader {
    size_t remaining = 0;
    size_t offset = 0;

    virtual size_t raw_read(void* ptr, size_t bytes) = 0;

    size_t operator()(void* ptr, size_t size, size_t nitems) override {
        if (size == 0 || nitems == 0) {
            return 0;
        }
        size_t n = nitems;
        if (n > remaining / size) {
            n = remaining / size;
        }
        size_t got = raw_read(ptr, n * size);
        n = got / size;
        remaining -= got;
        offset += got;
        if (size == 8 && nitems == 1 && n == 1) {
            uint64_t v;
            std::memcpy(&v, ptr, 8);
            if (v > remaining && v > kSmallCount) {
                char msg[200];
                std::snprintf(
                        msg,
                        sizeof msg,
                        "corrupt index: count %llu at byte %zu exceeds the %zu bytes left",
                        (unsigned long long)v,
                        offset - 8,
                        remaining);
                throw faiss::FaissException(msg);
            }
        }
        return n;
    }
};

struct MemoryReader : BoundedReader {
    const uint8_t* data;
    MemoryReader(const uint8_t* d, size_t len) : data(d) {
        remaining = len;
        name = "bytes";
    }
    size_t raw_read(void* ptr, size_t bytes) override {
        std::memcpy(ptr, data + offset, bytes);
        return bytes;
    }
};

struct FileReader : BoundedReader {
    FILE* f = nullptr;
    explicit FileReader(const char* path) {
        name = path;
        f = std::fopen(path, "rb");
        if (f == nullptr) {
            throw faiss::FaissException(
                    std::string("open ") + path + ": " + std::strerror(errno));
        }
        struct stat st;
        if (fstat(::fileno(f), &st) != 0) {
            int e = errno;
            std::fclose(f);
            throw faiss::FaissException(
                    std::string("stat ") + path + ": " + std::strerror(e));
        }
        remaining = size_t(st.st_size);
    }
    ~FileReader() override {
        if (f != nullptr) {
            std::fclose(f);
        }
    }
    size_t raw_read(void* ptr, size_t bytes) override {
        return std::fread(ptr, 1, bytes, f);
    }
};

void check(bool ok, const char* what) {
    if (!ok) {
        throw faiss::FaissException(std::string("corrupt index: ") + what);
    }
}

// validate checks the invariants that FAISS's search relies on without
// checking itself, for the index types msrag builds (Flat and other
// flat-code indices, IVF, HNSW, pre-transforms and ID maps). A file that
// breaks them would otherwise read memory out of bounds at search time.
void validate(const faiss::Index* idx, int depth = 0) {
    check(idx != nullptr, "missing index");
    check(depth < 16, "indices nested too deep");
    check(idx->d > 0, "dimension is not positive");
    check(idx->ntotal >= 0, "negative vector count");
    if (auto f = dynamic_cast<const faiss::IndexFlatCodes*>(idx)) {
        check(f->code_size > 0, "code size is not positive");
        check(f->codes.size() == size_t(f->ntotal) * f->code_size,
              "flat codes do not match vector count times code size");
        return;
    }
    if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(idx)) {
        validate(ivf->quantizer, depth + 1);
        check(ivf->quantizer->d == ivf->d, "IVF quantizer dimension differs");
        check(!ivf->is_trained || size_t(ivf->quantizer->ntotal) == ivf->nlist,
              "IVF quantizer size differs from nlist");
        check(ivf->invlists != nullptr, "IVF without inverted lists");
        check(ivf->invlists->nlist == ivf->nlist, "inverted lists count differs from nlist");
        if (auto al = dynamic_cast<const faiss::ArrayInvertedLists*>(ivf->invlists)) {
            size_t total = 0;
            for (size_t i = 0; i < ivf->nlist; i++) {
                check(al->codes[i].size() == al->ids[i].size() * al->code_size,
                      "inverted list codes do not match its ids");
                total += al->ids[i].size();
            }
            check(total == size_t(ivf->ntotal), "inverted lists do not hold ntotal vectors");
        }
        return;
    }
    if (auto h = dynamic_cast<const faiss::IndexHNSW*>(idx)) {
        validate(h->storage, depth + 1);
        check(h->storage->d == h->d, "HNSW storage dimension differs");
        check(h->storage->ntotal == h->ntotal, "HNSW storage size differs");
        const faiss::HNSW& g = h->hnsw;
        size_t n = size_t(h->ntotal);
        size_t nlev = g.cum_nneighbor_per_level.size();
        check(nlev >= 2, "HNSW without levels");
        check(g.levels.size() == n, "HNSW levels do not match vector count");
        check(g.offsets.size() == n + 1 && g.offsets[0] == 0, "HNSW offsets malformed");
        for (size_t i = 0; i < n; i++) {
            int l = g.levels[i];
            check(l >= 1 && size_t(l) < nlev, "HNSW level out of range");
            check(g.offsets[i + 1] >= g.offsets[i] &&
                          g.offsets[i + 1] - g.offsets[i] ==
                                  size_t(g.cum_nneighbor_per_level[l]),
                  "HNSW offsets do not match levels");
            check(g.max_level >= l - 1, "HNSW level above max level");
        }
        check(g.offsets[n] == g.neighbors.size(), "HNSW neighbor table size differs");
        for (size_t i = 0; i < g.neighbors.size(); i++) {
            check(g.neighbors[i] >= -1 && int64_t(g.neighbors[i]) < h->ntotal,
                  "HNSW neighbor out of range");
        }
        check(g.max_level >= -1 && size_t(g.max_level + 1) < nlev, "HNSW max level out of range");
        check(n == 0 || (g.entry_point >= 0 && int64_t(g.entry_point) < h->ntotal),
              "HNSW entry point out of range");
        return;
    }
    if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(idx)) {
        validate(p->index, depth + 1);
        check(p->index->ntotal == p->ntotal, "pre-transform size differs");
        int d = p->d;
        for (auto vt : p->chain) {
            check(vt != nullptr && vt->d_in == d, "transform chain dimensions differ");
            d = vt->d_out;
        }
        check(d == p->index->d, "transform output dimension differs from the index");
        return;
    }
    if (auto m = dynamic_cast<const faiss::IndexIDMap*>(idx)) {
        validate(m->index, depth + 1);
        check(m->index->d == m->d, "ID map dimension differs");
        check(m->index->ntotal == m->ntotal && m->id_map.size() == size_t(m->ntotal),
              "ID map size differs");
        return;
    }
}

msrag_index* wrap_read(faiss::Index* raw) {
    std::unique_ptr<faiss::Index> owned(raw);
    validate(owned.get());
    auto* out = new msrag_index(owned.get());
    owned.release();
    return out;
}

}  // namespace

void msrag::apply_threads() {
    int n = g_threads.load(std::memory_order_relaxed);
    omp_set_num_threads(n > 0 ? n : g_default_threads);
}

extern "C" {

char* msrag_index_new(int dim, const char* factory, int metric, msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        std::unique_ptr<faiss::Index> idx(
                faiss::index_factory(dim, factory, faiss::MetricType(metric)));
        *out = new msrag_index(idx.get());
        idx.release();
    });
}

void msrag_index_free(msrag_index* idx) {
    delete idx;
}

char* msrag_index_train(msrag_index* idx, int64_t n, const float* x) {
    return msrag::guard([&] { idx->index->train(n, x); });
}

char* msrag_index_add(msrag_index* idx, int64_t n, const float* x) {
    return msrag::guard([&] { idx->index->add(n, x); });
}

char* msrag_index_search(const msrag_index* idx, int64_t n, const float* x, int64_t k,
                       float* distances, int64_t* labels) {
    return msrag::guard([&] { idx->index->search(n, x, k, distances, labels); });
}

char* msrag_index_reset(msrag_index* idx) {
    return msrag::guard([&] { idx->index->reset(); });
}

char* msrag_index_set_param(msrag_index* idx, const char* name, double value) {
    return msrag::guard([&] {
        faiss::ParameterSpace ps;
        ps.set_index_parameter(idx->index, name, value);
    });
}

int64_t msrag_index_ntotal(const msrag_index* idx) {
    return idx->index->ntotal;
}

int msrag_index_dim(const msrag_index* idx) {
    return idx->index->d;
}

int msrag_index_is_trained(const msrag_index* idx) {
    return idx->index->is_trained ? 1 : 0;
}

int msrag_index_metric(const msrag_index* idx) {
    return int(idx->index->metric_type);
}

char* msrag_index_write_file(const msrag_index* idx, const char* path) {
    return msrag::guard([&] { faiss::write_index(idx->index, path); });
}

char* msrag_index_write_bytes(const msrag_index* idx, uint8_t** buf, size_t* len) {
    *buf = nullptr;
    *len = 0;
    return msrag::guard([&] {
        faiss::VectorIOWriter w;
        faiss::write_index(idx->index, &w);
        uint8_t* b = static_cast<uint8_t*>(std::malloc(w.data.size() > 0 ? w.data.size() : 1));
        if (b == nullptr) {
            throw std::bad_alloc();
        }
        std::memcpy(b, w.data.data(), w.data.size());
        *buf = b;
        *len = w.data.size();
    });
}

char* msrag_index_read_file(const char* path, msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        FileReader r(path);
        *out = wrap_read(faiss::read_index(&r));
    });
}

char* msrag_index_read_bytes(const uint8_t* buf, size_t len, msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        MemoryReader r(buf, len);
        *out = wrap_read(faiss::read_index(&r));
    });
}

void msrag_set_threads(int n) {
    g_threads.store(n > 0 ? n : 0, std::memory_order_relaxed);
    openblas_set_num_threads(n > 0 ? n : g_default_threads);
}

int msrag_get_threads(void) {
    int n = g_threads.load(std::memory_order_relaxed);
    return n > 0 ? n : g_default_threads;
}

const char* msrag_faiss_version(void) {
#define MSRAG_STR2(x) #x
#define MSRAG_STR(x) MSRAG_STR2(x)
    return MSRAG_STR(FAISS_VERSION_MAJOR) "." MSRAG_STR(FAISS_VERSION_MINOR) "." MSRAG_STR(
            FAISS_VERSION_PATCH);
}

}  // extern "C"
