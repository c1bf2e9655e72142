// A memory budget for reading untrusted index data.
//
// FAISS reads a length from its input and resizes a vector to it before it
// reads the data, so a corrupt or truncated file can make it allocate, and
// zero, gigabytes before it notices the input is short (array inverted
// lists, product quantizer centroids, ...). There is no way to check every
// such length from outside, so while an index is being read on a thread,
// the replacement operator new below charges every C++ allocation made by
// that thread to a budget and throws once it is spent. The budget is set
// from the size of the input (see msrag::ReadBudget in shim_internal.h).
//
// Outside a read the replacements cost one thread-local load and then call
// malloc, like the library's own operator new; delete calls free, so memory
// from either can be released by the other.

#include "shim_internal.h"

#include <cstdlib>
#include <new>

namespace {

thread_local msrag::ReadBudget* t_budget = nullptr;

void charge(std::size_t n) {
    msrag::ReadBudget* b = t_budget;
    if (b == nullptr) {
        return;
    }
    if (n > b->left) {
        b->exceeded = true;
        throw msrag::BudgetExceeded();
    }
    b->left -= n;
}

void* alloc(std::size_t n) {
    charge(n);
    if (n == 0) {
        n = 1;
    }
    for (;;) {
        void* p = std::malloc(n);
        if (p != nullptr) {
            return p;
        }
        std::new_handler h = std::get_new_handler();
        if (h == nullptr) {
            throw std::bad_alloc();
        }
        h();
    }
}

void* alloc_aligned(std::size_t n, std::align_val_t al) {
    charge(n);
    std::size_t a = static_cast<std::size_t>(al);
    if (a < sizeof(void*)) {
        a = sizeof(void*);
    }
    for (;;) {
        void* p = nullptr;
        if (posix_memalign(&p, a, n == 0 ? 1 : n) == 0) {
            return p;
        }
        std::new_handler h = std::get_new_handler();
        if (h == nullptr) {
            throw std::bad_alloc();
        }
        h();
    }
}

}  // namespace

msrag::ReadBudget::ReadBudget(std::size_t input_bytes) {
    // Room for the index itself (a loaded index is about as large as its
    // serialised form, plus container overhead) and for small inputs. It
    // is kept tight because FAISS leaks what it allocated for a read that
    // fails; the large table it derives on load (IVF-PQ's precomputed
    // distances) is built after the read, outside the budget.
    const std::size_t fixed = std::size_t(16) << 20;
    left = input_bytes > (SIZE_MAX - fixed) / 4 ? SIZE_MAX : fixed + 4 * input_bytes;
    prev = t_budget;
    t_budget = this;
}

msrag::ReadBudget::~ReadBudget() {
    t_budget = prev;
}

const char* msrag::BudgetExceeded::what() const noexcept {
    return "corrupt index: its data asks for far more memory than its size allows";
}

void* operator new(std::size_t n) {
    return alloc(n);
}
void* operator new[](std::size_t n) {
    return alloc(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t al) {
    return alloc_aligned(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al) {
    return alloc_aligned(n, al);
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    try {
        return alloc_aligned(n, al);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
    try {
        return alloc_aligned(n, al);
    } catch (...) {
        return nullptr;
    }
}

void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    std::free(p);
}
