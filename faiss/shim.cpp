// The msrag FAISS shim: one extern "C" wrapper per operation of shim.h. Each
// wrapper runs its body under msrag::guard, which catches every exception and
// returns its message as the function's result.
//
// Only API present in both FAISS 1.7.3 and the 1.8+ releases is used.

#include "shim_internal.h"
#include "_cgo_export.h"

#include <faiss/AutoTune.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexFlatCodes.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexPQ.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <faiss/utils/distances.h>
#include <faiss/utils/utils.h>
#include <faiss/invlists/InvertedLists.h>

#include <omp.h>

#include <atomic>
#include <type_traits>
#include <utility>
#include <cerrno>
#include <cstdio>

// OpenBLAS's own thread pool (FAISS's Flat search goes through sgemm for
// batches of 20 queries or more).
extern "C" void openblas_set_num_threads(int num_threads);

namespace {

// Threads chosen with msrag_set_threads; 0 means the OpenMP default captured
// when the library was loaded (OMP_NUM_THREADS or the number of CPUs).
std::atomic<int> g_threads{0};
const int g_default_threads = omp_get_max_threads();

// BoundedReader is the base of the readers below: it reads at most the bytes
// the input holds and keeps the offset for messages.
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
        remaining -= got;
        offset += got;
        return got / size;
    }
};

// GoReader reads through the Go reader behind a cgo handle (msragGoRead in
// stream.go); it returns fewer bytes than asked only at the end of the input
// or on an error, which the Go side keeps.
struct GoReader : BoundedReader {
    uintptr_t handle;
    GoReader(uintptr_t h, size_t len) : handle(h) {
        remaining = len;
        name = "stream";
    }
    size_t raw_read(void* ptr, size_t bytes) override {
        return msragGoRead(handle, ptr, bytes);
    }
};

// GoWriter writes through the Go writer behind a cgo handle (msragGoWrite);
// a short count makes FAISS's writer throw, and the Go side keeps the error.
struct GoWriter : faiss::IOWriter {
    uintptr_t handle;
    explicit GoWriter(uintptr_t h) : handle(h) { name = "stream"; }
    size_t operator()(const void* ptr, size_t size, size_t nitems) override {
        if (size == 0 || nitems == 0) {
            return nitems;
        }
        if (msragGoWrite(handle, const_cast<void*>(ptr), size * nitems) != 0) {
            return 0;
        }
        return nitems;
    }
};

void check(bool ok, const char* what) {
    if (!ok) {
        throw faiss::FaissException(std::string("corrupt index: ") + what);
    }
}

// Largest HNSW efSearch, efConstruction and upper beam accepted from a file.
constexpr int kMaxEf = 1 << 20;

// upper_beam_ok checks HNSW::upper_beam where the FAISS release has it (1.7
// does; later releases dropped the field).
template <typename H, typename = void>
struct has_upper_beam : std::false_type {};
template <typename H>
struct has_upper_beam<H, std::void_t<decltype(std::declval<const H&>().upper_beam)>>
        : std::true_type {};

template <typename H>
bool upper_beam_ok(const H& g) {
    if constexpr (has_upper_beam<H>::value) {
        return g.upper_beam >= 1 && g.upper_beam <= kMaxEf;
    } else {
        return true;
    }
}

void check_pq(const faiss::ProductQuantizer& pq, int d, size_t code_size) {
    check(pq.M >= 1 && pq.nbits >= 1 && pq.nbits <= 16, "PQ shape out of range");
    check(pq.d == size_t(d) && pq.dsub * pq.M == pq.d, "PQ dimensions differ from the index");
    check(pq.ksub == (size_t(1) << pq.nbits), "PQ sub-quantizer size differs from its bits");
    check(pq.code_size == code_size && pq.code_size == (pq.M * pq.nbits + 7) / 8,
          "PQ code size differs");
    check(pq.centroids.size() == pq.d * pq.ksub, "PQ centroid table size differs");
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
    // Search throws for an unsupported metric inside an OpenMP region,
    // where an exception ends the process; only IVF and HNSW are limited
    // to inner product and L2 here, flat indices support more.
    const bool ip_or_l2 = idx->metric_type == faiss::METRIC_INNER_PRODUCT ||
            idx->metric_type == faiss::METRIC_L2;
    check(ip_or_l2 || idx->metric_type == faiss::METRIC_L1 ||
                  idx->metric_type == faiss::METRIC_Linf || idx->metric_type == faiss::METRIC_Lp ||
                  idx->metric_type == faiss::METRIC_Canberra ||
                  idx->metric_type == faiss::METRIC_BrayCurtis ||
                  idx->metric_type == faiss::METRIC_JensenShannon,
          "unknown metric");
    if (auto f = dynamic_cast<const faiss::IndexFlatCodes*>(idx)) {
        check(f->code_size > 0, "code size is not positive");
        // Compared by division: a corrupt count can wrap the product around.
        check(f->codes.size() % f->code_size == 0 &&
                      f->codes.size() / f->code_size == size_t(f->ntotal),
              "flat codes do not match vector count times code size");
        return;
    }
    if (auto pq = dynamic_cast<const faiss::IndexPQ*>(idx)) {
        check_pq(pq->pq, pq->d, pq->code_size);
    }
    if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(idx)) {
        check(ip_or_l2, "IVF metric is neither inner product nor L2");
        check(ivf->nlist >= 1, "IVF without lists");
        check(ivf->nprobe >= 1 && ivf->nprobe <= ivf->nlist, "IVF nprobe out of range");
        int mode = ivf->parallel_mode & ~ivf->PARALLEL_MODE_NO_HEAP_INIT;
        check(mode >= 0 && mode <= 3, "IVF parallel mode out of range");
        if (auto ivfpq = dynamic_cast<const faiss::IndexIVFPQ*>(idx)) {
            check_pq(ivfpq->pq, ivfpq->d, ivfpq->code_size);
        }
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
        check(ip_or_l2, "HNSW metric is neither inner product nor L2");
        const faiss::HNSW& g = h->hnsw;
        check(g.efSearch >= 1 && g.efSearch <= kMaxEf, "HNSW efSearch out of range");
        check(g.efConstruction >= 1 && g.efConstruction <= kMaxEf,
              "HNSW efConstruction out of range");
        check(upper_beam_ok(g), "HNSW upper beam out of range");
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

// precompute rebuilds what reading skipped (IO_FLAG_SKIP_PRECOMPUTE_TABLE):
// an IVFPQ index's precomputed tables, which FAISS would otherwise compute
// from the file's product quantizer before anyone has checked its shape.
void precompute(faiss::Index* idx) {
    if (auto p = dynamic_cast<faiss::IndexPreTransform*>(idx)) {
        precompute(p->index);
    } else if (auto m = dynamic_cast<faiss::IndexIDMap*>(idx)) {
        precompute(m->index);
    } else if (auto ivfpq = dynamic_cast<faiss::IndexIVFPQ*>(idx)) {
        if (ivfpq->is_trained && ivfpq->by_residual) {
            ivfpq->precompute_table();
        }
    }
}

// read reads one index from r under a memory budget of input_bytes and
// checks it.
msrag_index* read(BoundedReader& r, size_t input_bytes) {
    std::unique_ptr<faiss::Index> owned;
    {
        msrag::ReadBudget budget(input_bytes);
        owned.reset(faiss::read_index(&r, faiss::IO_FLAG_SKIP_PRECOMPUTE_TABLE));
    }
    validate(owned.get());
    precompute(owned.get());
    if (r.remaining != 0) {
        throw faiss::FaissException(
                "corrupt index: " + std::to_string(r.remaining) + " bytes left after the index");
    }
    auto* out = new msrag_index(owned.get());
    owned.release();
    return out;
}

// lanes is how many running sums pair_score keeps.
constexpr size_t lanes = 8;

// pair_score is the inner product (IP) or squared L2 distance of x and y
// in one fixed order of operations: sum j of eight running sums takes the
// elements i with i % 8 == j, in order of i, each product (or squared
// difference) rounded to float before it is added, and the sums are added
// as ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)). The compiler may run the eight
// sums side by side in vector registers, which changes no rounding; the
// pragmas around it keep it from fusing a multiply and an add (which GCC
// does by default, even in ISO mode, wherever the target has FMA).
// So a pair gets the same bits from every build of the shim, whatever FAISS
// release and SIMD level it links: FAISS's own per-pair kernels round
// differently from one to the other in the last bit.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
template <bool IP>
float pair_term(float a, float b) {
    if constexpr (IP) {
        return a * b;
    } else {
        return (a - b) * (a - b);
    }
}

template <bool IP>
float pair_score(const float* x, const float* y, size_t d) {
    float s[lanes] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + lanes <= d; i += lanes) {
        for (size_t j = 0; j < lanes; j++) {
            s[j] += pair_term<IP>(x[i + j], y[i + j]);
        }
    }
    for (size_t j = 0; i < d; i++, j++) {
        s[j] += pair_term<IP>(x[i], y[i]);
    }
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#if defined(__clang__)
#pragma clang fp contract(on)
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif

// rescore scores every (query, label) pair of a flat index on its own
// (pair_score), so that a pair's score depends on its two vectors only.
// The labels are scattered over the index: the vector of the pair a few
// places ahead is prefetched while one is scored.
void rescore(const faiss::IndexFlat& flat, int64_t n, const float* x, int64_t k,
             const int64_t* labels, float* distances) {
    const float* xb = flat.get_xb();
    const size_t d = flat.d;
    const bool ip = flat.metric_type == faiss::METRIC_INNER_PRODUCT;
    const int64_t ntotal = flat.ntotal;
    const int64_t total = n * k;
    constexpr int64_t ahead = 4;
    const size_t lines = (d * sizeof(float) + 63) / 64;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; i++) {
        if (i + ahead < total) {
            const int64_t p = labels[i + ahead];
            if (p >= 0 && p < ntotal) {
                const char* y = reinterpret_cast<const char*>(xb + size_t(p) * d);
                for (size_t c = 0; c < lines; c++) {
                    __builtin_prefetch(y + 64 * c);
                }
            }
        }
        const int64_t l = labels[i];
        float v = 0;
        if (l >= 0 && l < ntotal) {
            const float* xq = x + (i / k) * d;
            const float* y = xb + size_t(l) * d;
            v = ip ? pair_score<true>(xq, y, d) : pair_score<false>(xq, y, d);
        }
        distances[i] = v;
    }
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

char* msrag_index_write_stream(const msrag_index* idx, uintptr_t handle) {
    return msrag::guard([&] {
        GoWriter w(handle);
        faiss::write_index(idx->index, &w);
    });
}

char* msrag_index_read_stream(uintptr_t handle, size_t len, msrag_index** out) {
    *out = nullptr;
    return msrag::guard([&] {
        GoReader r(handle, len);
        *out = read(r, len);
    });
}

int msrag_index_is_flat(const msrag_index* idx) {
    return dynamic_cast<const faiss::IndexFlat*>(idx->index) != nullptr ? 1 : 0;
}

char* msrag_index_rescore(const msrag_index* idx, int64_t n, const float* x, int64_t k,
                          const int64_t* labels, float* distances) {
    return msrag::guard([&] {
        auto* flat = dynamic_cast<const faiss::IndexFlat*>(idx->index);
        if (flat == nullptr) {
            throw faiss::FaissException("rescoring needs a flat index");
        }
        rescore(*flat, n, x, k, labels, distances);
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

char* msrag_faiss_compile_options(void) {
    try {
        return strdup(faiss::get_compile_options().c_str());
    } catch (...) {
        return NULL;
    }
}

}  // extern "C"
