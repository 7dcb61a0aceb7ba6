// edgert_run must not allocate. What this verifies, honestly:
//  - This test binary replaces the C allocator entry points (malloc, calloc, realloc,
//    posix_memalign, aligned_alloc, memalign, valloc, pvalloc), forwarding to glibc's
//    __libc_* implementations, and counts calls made while a counter is armed. The
//    replacements live in the executable, so they also catch allocations made by libc and
//    by libstdc++'s operator new (which calls malloc).
//  - A control check proves the counter sees allocations (plain malloc, operator new, and
//    the runtime's own in edgert_context_create); then edgert_bind_* and many edgert_run
//    calls, successful and NOT_BOUND ones, must count zero.
//  - Not covered: raw mmap/brk system calls (edgert_run makes none: it calls kernels,
//    memmove and clock_gettime only).
// glibc only (the __libc_* entry points). Under sanitizers, or under valgrind (which
// swaps in its own allocator, so the counter sees nothing), the test says so and skips.
#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "runtime_test_util.h"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define EDGE_COUNT_ALLOCATIONS 1

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
inline void note_allocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
void __libc_free(void* ptr);

void* malloc(size_t size) {
  note_allocation();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, size_t size) {
  note_allocation();
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
void* memalign(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  note_allocation();
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(alignment, size);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* valloc(size_t size) {
  note_allocation();
  return __libc_valloc(size);
}
void* pvalloc(size_t size) {
  note_allocation();
  return __libc_pvalloc(size);
}
}  // extern "C"

namespace {
// Counts allocations between construction and count().
struct AllocationCounter {
  AllocationCounter() {
    g_allocations = 0;
    g_counting = true;
  }
  ~AllocationCounter() { g_counting = false; }
  long count() {
    g_counting = false;
    return g_allocations.load();
  }
};
}  // namespace
#endif  // glibc

using namespace rt_test;

#if defined(EDGE_COUNT_ALLOCATIONS)
namespace {
// False where another allocator took over the entry points (valgrind): the counter would
// then read zero whatever happens, so the no-allocation check would prove nothing.
bool counter_works() {
  void* (*volatile m)(size_t) = std::malloc;  // volatile: the call cannot be elided
  AllocationCounter counter;
  std::free(m(16));
  if (counter.count() == 1) return true;
  MESSAGE("allocation counter not effective here (valgrind?): skipping");
  return false;
}
}  // namespace

TEST_CASE("alloc: the counter sees malloc, new and the runtime's own allocations") {
  if (!counter_works()) return;
  {
    void* (*volatile m)(size_t) = std::malloc;  // volatile: the call cannot be elided
    AllocationCounter counter;
    std::free(m(16));
    CHECK(counter.count() == 1);
  }
  {
    void* (*volatile n)(size_t) = static_cast<void* (*)(size_t)>(&::operator new);
    AllocationCounter counter;
    ::operator delete(n(16));
    CHECK(counter.count() == 1);
  }
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  edgert_context* ctx = nullptr;
  {
    AllocationCounter counter;
    REQUIRE(edgert_context_create(o.bundle, nullptr, &ctx) == EDGERT_OK);
    CHECK(counter.count() >= 5);  // context, arena, ops, arg table, timestamps, ...
  }
  edgert_context_destroy(ctx);
}

namespace {
long allocations_during_runs(const BundleDesc& d) {
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  edgert_context* ctx = nullptr;
  REQUIRE(edgert_context_create(o.bundle, nullptr, &ctx) == EDGERT_OK);
  alignas(64) float x[4] = {1, 2, 3, 4}, y[4] = {}, w[4] = {};
  long count = 0;
  {
    AllocationCounter counter;
    // NOT_BOUND (formats an error message) must not allocate either.
    CHECK(edgert_run(ctx) == EDGERT_ERROR_NOT_BOUND);
    REQUIRE(edgert_bind_input(ctx, 0, x, 16) == EDGERT_OK);
    REQUIRE(edgert_bind_output(ctx, 0, y, 16) == EDGERT_OK);
    REQUIRE(edgert_bind_output(ctx, 1, w, 16) == EDGERT_OK);
    for (int i = 0; i < 50; ++i) CHECK(edgert_run(ctx) == EDGERT_OK);
    count = counter.count();
  }
  CHECK(y[3] != 0.0f);  // the runs did run
  edgert_context_destroy(ctx);
  return count;
}
}  // namespace

TEST_CASE("alloc: edgert_run and edgert_bind_* make no heap allocation") {
  if (!counter_works()) return;
  CHECK(allocations_during_runs(copy_bundle()) == 0);
#if defined(EDGE_TEST_HAS_KERNELS)
  CHECK(allocations_during_runs(add_bundle()) == 0);
#endif
}
#endif
