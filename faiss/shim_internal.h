// C++-only definitions shared by shim.cpp and gpu.cpp. Not part of the C
// interface (shim.h).
#ifndef MSRAG_FAISS_SHIM_INTERNAL_H
#define MSRAG_FAISS_SHIM_INTERNAL_H

#include <faiss/Index.h>

#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <memory>
#include <string>
#include <vector>

#include "shim.h"

// msrag_index owns one faiss::Index and whatever must outlive it (the GPU
// resources of a GPU index). The index is deleted before the keep-alives.
struct msrag_index {
    faiss::Index* index = nullptr;
    std::vector<std::shared_ptr<void>> keep;

    explicit msrag_index(faiss::Index* i) : index(i) {}
    ~msrag_index() {
        delete index;
        index = nullptr;
        keep.clear();
    }
    msrag_index(const msrag_index&) = delete;
    msrag_index& operator=(const msrag_index&) = delete;
};

namespace msrag {

// ReadBudget caps the C++ memory the current thread may allocate while it
// lives (budget.cpp): reading an index of input_bytes bytes may allocate
// 16 MiB plus four times that. Past it, operator new throws BudgetExceeded.
struct ReadBudget {
    explicit ReadBudget(std::size_t input_bytes);
    ~ReadBudget();
    ReadBudget(const ReadBudget&) = delete;
    ReadBudget& operator=(const ReadBudget&) = delete;

    std::size_t left = 0;
    bool exceeded = false;
    ReadBudget* prev = nullptr;
};

struct BudgetExceeded : std::bad_alloc {
    const char* what() const noexcept override;
};

// error_copy returns a malloc'ed copy of msg (never NULL: an error must not
// read as success).
inline char* error_copy(const char* msg) {
    size_t n = std::strlen(msg);
    char* s = static_cast<char*>(std::malloc(n + 1));
    if (s == nullptr) {
        s = static_cast<char*>(std::malloc(1));
        if (s == nullptr) {
            std::abort();  // no memory left for one byte
        }
        s[0] = 0;
        return s;
    }
    std::memcpy(s, msg, n + 1);
    return s;
}

// apply_threads sets this OS thread's OpenMP team size to the value chosen with
// msrag_set_threads. OpenMP keeps the team size per thread, and Go runs each
// native call on whichever OS thread is free, so it is set before every call.
void apply_threads();

// guard runs f and returns NULL, or the message of any exception it threw
// (malloc'ed, freed by the caller).
template <typename F>
char* guard(F&& f) {
    try {
        apply_threads();
        f();
        return nullptr;
    } catch (const std::exception& e) {
        return error_copy(e.what());
    } catch (...) {
        return error_copy("unknown C++ exception");
    }
}

}  // namespace msrag

#endif
